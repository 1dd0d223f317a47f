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

from shared.investigations.rules import kubectl_command
from shared.investigations.rules.memo import per_evaluation
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
    CONTEXT = "context"  # a kubeconfig context: "" is the current one
    TARGET = "target"  # `kind/name` in one argument
    NS_NAME = "ns_name"  # `namespace/name` in one argument
    COMMAND = "command"  # a kubectl command line


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
    Slot.CONTEXT: ("context", "kubecontext", "kubeconfigcontext"),
}


class Shape(NamedTuple):
    """A tool as the planner sees it: which property fills which slot, what is required, what it talks about."""

    spec: ToolSpec
    slots: dict[Slot, str]
    required: frozenset[str]
    words: frozenset[str]
    extra: frozenset[str]  # properties that fill no slot
    enums: dict[str, tuple[str, ...]] | None = None  # a property's allowed values (a kind's resource names)
    command_prefix: bool = True  # a command argument starts with `kubectl`


# A property whose description asks for two names in one: `TYPE/NAME`, `kind/name`, `namespace/pod`.
_TARGET_DESC = re.compile(r"(?i)\b(?:type|kind|resource(?:[ _]?type)?)\s?/\s?name\b|<(?:type|kind)>/<name>")
_NS_NAME_DESC = re.compile(r"(?i)\bnamespace\s?/\s?(?:pod|name)\b|<namespace>/<(?:pod|name)>")
_COMMAND_KEYS = ("command", "cmd", "kubectlcommand", "commandline", "kubectl")


def _composite(key: str, desc: str) -> Slot | None:
    """A slot read from what a property says it takes rather than its name."""
    if key in _COMMAND_KEYS or (key in ("args", "arguments") and "kubectl" in desc.lower()):
        return Slot.COMMAND
    if _NS_NAME_DESC.search(desc):
        return Slot.NS_NAME
    if _TARGET_DESC.search(desc):
        return Slot.TARGET
    return None


def shape_of(spec: ToolSpec) -> Shape:
    """Read one tool's schema."""
    schema = spec.input_schema if isinstance(spec.input_schema, dict) else {}
    raw_props = schema.get("properties")
    props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    slots: dict[Slot, str] = {}
    extra: set[str] = set()
    enums: dict[str, tuple[str, ...]] = {}
    prefix = True
    text = [spec.description]
    for prop, body in list(props.items())[:64]:
        key = re.sub(r"[-_ ]", "", str(prop).lower())
        desc = str(body.get("description") or "") if isinstance(body, dict) else ""
        text.append(desc)
        if isinstance(body, dict) and isinstance(body.get("enum"), list):
            enums[str(prop)] = tuple(str(v) for v in body["enum"][:200])
        slot = _composite(key, desc)
        if slot is not None and slot in slots:
            slot = None
        if slot is Slot.COMMAND:
            # "the kubectl command without 'kubectl'", or examples that start with the verb
            prefix = not re.search(
                r"(?i)without (?:the )?['\"`]?kubectl|omit(?:ting)? ['\"`]?kubectl|e\.g\. ['\"`]?get ", desc
            )
        slot = slot or next((s for s, names in _SLOT_NAMES.items() if key in names and s not in slots), None)
        if slot is Slot.TRACE_ID and key == "id" and "trace" not in desc.lower():
            slot = None
        if slot is None:
            extra.add(str(prop))
        else:
            slots[slot] = str(prop)
    if Slot.COMMAND in slots and {Slot.KIND, Slot.NAME, Slot.TARGET} & slots.keys():
        # `command` beside a resource type and a name is a verb (`top`, `rollout`), not a command line.
        extra.add(slots.pop(Slot.COMMAND))
    raw_required = schema.get("required")
    required: list[Any] = raw_required if isinstance(raw_required, list) else []
    words = frozenset(re.findall(r"[a-z]+", " ".join(text)[:4000].lower()))
    return Shape(spec, slots, frozenset(str(r) for r in required), words, frozenset(extra), enums, prefix)


def _fits(shape: Shape, role: Role, t: _Words | None = None) -> int:
    """How well a tool fits a role: 0 = not at all, higher is better."""
    fit = _fit(shape, role, t or _Words(shape))
    if fit and _requires(shape, Slot.CONTEXT):
        # It asks for a kubeconfig context: "" (the current one) is what kubectl uses without one; any tool that
        # does not ask is preferred.
        return max(1, fit - 7)
    return fit


def _fit(shape: Shape, role: Role, t: _Words) -> int:
    unfillable = {r for r in shape.required if r not in shape.slots.values()}
    if unfillable and role != Role.NODE_LOG:
        return 0
    if Slot.COMMAND in shape.slots:
        # One tool that runs kubectl: it can do every Kubernetes read, less well than a tool made for it.
        return 5 if role in _KUBECTL_ROLES and "kubectl" in shape.words else 0
    if role is Role.EVENTS and t.about_events:
        return _fit_events(shape, t)  # kind and name are its filters
    if role in (Role.DESCRIBE, Role.LIST):
        return 0 if t.about_events or t.about_logs else _generic_fit(shape, role, t)
    if role is Role.POD_LOG and Slot.KIND in shape.slots:
        return _fit_pod_log(shape, t)  # a logs tool of several kinds (pod, deployment, job): kind=pod
    if Slot.KIND in shape.slots or Slot.TARGET in shape.slots:
        return 0  # the generic tools above; the roles below are for tools of one kind
    return _FITS[role](shape, t)


def _generic_fit(shape: Shape, role: Role, t: _Words) -> int:
    has, w = shape.slots.__contains__, shape.words
    if has(Slot.TARGET):
        # `kind/name` in one argument describes one object; listing needs a kind alone
        return 9 if role is Role.DESCRIBE and not t.logs else 0
    if role is Role.DESCRIBE:
        ok = has(Slot.KIND) and has(Slot.NAME) and not _is_list(w)
        return 10 + has(Slot.API_VERSION) + ("describe" in w) if ok else 0
    # A tool that takes a kind and no name can only list (`kubectl get TYPE`), whatever its words say.
    lists = _is_list(w) or not has(Slot.NAME)
    return 10 + has(Slot.LABELS) if has(Slot.KIND) and not _requires(shape, Slot.NAME) and lists else 0


# A first sentence whose verb's object is events or logs (`List events within a namespace`, `Get logs from a
# pod`), not one that mentions them (`Describe an object with its status and events`).
_ABOUT_EVENTS = re.compile(r"(?:list|get|show|fetch|read|watch|retrieve|return|query)s?\b[^.]{0,40}?\bevents?\b")
_ABOUT_LOGS = re.compile(r"(?:get|read|fetch|show|stream|retrieve|print|return|tail)s?\b[^.]{0,40}?\blogs?\b")


class _Words:
    """What a tool's descriptions talk about."""

    def __init__(self, shape: Shape) -> None:
        w = shape.words
        self.logs, self.events = "logs" in w or "log" in w, "events" in w or "event" in w
        self.pods, self.nodes = "pod" in w or "pods" in w, "node" in w or "nodes" in w
        self.containers = "container" in w or "containers" in w
        # What its first sentence is about: a tool that "lists events" or "gets logs" is not a generic one,
        # whatever filters (kind, name) it takes.
        first = re.split(r"(?<=[.!?])\s|\n", shape.spec.description.strip().lower(), maxsplit=1)[0][:300]
        self.about_events = bool(_ABOUT_EVENTS.match(first))
        self.about_logs = bool(_ABOUT_LOGS.match(first))
        self.usage = (
            bool(w & {"consumption", "usage", "top", "utilization", "metrics"}) and Slot.QUERY not in shape.slots
        )
        self.listing = _is_list(w)
        self.words = w


def _fit_pod_log(sh: Shape, t: _Words) -> int:
    has = sh.slots.__contains__
    named = has(Slot.NAME) or has(Slot.NS_NAME)
    return 10 + has(Slot.PREVIOUS) + has(Slot.CONTAINER) if named and t.logs and (t.pods or t.containers) else 0


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
    named = _requires(sh, Slot.NAME) or _requires(sh, Slot.KIND)
    return 10 + (Slot.NAMESPACE in sh.slots) if t.events and not named and not t.logs else 0


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


_KUBECTL_ROLES = frozenset(
    {Role.DESCRIBE, Role.LIST, Role.POD_GET, Role.POD_LIST, Role.POD_LIST_ALL, Role.POD_LOG, Role.EVENTS,
     Role.NAMESPACES, Role.POD_TOP, Role.NODE_TOP}
)  # fmt: skip


class Reading(NamedTuple):
    """A call made, in the planner's terms."""

    role: Role | None
    kind: str = ""
    name: str = ""
    namespace: str = ""
    labels: str = ""
    fields: str = ""
    previous: bool = False
    container: str = ""


class Toolbox:
    """The best offered tool for each role, and calls in that tool's own terms (and back)."""

    def __init__(self, tools: list[ToolSpec]) -> None:
        shapes = [shape_of(t) for t in tools]
        words = [_Words(sh) for sh in shapes]
        fits = {role: [_fits(sh, role, w) for sh, w in zip(shapes, words, strict=True)] for role in Role}
        self.by_role: dict[Role, Shape] = {}
        for role in Role:
            # Best fit wins; among equals the first offered (a stable, server-given order).
            scores = fits[role]
            if scores and max(scores) > 0:
                self.by_role[role] = shapes[scores.index(max(scores))]
        # A typed listing tool standing in (events as kind Event, pods as kind Pod) reads better than a kubectl
        # command line: keep the command tool for what nothing typed can do.
        typed_list = self.by_role.get(Role.LIST)
        if typed_list is not None and Slot.COMMAND not in typed_list.slots:
            for role in (Role.EVENTS, Role.NAMESPACES, Role.POD_LIST, Role.POD_LIST_ALL, Role.POD_GET):
                mine = self.by_role.get(role)
                if mine is not None and Slot.COMMAND in mine.slots:
                    del self.by_role[role]
        # A logs tool made for the previous run (`get_previous_logs`), for when the chosen one has no such flag.
        self.previous_logs = next(
            (sh for sh, fit in zip(shapes, fits[Role.POD_LOG], strict=True) if fit and "previous" in sh.words
             and Slot.PREVIOUS not in sh.slots and "previous" in sh.spec.description.lower().split(".")[0]),
            None,
        )  # fmt: skip

    def has(self, role: Role) -> bool:
        """Is there a tool for this role (its own, or a generic one standing in for it)?"""
        return role in self.by_role or (role in _STAND_INS and _STAND_INS[role][0] in self.by_role)

    def call(self, role: Role, reason: str, **values: Any) -> ToolCall | None:
        """A call of the role's tool with the given slot values (names as `Slot` values); None when the tool
        lacks a slot that was given a value it needs, or a required argument stays empty. A role without a tool
        of its own is asked of the generic listing tool (events as kind Event, namespaces as kind Namespace)."""
        shape = self.by_role.get(role)
        if shape is None:
            stand_in = _STAND_INS.get(role)
            if stand_in is None or stand_in[0] not in self.by_role:
                return None
            return self.call(stand_in[0], reason, **{**values, **stand_in[1]})
        if Slot.COMMAND in shape.slots:
            line = kubectl_command.command(role.value, shape.command_prefix, **values)
            return (
                ToolCall(tool=shape.spec.name, args={shape.slots[Slot.COMMAND]: line}, reason=reason) if line else None
            )
        if role is Role.POD_LOG:
            shape, values = self._log_tool(shape, values)
        args = _arguments(shape, values)
        if args is None or any(r not in args for r in shape.required):
            return None
        return ToolCall(tool=shape.spec.name, args=args, reason=reason)

    def _log_tool(self, shape: Shape, values: dict[str, Any]) -> tuple[Shape, dict[str, Any]]:
        """The previous run's logs from a tool made for them when the chosen one has no such flag; kind=pod for
        a logs tool of several kinds."""
        if values.get("previous") and Slot.PREVIOUS not in shape.slots and self.previous_logs is not None:
            shape, values = self.previous_logs, {k: v for k, v in values.items() if k != "previous"}
        if Slot.KIND in shape.slots:
            values = {**values, "kind": "Pod"}
        return shape, values

    def accepts(self, role: Role, slot: Slot) -> bool:
        """Can the role's tool take this argument (a label selector, a container)? A command line takes all."""
        shape = self.by_role.get(role)
        if shape is None and role in _STAND_INS:
            shape = self.by_role.get(_STAND_INS[role][0])
        return shape is not None and (slot in shape.slots or Slot.COMMAND in shape.slots)

    def role_of(self, tool: str) -> Role | None:
        """The role a tool was chosen for (the first, when one tool serves several)."""
        return next((r for r, sh in self.by_role.items() if sh.spec.name == tool), None)

    def roles_of(self, tool: str) -> set[Role]:
        """Every role a tool was chosen for."""
        return {r for r, sh in self.by_role.items() if sh.spec.name == tool}

    def read(self, tool: str, args: dict[str, Any]) -> Reading:
        """A call made, read back: which role it played and for which object, whatever the tool's shape."""
        roles = [r for r, sh in self.by_role.items() if sh.spec.name == tool]
        previous = self.previous_logs is not None and tool == self.previous_logs.spec.name
        if not roles and not previous:
            return Reading(None)
        shape = self.by_role[roles[0]] if roles else self.previous_logs
        if shape is None:
            return Reading(None)
        if Slot.COMMAND in shape.slots:
            return _read_command(str(args.get(shape.slots[Slot.COMMAND]) or ""))
        got = {s: args.get(p) for s, p in shape.slots.items()}
        kind, name, ns = (
            str(got.get(Slot.KIND) or ""),
            str(got.get(Slot.NAME) or ""),
            str(got.get(Slot.NAMESPACE) or ""),
        )
        if got.get(Slot.TARGET) and "/" in str(got[Slot.TARGET]):
            kind, name = str(got[Slot.TARGET]).split("/", 1)
        if got.get(Slot.NS_NAME) and "/" in str(got[Slot.NS_NAME]):
            ns, name = str(got[Slot.NS_NAME]).split("/", 1)
        role = roles[0] if roles else Role.POD_LOG  # a previous-run logs tool chosen by `call`
        if len(roles) > 1 and Role.DESCRIBE in roles and Role.LIST in roles:
            role = Role.DESCRIBE if name else Role.LIST
        if role is Role.LIST and name:
            role = Role.DESCRIBE  # the listing tool standing in for describe
        lowered = kind.lower().rstrip("s")
        if role is Role.LIST and lowered == "event":
            role = Role.EVENTS
        elif role is Role.LIST and lowered == "namespace":
            role = Role.NAMESPACES
        return Reading(
            role, kind, name, ns, str(got.get(Slot.LABELS) or ""), str(got.get(Slot.FIELDS) or ""),
            bool(got.get(Slot.PREVIOUS)) or (previous and not roles), str(got.get(Slot.CONTAINER) or ""),
        )  # fmt: skip


# Roles a generic tool can play when no tool of their own is offered, with the values that make it do so.
_STAND_INS: dict[Role, tuple[Role, dict[str, str]]] = {
    Role.EVENTS: (Role.LIST, {"api_version": "v1", "kind": "Event"}),
    Role.NAMESPACES: (Role.LIST, {"api_version": "v1", "kind": "Namespace"}),
    Role.POD_LIST_ALL: (Role.LIST, {"api_version": "v1", "kind": "Pod"}),
}


def _arguments(shape: Shape, values: dict[str, Any]) -> dict[str, Any] | None:
    """The slot values in the tool's own argument names; None when a value that says what to read has no place."""
    composed = _composites(shape, values)
    if composed is None:
        return None
    args, used = composed
    for slot_name, value in values.items():
        if value is None or value == "" or slot_name in used:
            continue
        prop = shape.slots.get(Slot(slot_name))
        if prop is None:
            if slot_name in (Slot.NAMESPACE.value, Slot.KIND.value, Slot.NAME.value):
                return None  # without it the call would ask for something else
            continue
        args[prop] = _kind_value(shape, prop, str(value)) if slot_name == Slot.KIND.value else value
    if Slot.CONTEXT in shape.slots and shape.slots[Slot.CONTEXT] in shape.required:
        args[shape.slots[Slot.CONTEXT]] = ""  # the current kubeconfig context
    return args


def _composites(shape: Shape, values: dict[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """The arguments that take two names in one (`kind/name`, `namespace/name`), and the values they used."""
    args: dict[str, Any] = {}
    used: list[str] = []
    kind, name, ns = values.get("kind"), values.get("name"), values.get("namespace")
    if Slot.TARGET in shape.slots and name:
        if not kind:
            return None
        args[shape.slots[Slot.TARGET]] = f"{str(kind).lower()}/{name}"
        used += ["kind", "name"]
    if Slot.NS_NAME in shape.slots and name:
        args[shape.slots[Slot.NS_NAME]] = f"{ns}/{name}" if ns else str(name)
        used += ["namespace", "name"]
    return args, used


def _kind_value(shape: Shape, prop: str, kind: str) -> str:
    """A kind as this tool takes it: one of its allowed values, `Deployment` beside an apiVersion argument,
    else kubectl's lower-case resource name (`deployment`)."""
    allowed = (shape.enums or {}).get(prop)
    if allowed:
        want = {kind.lower(), kind.lower() + "s", kind.lower() + "es"}
        return next((v for v in allowed if v.lower() in want), kind)
    # `kind` takes a Kind; `resourceType`, `resource`, `type` take kubectl's resource names.
    keeps_kind = Slot.API_VERSION in shape.slots or re.sub(r"[-_ ]", "", prop.lower()) in ("kind", "resourcekind")
    return kind if keeps_kind else kind.lower()


def _read_command(line: str) -> Reading:
    parsed = kubectl_command.parse(line)
    if parsed is None:
        return Reading(None)
    kind = parsed.kind.lower().rstrip("s") if parsed.kind.lower() not in ("ingress", "ingresses") else "ingress"
    if parsed.verb == "logs":
        role = Role.POD_LOG
    elif parsed.verb == "top":
        role = Role.NODE_TOP if kind.startswith("node") else Role.POD_TOP
    elif parsed.verb == "describe" or parsed.name:
        role = Role.DESCRIBE
    elif kind in ("event", "ev"):
        role = Role.EVENTS
    elif kind in ("namespace", "n"):
        role = Role.NAMESPACES
    elif kind in ("pod", "po"):
        role = Role.POD_LIST if parsed.namespace else Role.POD_LIST_ALL
    else:
        role = Role.LIST
    return Reading(
        role, parsed.kind, parsed.name, parsed.namespace, parsed.labels, parsed.fields, parsed.previous,
        parsed.container,
    )  # fmt: skip


def toolbox_of(tools: list[ToolSpec]) -> Toolbox:
    """The toolbox of an investigation's tools, built once per evaluation (the planner, rules and report ask)."""
    return per_evaluation(("toolbox", id(tools), len(tools)), lambda: Toolbox(tools))
