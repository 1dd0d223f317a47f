"""The objects one object's output points at (what an engineer follows next), in the planner's terms.

The reading is object_state's (`read_object(...).refs`: HPA -> scale target, workload -> selected pods and newest
ReplicaSet, pod -> owner, node, claims, ConfigMaps, Secrets; ingress -> services, class, TLS secret; service ->
its pods; claim -> storage class and volume; job -> CronJob; namespace stuck terminating -> what remains); this
module adds the objects controllers' messages name (`exceeded quota: q`, `configmap "x" not found`) and turns both
into `ObjRef`s with the relation that says how they were found.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from shared.investigations.rules.memo import remembered
from shared.investigations.rules.object_state import read_object
from shared.investigations.rules.objects import ObjRef, kind_of, ref

_MAX_SCAN = 256_000


class Link(NamedTuple):
    """One reference: the object and how the output names it (`owner`, `scale target`, `volume data`, ...)."""

    obj: ObjRef
    relation: str


class Refs(NamedTuple):
    """What an object's output points at: objects to describe, and a pod label selector to list pods by."""

    links: list[Link]
    selector: str | None

    @property
    def objects(self) -> list[ObjRef]:
        return [link.obj for link in self.links]


# Objects that controllers' messages name: `exceeded quota: q`, `configmap "x" not found`, `persistentvolumeclaim "x"`.
_MESSAGE_REF = re.compile(
    r"exceeded quota: ([a-z0-9][-a-z0-9.]*)|"
    r"\b(configmap|secret|persistentvolumeclaim|serviceaccount|service|storageclass)s? \\?\"([a-z0-9][-a-z0-9.]*)\\?\""
)


_SERVICE_URL = re.compile(r"https?://([a-z0-9][-a-z0-9]{0,62})\.([a-z0-9][-a-z0-9]{0,62})\.svc\b")

# A StatefulSet's governing (headless) Service gives its pods their DNS names.
_SERVICE_NAME = re.compile(r"^[ \t]*\"?serviceName\"?:[ \t]*\"?([a-z0-9][-a-z0-9]*)")


def _message_refs(line: str, namespace: str | None) -> list[tuple[str, str, str | None]]:
    """(kind, name, namespace) of what one message line names: a cluster URL (a webhook's) names its Service and
    that Service's namespace; `configmap "x" not found` names x in the object's own namespace."""
    urls = [(u.group(1), u.group(2)) for u in _SERVICE_URL.finditer(line)]
    found: list[tuple[str, str, str | None]] = [("Service", name, ns) for name, ns in urls]
    for m in _MESSAGE_REF.finditer(line):
        named = "ResourceQuota" if m.group(1) else (m.group(2) or "")
        if named == "service" and any(name == m.group(3) for name, _ in urls):
            continue  # the URL says which namespace
        found.append((named, m.group(1) or m.group(3) or "", namespace))
    return found


def references(text: str, obj: ObjRef) -> Refs:
    """The objects `obj`'s output names, in the order they are worth following (remembered by text: the walk
    asks again at every iteration)."""
    found = _references(text, obj)
    return Refs(list(found.links), found.selector)


@remembered
def _references(text: str, obj: ObjRef) -> Refs:
    text = text[:_MAX_SCAN]
    view = read_object(text, obj.kind)
    links: list[Link] = []
    selector: str | None = None

    def add(kind: str, name: str, namespace: str | None, relation: str) -> None:
        r = ref(kind, name, namespace)
        if r is not None and r != obj and r not in [link.obj for link in links]:
            links.append(Link(r, relation))

    for r in view.refs:
        if r.selector and r.kind == "Pod" and not r.name:
            selector = selector or r.selector
        elif r.name:
            add(r.kind, r.name, r.namespace if r.namespace is not None else obj.namespace, r.relation)
        elif r.resource:
            remaining = kind_of(r.kind or r.resource.split(".")[0])
            if remaining is not None:
                links.append(Link(ObjRef(remaining.name, "*", None), r.relation or "remaining"))
    for line in text.splitlines():
        governing = _SERVICE_NAME.match(line) if obj.kind == "StatefulSet" else None
        if governing:
            add("Service", governing.group(1), obj.namespace, "governing service (serviceName)")
        # Both message patterns need a quote, a cluster URL or a quota: most lines of a large output have none.
        if '"' in line or ".svc" in line or "quota" in line:
            for kind, name, namespace in _message_refs(line, obj.namespace):
                add(kind, name, namespace, "named in a message")
    return Refs(links, selector)
