"""What each offered tool can do, read from its input schema (property names, required keys, the words of its
descriptions), never from its name: a server that calls its describe tool `k8s_get` gets the same investigation
as one that calls it `resources_get`.

A role is one thing the planner wants done (describe any object, list objects, read a pod's logs, list events,
...). `Toolbox.build` picks the best tool for each role and `Toolbox.call` fills that tool's own argument names.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, NamedTuple

from shared.investigations.rules.state import ToolCall, ToolSpec


class Role(str, Enum):
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


class Slot(str, Enum):
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
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
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
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    words = frozenset(re.findall(r"[a-z]+", " ".join(text)[:4000].lower()))
    return Shape(spec, slots, frozenset(str(r) for r in required), words, frozenset(extra))


def _fits(shape: Shape, role: Role) -> int:
    """How well a tool fits a role: 0 = not at all, higher is better."""
    s, w = shape.slots, shape.words
    unfillable = {r for r in shape.required if r not in s.values()}
    if unfillable and role not in (Role.NODE_LOG,):
        return 0
    has = s.__contains__
    if role is Role.DESCRIBE:
        return 10 + has(Slot.API_VERSION) if has(Slot.KIND) and has(Slot.NAME) and not _is_list(w) else 0
    if role is Role.LIST:
        return 10 + has(Slot.LABELS) if has(Slot.KIND) and not _requires(shape, Slot.NAME) and _is_list(w) else 0
    if has(Slot.KIND):
        return 0  # the generic tools above; the roles below are for tools of one kind
    logs, events = "logs" in w or "log" in w, "events" in w or "event" in w
    pods, nodes = "pod" in w or "pods" in w, "node" in w or "nodes" in w
    usage = bool(w & {"consumption", "usage", "top", "utilization", "metrics"}) and not has(Slot.QUERY)
    if role is Role.POD_LOG:
        return 10 + has(Slot.PREVIOUS) + has(Slot.CONTAINER) if has(Slot.NAME) and logs and pods else 0
    if role is Role.NODE_LOG:
        return 10 if has(Slot.NAME) and logs and nodes and not pods and has(Slot.QUERY) else 0
    if role is Role.POD_GET:
        plain = not (logs or usage or events) and not has(Slot.PREVIOUS)
        return 10 + has(Slot.NAMESPACE) if has(Slot.NAME) and pods and plain and not _is_list(w) else 0
    if role is Role.POD_LIST:
        plain = not (logs or usage or events)
        return 10 + has(Slot.LABELS) if has(Slot.NAMESPACE) and pods and plain and _is_list(w) else 0
    if role is Role.EVENTS:
        return 10 + has(Slot.NAMESPACE) if events and not has(Slot.NAME) and not logs else 0
    if role is Role.NAMESPACES:
        only_ns = "namespaces" in w and not (pods or events or logs) and not has(Slot.NAMESPACE)
        return 10 if only_ns and _is_list(w) else 0
    if role is Role.POD_TOP:
        return 10 if usage and pods and (has(Slot.NAMESPACE) or has(Slot.ALL_NAMESPACES)) else 0
    if role is Role.NODE_TOP:
        return 10 if usage and nodes and not pods else 0
    if role is Role.METRICS_QUERY:
        prom = bool(w & {"prometheus", "promql"})
        return 10 + ("range" in w) if has(Slot.QUERY) and prom else 0
    if role is Role.TRACES:
        return 10 if "traces" in w and not has(Slot.TRACE_ID) else 0
    if role is Role.TRACE:
        return 10 if has(Slot.TRACE_ID) and "trace" in w else 0
    return 0


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
