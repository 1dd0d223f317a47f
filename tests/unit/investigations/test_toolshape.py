"""toolshape: tools chosen by what their input schemas accept, never by their names.

kubernetes-mcp-server's real tool list (tests/fixtures/investigations/mcp) maps each role to its tool; a server
designed differently (other tool names, other argument names, other groupings) maps the same roles, and
`Toolbox.call` writes each call in that server's own argument names. Hostile schemas never raise.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from shared.investigations.rules import next_calls
from shared.investigations.rules.state import InvestigationState, ToolSpec
from shared.investigations.rules.toolshape import Role, Slot, Toolbox, shape_of

TOOL_LIST = (
    Path(__file__).resolve().parents[2] / "fixtures" / "investigations" / "mcp" / "kubernetes-mcp-server-tools.json"
)


def k8s_mcp_tools() -> list[ToolSpec]:
    return [ToolSpec.model_validate(t) for t in json.loads(TOOL_LIST.read_text())["tools"]]


def spec(name: str, description: str, properties: Any, required: Any = None) -> ToolSpec:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return ToolSpec(name=name, description=description, input_schema=schema)


def s(description: str, type_: str = "string") -> dict[str, Any]:
    return {"type": type_, "description": description}


# A second server, designed the way another Kubernetes MCP server might be: one `k8s_*` tool per verb that takes
# the resource type as an argument, camelCase names with a `resource` prefix, `ns` for the namespace, a logs tool
# keyed by `podName` with a `previousContainer` flag, events by namespace, and a Prometheus query tool.
OTHER_SERVER = [
    spec(
        "k8s_get",
        "Get a single Kubernetes resource by type and name and print its full description (status, conditions, "
        "events).",
        {
            "resourceType": s("Resource type, e.g. Pod, Deployment, HorizontalPodAutoscaler"),
            "resourceName": s("Name of the resource"),
            "ns": s("Namespace of the resource (omit for cluster-scoped resources)"),
            "output": {"type": "string", "enum": ["describe", "yaml", "json"], "default": "describe"},
        },
        ["resourceType", "resourceName"],
    ),
    spec(
        "k8s_list",
        "List Kubernetes resources of one type, optionally in a namespace and filtered by labels.",
        {
            "resourceType": s("Resource type, e.g. pods, services, ingresses"),
            "ns": s("Namespace (omit for all namespaces)"),
            "selector": s("Label selector, e.g. app=web"),
        },
        ["resourceType"],
    ),
    spec(
        "get_logs",
        "Fetch the logs of a pod's container.",
        {
            "podName": s("Pod name"),
            "namespace": s("Namespace of the pod"),
            "containerName": s("Container (defaults to the first one)"),
            "previousContainer": s("Logs of the previous, terminated container instead", "boolean"),
            "tailLines": s("How many lines from the end", "integer"),
        },
        ["podName", "namespace"],
    ),
    spec(
        "list_events",
        "List the events of a namespace, newest last.",
        {"namespace": s("Namespace to list events of")},
        ["namespace"],
    ),
    spec(
        "list_pods",
        "List the pods in a namespace with their status, restarts and age.",
        {"namespace": s("Namespace"), "labelSelector": s("Only pods with these labels")},
        ["namespace"],
    ),
    spec("list_namespaces", "List all namespaces of the cluster.", {}),
    spec(
        "prometheus_range_query",
        "Run a PromQL range query against Prometheus.",
        {"promql": s("The PromQL expression"), "start": s("Start (RFC 3339)"), "end": s("End (RFC 3339)")},
        ["promql"],
    ),
]


def test_kubernetes_mcp_server_tools_map_to_their_roles() -> None:
    box = Toolbox(k8s_mcp_tools())
    assert {role: box.by_role[role].spec.name for role in box.by_role} == {
        Role.DESCRIBE: "resources_get",
        Role.LIST: "resources_list",
        Role.POD_GET: "pods_get",
        Role.POD_LIST: "pods_list_in_namespace",
        Role.POD_LOG: "pods_log",
        Role.EVENTS: "events_list",
        Role.NAMESPACES: "namespaces_list",
        Role.POD_TOP: "pods_top",
        Role.NODE_TOP: "nodes_top",
        Role.NODE_LOG: "nodes_log",
        Role.POD_LIST_ALL: "pods_list",  # every namespace's pods, by field selector (a node's pods)
    }
    assert box.role_of("nodes_stats_summary") is None


def test_kubernetes_mcp_server_calls_use_its_argument_names() -> None:
    box = Toolbox(k8s_mcp_tools())
    describe = box.call(
        Role.DESCRIBE, "why", api_version="autoscaling/v2", kind="HorizontalPodAutoscaler", name="web", namespace="shop"
    )
    assert describe is not None
    assert (describe.tool, describe.args, describe.reason) == (
        "resources_get",
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "name": "web", "namespace": "shop"},
        "why",
    )
    logs = box.call(Role.POD_LOG, "logs", name="web-1", namespace="shop", container="app", previous=True)
    assert logs is not None
    assert logs.args == {"name": "web-1", "namespace": "shop", "container": "app", "previous": True}
    listing = box.call(Role.POD_LIST, "pods", namespace="shop", labels="app=web")
    assert listing is not None
    assert listing.args == {"namespace": "shop", "labelSelector": "app=web"}
    # Empty values are left out rather than sent as "".
    assert box.call(Role.EVENTS, "events", namespace="shop", labels=None, fields="") == box.call(
        Role.EVENTS, "events", namespace="shop"
    )


def test_a_differently_designed_server_maps_the_same_roles() -> None:
    box = Toolbox(OTHER_SERVER)
    assert {role: box.by_role[role].spec.name for role in box.by_role} == {
        Role.DESCRIBE: "k8s_get",
        Role.LIST: "k8s_list",
        Role.POD_LIST: "list_pods",
        Role.POD_LOG: "get_logs",
        Role.EVENTS: "list_events",
        Role.NAMESPACES: "list_namespaces",
        Role.METRICS_QUERY: "prometheus_range_query",
    }


def test_a_differently_designed_server_gets_calls_in_its_own_argument_names() -> None:
    box = Toolbox(OTHER_SERVER)
    describe = box.call(
        Role.DESCRIBE, "the HPA", api_version="autoscaling/v2", kind="HorizontalPodAutoscaler", name="web",
        namespace="shop",
    )  # fmt: skip
    assert describe is not None
    # No apiVersion argument on this server: the kind and name say enough.
    assert (describe.tool, describe.args) == (
        "k8s_get",
        {"resourceType": "horizontalpodautoscaler", "resourceName": "web", "ns": "shop"},
    )
    node = box.call(Role.DESCRIBE, "a node", api_version="v1", kind="Node", name="worker-1", namespace=None)
    assert node is not None
    assert node.args == {"resourceType": "node", "resourceName": "worker-1"}
    logs = box.call(Role.POD_LOG, "last crash", name="web-1", namespace="shop", container="app", previous=True)
    assert logs is not None
    assert (logs.tool, logs.args) == (
        "get_logs",
        {"podName": "web-1", "namespace": "shop", "containerName": "app", "previousContainer": True},
    )
    listing = box.call(Role.LIST, "services", api_version="v1", kind="Service", namespace="data", labels="app=db")
    assert listing is not None
    assert (listing.tool, listing.args) == ("k8s_list", {"resourceType": "service", "ns": "data", "selector": "app=db"})
    events = box.call(Role.EVENTS, "events", namespace="shop")
    assert events is not None
    assert (events.tool, events.args) == ("list_events", {"namespace": "shop"})
    query = box.call(Role.METRICS_QUERY, "graph", query="sum(rate(x[5m]))")
    assert query is not None
    assert query.args == {"promql": "sum(rate(x[5m]))"}
    # Its logs tool requires a namespace: a call without one is not made (it would ask for something else).
    assert box.call(Role.POD_LOG, "logs", name="web-1") is None
    # A role the server has no tool for gives no call.
    assert box.call(Role.POD_GET, "pod", name="web-1", namespace="shop") is None
    assert not box.has(Role.POD_GET)


def test_the_planner_investigates_through_the_other_server() -> None:
    alert = {
        "title": "KubeHpaMaxedOut",
        "description": "HPA search/search-frontend has been running at max replicas for longer than 15 minutes.",
        "labels": {"alertname": "KubeHpaMaxedOut", "namespace": "search", "horizontalpodautoscaler": "search-frontend"},
    }
    calls = next_calls(InvestigationState(alert=alert, tools=OTHER_SERVER))
    assert [(c.tool, c.args) for c in calls][:2] == [
        ("k8s_get", {"resourceType": "horizontalpodautoscaler", "resourceName": "search-frontend", "ns": "search"}),
        ("list_events", {"namespace": "search"}),
    ]


def test_a_tool_with_a_required_argument_the_planner_cannot_fill_is_not_chosen() -> None:
    # A describe tool that also requires a kubeconfig context: alone, it is asked with "" (the current context,
    # as kubectl without --context); beside a tool that asks for no context, that one is chosen.
    multi_cluster = spec(
        "cluster_resource_get",
        "Get a Kubernetes resource from one of the configured clusters.",
        {"context": s("kubeconfig context"), "kind": s("kind"), "name": s("name"), "namespace": s("namespace")},
        ["context", "kind", "name"],
    )
    alone = Toolbox([multi_cluster])
    call = alone.call(Role.DESCRIBE, "x", kind="Pod", name="a", namespace="b")
    assert call is not None
    assert call.args == {"context": "", "kind": "Pod", "name": "a", "namespace": "b"}
    # Offered first, beside a fillable one: the fillable one is chosen.
    both = Toolbox([multi_cluster, *OTHER_SERVER])
    assert both.by_role[Role.DESCRIBE].spec.name == "k8s_get"
    # A logs tool that requires `sinceTime` (no slot) is skipped for one that only requires what the planner has.
    strict_logs = spec(
        "pod_logs_since",
        "Read a pod's logs since a time.",
        {"name": s("pod"), "namespace": s("ns"), "sinceTime": s("RFC 3339 time")},
        ["name", "namespace", "sinceTime"],
    )
    assert Toolbox([strict_logs, *OTHER_SERVER]).by_role[Role.POD_LOG].spec.name == "get_logs"


def test_a_schema_is_read_by_its_property_names_and_descriptions() -> None:
    shape = shape_of(OTHER_SERVER[2])
    assert shape.slots == {
        Slot.NAME: "podName",
        Slot.NAMESPACE: "namespace",
        Slot.CONTAINER: "containerName",
        Slot.PREVIOUS: "previousContainer",
    }
    assert shape.required == frozenset({"podName", "namespace"})
    assert shape.extra == frozenset({"tailLines"})
    assert {"logs", "pod"} <= shape.words
    # `id` is a trace id only when its description says so.
    assert Slot.TRACE_ID not in shape_of(spec("get_thing", "Get a thing", {"id": s("the thing's id")})).slots
    assert shape_of(spec("get_trace", "Get a trace", {"id": s("the trace id")})).slots[Slot.TRACE_ID] == "id"


HOSTILE_SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": ["name", "namespace"]},
    {"type": "object", "properties": "name, namespace", "required": "name"},
    {"type": "object", "properties": None, "required": [None, 3, {"a": 1}]},
    {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(10_000)}, "required": ["p9999"]},
    {"type": "object", "properties": {f"name{i}": {"type": "string"} for i in range(10_000)}},
    {"type": "object", "properties": {"name": {"description": 42}, "namespace": {"description": ["a", {"b": 1}]}}},
    {"type": "object", "properties": {"namespace": {"description": {"nested": {"deeper": "logs pods"}}}}},
    {"type": "object", "properties": {"name": {"type": ["string", "null"]}, "namespace": {"type": {"x": 1}}}},
    {"type": "object", "properties": {"": {}, " ": {}, "-_-": {}}},
    {"type": "object", "properties": {"name": {"description": "pod " * 100_000}}},
    {"properties": {"name": {}}, "required": {"name": True}},
    {},
]


@pytest.mark.parametrize("schema", HOSTILE_SCHEMAS, ids=range(len(HOSTILE_SCHEMAS)))
def test_hostile_schemas_do_not_raise(schema: dict[str, Any]) -> None:
    hostile = ToolSpec(name="weird", description="List pod logs events namespaces", input_schema=schema)
    started = time.perf_counter()
    box = Toolbox([hostile, *k8s_mcp_tools()])
    for role in Role:
        box.call(role, "x", name="a", namespace="b", kind="Pod", api_version="v1", previous=True, query="up")
    shape_of(hostile)
    assert time.perf_counter() - started < 2.0
    # The real tools still win their roles.
    assert box.by_role[Role.DESCRIBE].spec.name == "resources_get"
    assert box.by_role[Role.POD_LOG].spec.name == "pods_log"


def test_a_tool_spec_built_without_validation_does_not_raise() -> None:
    """A spec whose schema or description is not what the model says (constructed, not validated)."""
    a_list: Any = ["not", "a", "dict"]
    nothing: Any = None
    odd = [
        ToolSpec.model_construct(name="a", description="list pods", input_schema=a_list),
        ToolSpec.model_construct(name="b", description="get pod logs", input_schema=nothing),
    ]
    box = Toolbox(odd)
    assert box.call(Role.POD_LOG, "x", name="a", namespace="b") is None


ALERT = {
    "title": "KubePodCrashLooping",
    "description": 'Pod shop/cart-1 (server) is in waiting state (reason: "CrashLoopBackOff").',
    "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "cart-1", "container": "server"},
}


@pytest.mark.parametrize("schema", HOSTILE_SCHEMAS, ids=range(len(HOSTILE_SCHEMAS)))
def test_the_planner_does_not_raise_on_hostile_schemas(schema: dict[str, Any]) -> None:
    hostile = ToolSpec(name="weird", description="List the events of a namespace", input_schema=schema)
    calls = next_calls(InvestigationState(alert=ALERT, tools=[hostile, *k8s_mcp_tools()]))
    assert calls


@pytest.mark.parametrize(
    "namespace_schema",
    [True, "string", ["string"]],
    ids=["boolean-schema", "string-shorthand", "list"],
)
def test_the_planner_does_not_raise_on_a_property_schema_that_is_not_an_object(namespace_schema: Any) -> None:
    """JSON Schema allows `true` as a property's schema ("anything"), and hand-written schemas often use the
    shorthand `{"namespace": "string"}`. The events tool still fits (it has a `namespace` property); the planner
    must not crash while it checks the call's argument types against the schema."""
    events = ToolSpec(
        name="list_events",
        description="List the events of a namespace",
        input_schema={"type": "object", "properties": {"namespace": namespace_schema}},
    )
    calls = next_calls(InvestigationState(alert=ALERT, tools=[events]))
    assert [(c.tool, c.args) for c in calls] == [("list_events", {"namespace": "shop"})]


# ---- servers of other designs: one kubectl command, `kind/name` targets, enums, no events tool ----------------

KUBECTL_SERVER = [
    spec(
        "execute_kubectl",
        "Execute kubectl commands against the cluster and return the output.",
        {"command": s("Complete kubectl command to execute (e.g. kubectl get pods -n default)")},
        ["command"],
    )
]
TARGET_SERVER = [
    spec(
        "describe_object",
        "Describe one Kubernetes object with its status and events.",
        {"target": s("The object as TYPE/NAME, e.g. deployment/web"), "namespace": s("Namespace")},
        ["target"],
    ),
    spec(
        "container_logs",
        "Read the logs of a container.",
        {"pod": s("The pod as NAMESPACE/POD"), "container": s("Container name"), "previous": s("", "boolean")},
        ["pod"],
    ),
    spec(
        "list_objects",
        "List objects of one resource type.",
        {
            "type": {"type": "string", "enum": ["pods", "deployments", "events", "namespaces", "services"]},
            "namespace": s("Namespace"),
        },
        ["type"],
    ),
]


def test_a_kubectl_command_tool_serves_every_read_and_reads_back() -> None:
    box = Toolbox(KUBECTL_SERVER)
    calls = {
        "describe": box.call(Role.DESCRIBE, "x", kind="Deployment", name="web", namespace="shop"),
        "logs": box.call(Role.POD_LOG, "x", name="web-1", namespace="shop", container="app", previous=True),
        "events": box.call(Role.EVENTS, "x", namespace="shop"),
        "pods": box.call(Role.POD_LIST, "x", namespace="shop", labels="app=web"),
        "node": box.call(Role.POD_LIST_ALL, "x", fields="spec.nodeName=n1"),
    }
    assert {k: c.args["command"] for k, c in calls.items() if c} == {
        "describe": "kubectl describe deployment web -n shop",
        "logs": "kubectl logs web-1 -n shop -c app --previous",
        "events": "kubectl get events -n shop",
        "pods": "kubectl get pods -n shop -l app=web",
        "node": "kubectl get pods -A --field-selector=spec.nodeName=n1 -o wide",
    }
    read = {k: box.read("execute_kubectl", c.args) for k, c in calls.items() if c}
    assert (read["describe"].role, read["describe"].kind, read["describe"].name) == (Role.DESCRIBE, "deployment", "web")
    assert (read["logs"].role, read["logs"].name, read["logs"].previous, read["logs"].container) == (
        Role.POD_LOG, "web-1", True, "app",
    )  # fmt: skip
    assert read["events"].role is Role.EVENTS
    assert (read["pods"].role, read["pods"].labels) == (Role.POD_LIST, "app=web")
    assert (read["node"].role, read["node"].fields) == (Role.POD_LIST_ALL, "spec.nodeName=n1")


def test_two_names_in_one_argument_enums_and_a_missing_events_tool() -> None:
    box = Toolbox(TARGET_SERVER)
    describe = box.call(Role.DESCRIBE, "x", kind="HorizontalPodAutoscaler", name="web", namespace="shop")
    assert describe is not None
    assert describe.args == {"target": "horizontalpodautoscaler/web", "namespace": "shop"}
    logs = box.call(Role.POD_LOG, "x", name="web-1", namespace="shop", previous=True)
    assert logs is not None
    assert logs.args == {"pod": "shop/web-1", "previous": True}
    # No events tool: the listing tool lists kind Event, in its own enum's spelling.
    events = box.call(Role.EVENTS, "x", namespace="shop")
    assert events is not None
    assert events.args == {"type": "events", "namespace": "shop"}
    assert box.read("list_objects", events.args).role is Role.EVENTS
    back = box.read("describe_object", describe.args)
    assert (back.role, back.kind, back.name, back.namespace) == (
        Role.DESCRIBE,
        "horizontalpodautoscaler",
        "web",
        "shop",
    )
    log_back = box.read("container_logs", logs.args)
    assert (log_back.role, log_back.namespace, log_back.name) == (Role.POD_LOG, "shop", "web-1")


def test_the_planner_investigates_through_a_kubectl_command_tool() -> None:
    alert = {
        "title": "KubeHpaMaxedOut",
        "labels": {"alertname": "KubeHpaMaxedOut", "namespace": "search", "horizontalpodautoscaler": "frontend"},
    }
    calls = next_calls(InvestigationState(alert=alert, tools=KUBECTL_SERVER))
    assert [c.args["command"] for c in calls][:2] == [
        "kubectl describe horizontalpodautoscaler frontend -n search",
        "kubectl get events -n search",
    ]
