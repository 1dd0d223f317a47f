"""What each offered tool can do, read from its input schema (property names, required keys, the words of its
descriptions), never from its name: a server that calls its describe tool `k8s_get` gets the same investigation
as one that calls it `resources_get`.

A role is one thing the planner wants done (describe any object, list objects, read a pod's logs, list events,
...). `Toolbox.build` picks the best tool for each role and `Toolbox.call` fills that tool's own argument names.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, NamedTuple

from shared.investigations.rules.state import ToolCall, ToolSpec


class Role(StrEnum):
    """Things the planner asks for."""

    DESCRIBE = "describe"  # any object by kind + name (+ namespace)
    LIST = "list"  # objects of a kind, optionally by namespace and label selector
    POD_GET = "pod_get"  # one pod by name (+ namespace)
    POD_LIST = "pod_list"  # pods of a namespace, optionally by label selector
    POD_LOG = "pod_log"  # a pod's (container's) logs, optionally the previous run
    EVENTS = "events"  # events of a namespace
    NAMESPACES = "namespaces"  # the cluster's namespaces
    POD_TOP = "pod_top"  # pods' CPU/memory use
    NODE_TOP = "node_top"
    NODE_LOG = "node_log"  # a node's service logs (kubelet)
    METRICS_QUERY = "metrics_query"  # a PromQL (range) query
    TRACES = "traces"  # recent traces
    TRACE = "trace"  # one trace by id
    POD_LIST_ALL = "pod_list_all"  # pods of every namespace, by field (spec.nodeName) or label selector


class Slot(StrEnum):
    """Arguments the planner fills, whatever the tool calls them."""

    API_VERSION = "api_version"
    KIND = "kind"
    NAME = "name"
    NAMESPACE = "namespace"
    LABELS = "labels"
    FIELDS = "fields"
    CONTAINER = "container"
    PREVIOUS = "previous"
    QUERY = "query"
    TRACE_ID = "trace_id"
    ALL_NAMESPACES = "all_namespaces"


# Property names (lower-case, without `_`/`-`) that mean a slot.
_SLOT_NAMES: dict[Slot, tuple[str, ...]] = {
    Slot.API_VERSION: ("apiversion", "groupversion", "api"),
    Slot.KIND: ("kind", "resourcetype", "resource", "type", "resourcekind"),
    Slot.NAME: ("name", "resourcename", "podname", "pod", "objectname", "nodename", "node"),
    Slot.NAMESPACE: ("namespace", "ns", "namespacename"),
    Slot.LABELS: ("labelselector", "selector", "labels"),
    Slot.FIELDS: ("fieldselector",),
    Slot.CONTAINER: ("container", "containername"),
    Slot.PREVIOUS: ("previous", "prev", "previouscontainer"),
    Slot.QUERY: ("query", "promql", "expr", "expression"),
    Slot.TRACE_ID: ("traceid", "trace", "id"),
    Slot.ALL_NAMESPACES: ("allnamespaces",),
}


class Shape(NamedTuple):
    """A tool as the planner sees it: which property fills which slot, what is required, what it talks about."""

    spec: ToolSpec
    slots: dict[Slot, str]
    required: frozenset[str]
    words: frozenset[str]
    extra: frozenset[str]  # properties that fill no slot


def shape_of(spec: ToolSpec) -> Shape:
    """Read one tool's schema."""
    schema = spec.input_schema if isinstance(spec.input_schema, dict) else {}
    raw_props = schema.get("properties")
    props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    slots: dict[Slot, str] = {}
    extra: set[str] = set()
    text = [spec.description]
    for prop, body in list(props.items())[:64]:
        key = re.sub(r"[-_ ]", "", str(prop).lower())
        desc = str(body.get("description") or "") if isinstance(body, dict) else ""
        text.append(desc)
        slot = next((s for s, names in _SLOT_NAMES.items() if key in names and s not in slots), None)
        if slot is Slot.TRACE_ID and key == "id" and "trace" not in desc.lower():
            slot = None
        if slot is None:
            extra.add(str(prop))
        else:
            slots[slot] = str(prop)
    raw_required = schema.get("required")
    required: list[Any] = raw_required if isinstance(raw_required, list) else []
    words = frozenset(re.findall(r"[a-z]+", " ".join(text)[:4000].lower()))
    return Shape(spec, slots, frozenset(str(r) for r in required), words, frozenset(extra))


def _fits(shape: Shape, role: Role) -> int:
    """How well a tool fits a role: 0 = not at all, higher is better."""
    unfillable = {r for r in shape.required if r not in shape.slots.values()}
    if unfillable and role != Role.NODE_LOG:
        return 0
    if role in (Role.DESCRIBE, Role.LIST):
        return _generic_fit(shape, role)
    if Slot.KIND in shape.slots:
        return 0  # the generic tools above; the roles below are for tools of one kind
    return _FITS[role](shape, _Words(shape))


def _generic_fit(shape: Shape, role: Role) -> int:
    has, w = shape.slots.__contains__, shape.words
    if role is Role.DESCRIBE:
        return 10 + has(Slot.API_VERSION) if has(Slot.KIND) and has(Slot.NAME) and not _is_list(w) else 0
    return 10 + has(Slot.LABELS) if has(Slot.KIND) and not _requires(shape, Slot.NAME) and _is_list(w) else 0


class _Words:
    """What a tool's descriptions talk about."""

    def __init__(self, shape: Shape) -> None:
        w = shape.words
        self.logs, self.events = "logs" in w or "log" in w, "events" in w or "event" in w
        self.pods, self.nodes = "pod" in w or "pods" in w, "node" in w or "nodes" in w
        self.usage = (
            bool(w & {"consumption", "usage", "top", "utilization", "metrics"}) and Slot.QUERY not in shape.slots
        )
        self.listing = _is_list(w)
        self.words = w


def _fit_pod_log(sh: Shape, t: _Words) -> int:
    has = sh.slots.__contains__
    return 10 + has(Slot.PREVIOUS) + has(Slot.CONTAINER) if has(Slot.NAME) and t.logs and t.pods else 0


def _fit_node_log(sh: Shape, t: _Words) -> int:
    ok = Slot.NAME in sh.slots and Slot.QUERY in sh.slots and t.logs and t.nodes and not t.pods
    return 10 if ok else 0


def _fit_pod_get(sh: Shape, t: _Words) -> int:
    plain = not (t.logs or t.usage or t.events) and Slot.PREVIOUS not in sh.slots
    ok = Slot.NAME in sh.slots and t.pods and plain and not t.listing
    return 10 + (Slot.NAMESPACE in sh.slots) if ok else 0


def _fit_pod_list(sh: Shape, t: _Words) -> int:
    ok = Slot.NAMESPACE in sh.slots and t.pods and not (t.logs or t.usage or t.events) and t.listing
    return 10 + (Slot.LABELS in sh.slots) if ok else 0


def _fit_pod_list_all(sh: Shape, t: _Words) -> int:
    ok = t.pods and t.listing and not (t.logs or t.usage or t.events) and Slot.NAMESPACE not in sh.slots
    return 10 + (Slot.FIELDS in sh.slots) if ok and (Slot.FIELDS in sh.slots or Slot.LABELS in sh.slots) else 0


def _fit_events(sh: Shape, t: _Words) -> int:
    return 10 + (Slot.NAMESPACE in sh.slots) if t.events and Slot.NAME not in sh.slots and not t.logs else 0


def _fit_namespaces(sh: Shape, t: _Words) -> int:
    only = "namespaces" in t.words and not (t.pods or t.events or t.logs) and Slot.NAMESPACE not in sh.slots
    return 10 if only and t.listing else 0


def _fit_pod_top(sh: Shape, t: _Words) -> int:
    scoped = Slot.NAMESPACE in sh.slots or Slot.ALL_NAMESPACES in sh.slots
    return 10 if t.usage and t.pods and scoped else 0


def _fit_node_top(sh: Shape, t: _Words) -> int:
    return 10 if t.usage and t.nodes and not t.pods else 0


def _fit_metrics(sh: Shape, t: _Words) -> int:
    prom = bool(t.words & {"prometheus", "promql"})
    return 10 + ("range" in t.words) if Slot.QUERY in sh.slots and prom else 0


def _fit_traces(sh: Shape, t: _Words) -> int:
    return 10 if "traces" in t.words and Slot.TRACE_ID not in sh.slots else 0


def _fit_trace(sh: Shape, t: _Words) -> int:
    return 10 if Slot.TRACE_ID in sh.slots and "trace" in t.words else 0


_FITS = {
    Role.POD_LOG: _fit_pod_log,
    Role.NODE_LOG: _fit_node_log,
    Role.POD_GET: _fit_pod_get,
    Role.POD_LIST: _fit_pod_list,
    Role.EVENTS: _fit_events,
    Role.NAMESPACES: _fit_namespaces,
    Role.POD_TOP: _fit_pod_top,
    Role.NODE_TOP: _fit_node_top,
    Role.METRICS_QUERY: _fit_metrics,
    Role.TRACES: _fit_traces,
    Role.TRACE: _fit_trace,
    Role.POD_LIST_ALL: _fit_pod_list_all,
}


def _is_list(words: frozenset[str]) -> bool:
    return bool(words & {"list", "lists", "listing"})


def _requires(shape: Shape, slot: Slot) -> bool:
    return shape.slots.get(slot) in shape.required


class Toolbox:
    """The best offered tool for each role, and calls in that tool's own terms."""

    def __init__(self, tools: list[ToolSpec]) -> None:
        shapes = [shape_of(t) for t in tools]
        self.by_role: dict[Role, Shape] = {}
        for role in Role:
            # Best fit wins; among equals the first offered (a stable, server-given order).
            best = max(shapes, key=lambda sh, r=role: _fits(sh, r), default=None)  # type: ignore[misc]
            if best is not None and _fits(best, role) > 0:
                self.by_role[role] = best

    def has(self, role: Role) -> bool:
        """Is there a tool for this role?"""
        return role in self.by_role

    def call(self, role: Role, reason: str, **values: Any) -> ToolCall | None:
        """A call of the role's tool with the given slot values (names as `Slot` values); None when the tool
        lacks a slot that was given a value it needs, or a required argument stays empty."""
        shape = self.by_role.get(role)
        if shape is None:
            return None
        args: dict[str, Any] = {}
        for slot_name, value in values.items():
            if value is None or value == "":
                continue
            prop = shape.slots.get(Slot(slot_name))
            if prop is None:
                if slot_name in (Slot.NAMESPACE.value, Slot.KIND.value, Slot.NAME.value):
                    return None  # without it the call would ask for something else
                continue
            args[prop] = value
        if any(r not in args for r in shape.required):
            return None
        return ToolCall(tool=shape.spec.name, args=args, reason=reason)

    def role_of(self, tool: str) -> Role | None:
        """The role a tool was chosen for (the first, when one tool serves several)."""
        return next((r for r, sh in self.by_role.items() if sh.spec.name == tool), None)

    def roles_of(self, tool: str) -> set[Role]:
        """Every role a tool was chosen for."""
        return {r for r, sh in self.by_role.items() if sh.spec.name == tool}
