"""The objects one object's output points at (what an engineer follows next), in `kubectl describe` text or YAML.

HPA -> its scale target; a workload -> its pods' label selector and newest ReplicaSet; a pod -> its owner, node,
claims, ConfigMaps and Secrets; an ingress -> its backend services; a service -> its selector; a claim -> its
storage class and volume; a job -> its CronJob; a CronJob -> its active jobs; a namespace stuck terminating ->
the kinds that remain. Line by line, linear regexes only: outputs are outside text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from shared.investigations.rules.objects import ObjRef, kind_of, ref

_MAX_SCAN = 256_000


class Refs(NamedTuple):
    """What an object's output points at: objects to describe, and a pod label selector to list pods by."""

    objects: list[ObjRef]
    selector: str | None


_KIND_SLASH = re.compile(r"^([A-Za-z]+)/([a-z0-9][-a-z0-9_.]*)$")
# describe keys whose value is `Kind/name` or a bare name of a known kind.
_DESCRIBE_KEYS: dict[str, str | None] = {
    "Reference": None,  # HPA: `Deployment/web`
    "Controlled By": None,  # `ReplicaSet/web-5d9f7`
    "Node": "Node",  # `node-1/10.0.0.1`
    "ClaimName": "PersistentVolumeClaim",
    "StorageClass": "StorageClass",
    "Volume": "PersistentVolume",
    "NewReplicaSet": "ReplicaSet",
    "Service Account": "ServiceAccount",
    "Ingress Class": "IngressClass",
    "IngressClass": "IngressClass",
    "SecretName": "Secret",
    "Secret Name": "Secret",
    "Used By": "Pod",
}
_DESCRIBE_LINE = re.compile(r"^[ \t]*([A-Z][A-Za-z ]{1,30}):[ \t]+(\S.*)$")
_YAML_LINE = re.compile(r"^[ \t]*-?[ \t]*([a-zA-Z]+):[ \t]*['\"]?([^'\"#]*?)['\"]?[ \t]*$")
_BACKEND = re.compile(r"(?<![\w.-])([a-z0-9][-a-z0-9]*):(\d+|[a-z][-a-z0-9]*) \(")
_REMAINING = re.compile(r"(?<![\w.])([a-z0-9][-a-z0-9]*)(?:\.([a-z0-9][-a-z0-9.]*))? has \d+ resource instances")
_ACTIVE_JOBS = re.compile(r"^Active Jobs:[ \t]+(\S.*)$")
# Objects that controllers' messages name: `exceeded quota: q`, `configmap "x" not found`, `persistentvolumeclaim "x"`.
_MESSAGE_REF = re.compile(
    r"exceeded quota: ([a-z0-9][-a-z0-9.]*)|"
    r"\b(configmap|secret|persistentvolumeclaim|serviceaccount|service|storageclass)s? \\?\"([a-z0-9][-a-z0-9.]*)\\?\""
)
_CM_OR_SECRET = re.compile(r"^[ \t]*(?:Type:[ \t]+)?(ConfigMap|Secret)\b.*$")


def references(text: str, obj: ObjRef) -> Refs:
    """The objects `obj`'s output (describe text or YAML) names, in the order they are worth following."""
    text = text[:_MAX_SCAN]
    ns = obj.namespace
    found: list[ObjRef] = []
    selector: str | None = None

    def add(kind: str, name: str, namespace: str | None = ns) -> None:
        r = ref(kind, name, namespace)
        if r is not None and r != obj and r not in found:
            found.append(r)

    lines = text.splitlines()
    pending_volume: str | None = None
    yaml_kind_context: str | None = None
    for i, line in enumerate(lines):
        d = _DESCRIBE_LINE.match(line)
        if d:
            key, value = d.group(1).strip(), d.group(2).strip()
            if key == "Selector" and "=" in value and obj.kind != "Pod" and selector is None:
                selector = value.split(" ")[0]
            elif key in _DESCRIBE_KEYS and value not in ("<none>", "<unset>", "<unknown>"):
                target = _DESCRIBE_KEYS[key]
                if target is None:
                    m = _KIND_SLASH.match(value.split(" ")[0])
                    if m:
                        add(m.group(1), m.group(2))
                elif target == "Node":
                    add("Node", value.split("/")[0])
                elif not (target == "PersistentVolume" and obj.kind != "PersistentVolumeClaim"):
                    add(target, value.split(" ")[0].split(",")[0])
            elif key == "Name" and pending_volume:
                add(pending_volume, value.split(" ")[0])
                pending_volume = None
            elif key == "Type":
                cm = _CM_OR_SECRET.match(line)
                pending_volume = cm.group(1) if cm and cm.group(1) == "ConfigMap" else None
            elif key == "Claim" and obj.kind == "PersistentVolume":
                claim = value.split("/")
                add("PersistentVolumeClaim", claim[-1], claim[0] if len(claim) == 2 else ns)
        if obj.kind == "Ingress":
            for m in _BACKEND.finditer(line):
                add("Service", m.group(1))
        if obj.kind == "Namespace":
            for m in _REMAINING.finditer(line):
                plural = m.group(1)
                kind = kind_of(plural)
                if kind is not None:
                    found.append(ObjRef(kind.name, "*", None))
        if obj.kind == "CronJob":
            a = _ACTIVE_JOBS.match(line)
            if a:
                for name in a.group(1).split(","):
                    add("Job", name.strip())
        for m in _MESSAGE_REF.finditer(line):
            kind = "ResourceQuota" if m.group(1) else (m.group(2) or "")
            add(kind, m.group(1) or m.group(3) or "")
        y = _YAML_LINE.match(line)
        if y and not d:
            selector = _yaml_line(y.group(1), y.group(2).strip(), lines, i, obj, add, selector)
            if y.group(1) == "kind":
                yaml_kind_context = y.group(2).strip()
    _ = yaml_kind_context
    return Refs(found, selector)


def _yaml_line(key: str, value: str, lines: list[str], i: int, obj: ObjRef, add, selector: str | None) -> str | None:  # type: ignore[no-untyped-def]
    """One `key: value` of a YAML object: scaleTargetRef, ownerReferences, claimName, nodeName, selector..."""
    if key == "nodeName" and value:
        add("Node", value)
    elif key == "claimName" and value:
        add("PersistentVolumeClaim", value)
    elif key == "storageClassName" and value:
        add("StorageClass", value)
    elif key == "volumeName" and value and obj.kind == "PersistentVolumeClaim":
        add("PersistentVolume", value)
    elif key == "ingressClassName" and value:
        add("IngressClass", value)
    elif key in ("kind",) and value and i + 1 < len(lines):
        # scaleTargetRef / ownerReferences: `kind: X` next to `name: y` (either order, within 3 lines).
        near = lines[max(0, i - 3) : i + 4]
        context = " ".join(near)
        if "scaleTargetRef" in " ".join(lines[max(0, i - 4) : i]) or "ownerReferences" in " ".join(
            lines[max(0, i - 6) : i]
        ) or "controller: true" in context:
            name = next((_YAML_LINE.match(n).group(2) for n in near if _YAML_LINE.match(n) and _YAML_LINE.match(n).group(1) == "name"), "")  # type: ignore[union-attr]
            if name:
                add(value, name.strip())
    elif key == "name" and i > 0 and "service:" in lines[i - 1] and obj.kind == "Ingress":
        add("Service", value)
    elif key == "matchLabels" and selector is None and obj.kind != "Pod":
        pairs: list[str] = []
        indent = len(lines[i]) - len(lines[i].lstrip())
        for nxt in lines[i + 1 : i + 12]:
            if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                break
            m = _YAML_LINE.match(nxt)
            if m:
                pairs.append(f"{m.group(1)}={m.group(2).strip()}")
        if pairs:
            return ",".join(pairs)
    return selector
