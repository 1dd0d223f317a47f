"""The planner's walk: from the alert's objects to what their outputs reference, one iteration at a time.

Each test builds the state by hand, as the orchestrator would after each iteration: kubernetes-mcp-server's real
tool list and the calls made so far with their outputs (`kubectl describe` text from tests/fixtures/object_outputs
and tests/fixtures/walk_outputs, or written here in the same layout), then asks `next_calls` what comes next and
`Walk.chain_to` how the walk got to an object. Object names are made up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.investigations.rules.objects import ObjRef
from shared.investigations.rules.planner import Walk, next_calls
from shared.investigations.rules.state import Budget, CallRecord, InvestigationState, ToolCall, ToolSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TOOLS = [
    ToolSpec.model_validate(t)
    for t in json.loads((FIXTURES / "investigations" / "mcp" / "kubernetes-mcp-server-tools.json").read_text())["tools"]
]


def output(name: str) -> str:
    """An object's output from tests/fixtures/object_outputs (shared with test_object_state)."""
    return (FIXTURES / "object_outputs" / name).read_text()


def walk_output(name: str) -> str:
    """An output written for these walks (tests/fixtures/walk_outputs: lines too long for a Python file)."""
    return (FIXTURES / "walk_outputs" / name).read_text()


class Investigation:
    """A hand-built investigation: the state, and the calls added to it iteration by iteration."""

    def __init__(self, alert: dict[str, Any], budget: Budget | None = None) -> None:
        self.state = InvestigationState(alert=alert, tools=TOOLS, budget=budget or Budget())
        self.iteration = 0

    def next(self) -> list[ToolCall]:
        calls = next_calls(self.state)
        assert len(calls) <= self.state.budget.max_calls_per_iteration
        made = {c.key() for c in self.record_calls()}
        assert not [c for c in calls if c.key() in made], "a call already made was planned again"
        assert len({c.key() for c in calls}) == len(calls)
        return calls

    def record_calls(self) -> list[ToolCall]:
        return [ToolCall(tool=c.tool, args=c.args) for c in self.state.calls]

    def made(self, *answers: tuple[str, dict[str, Any], str]) -> None:
        """One iteration's calls, answered."""
        for tool, args, out in answers:
            self.state.calls.append(CallRecord(tool=tool, args=args, output=out, iteration=self.iteration))
        self.iteration += 1

    def chain_to(self, name: str) -> list[ObjRef]:
        return Walk(self.state).chain_to(name)


def pairs(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.args) for c in calls]


def describe(kind: str, name: str, namespace: str | None = None, api: str = "v1") -> dict[str, Any]:
    args = {"apiVersion": api, "kind": kind, "name": name}
    return {**args, "namespace": namespace} if namespace else args


# ---- HPA -> Deployment -> its pods -> the failing pod ------------------------------------------------------

HPA_ALERT = {
    "title": "KubeHpaMaxedOut",
    "description": "HPA default/php-apache has been running at max replicas for longer than 15 minutes.",
    "labels": {
        "alertname": "KubeHpaMaxedOut",
        "horizontalpodautoscaler": "php-apache",
        "namespace": "default",
        "job": "kube-state-metrics",
        "container": "kube-state-metrics",
        "pod": "kube-prometheus-stack-kube-state-metrics-6f7c9b8d4-qwz8m",
        "severity": "warning",
    },
}
PHP_DEPLOYMENT = """Name:                   php-apache
Namespace:              default
CreationTimestamp:      Mon, 23 Jan 2023 10:40:00 +0000
Labels:                 run=php-apache
Annotations:            deployment.kubernetes.io/revision: 1
Selector:               run=php-apache
Replicas:               10 desired | 10 updated | 10 total | 8 available | 2 unavailable
StrategyType:           RollingUpdate
Pod Template:
  Labels:  run=php-apache
  Containers:
   php-apache:
    Image:      registry.k8s.io/hpa-example
    Port:       80/TCP
    Requests:
      cpu:        200m
Conditions:
  Type           Status  Reason
  ----           ------  ------
  Progressing    True    NewReplicaSetAvailable
  Available      True    MinimumReplicasAvailable
OldReplicaSets:  <none>
NewReplicaSet:   php-apache-5b56f9df94 (10/10 replicas created)
Events:          <none>
"""
PHP_PODS = """NAMESPACE   NAME                          READY   STATUS             RESTARTS      AGE
default     php-apache-5b56f9df94-2xk8p   1/1     Running            0             40m
default     php-apache-5b56f9df94-9qv7d   0/1     CrashLoopBackOff   7 (2m ago)    40m
default     php-apache-5b56f9df94-b4mzt   1/1     Running            0             40m
"""
FAILING_POD = "php-apache-5b56f9df94-9qv7d"
PHP_POD = walk_output("php-apache-pod.describe.txt")


def test_an_hpa_leads_to_its_deployment_then_its_pods_then_the_failing_pods_description_and_logs() -> None:
    inv = Investigation(HPA_ALERT)
    first = inv.next()
    hpa = describe("HorizontalPodAutoscaler", "php-apache", "default", "autoscaling/v2")
    # The HPA the labels name, not kube-state-metrics' own pod.
    assert pairs(first) == [("resources_get", hpa), ("events_list", {"namespace": "default"})]
    assert all("kube-state-metrics" not in json.dumps(c.args) for c in first)
    inv.made(("resources_get", hpa, output("hpa-maxed.describe.txt")), ("events_list", {"namespace": "default"}, ""))

    deployment = describe("Deployment", "php-apache", "default", "apps/v1")
    second = inv.next()
    assert pairs(second) == [("resources_get", deployment)]  # the HPA's `Reference: Deployment/php-apache`
    assert "HorizontalPodAutoscaler php-apache" in second[0].reason
    inv.made(("resources_get", deployment, PHP_DEPLOYMENT))

    selector = {"namespace": "default", "labelSelector": "run=php-apache"}
    third = inv.next()
    assert ("pods_list_in_namespace", selector) in pairs(third)  # the Deployment's selector
    inv.made(*[(c.tool, c.args, PHP_PODS if c.tool == "pods_list_in_namespace" else "") for c in third])

    fourth = pairs(inv.next())
    # The one pod that fails: described, and its previous run's logs read (it restarted 7 times). Running pods
    # are left alone.
    assert ("resources_get", describe("Pod", FAILING_POD, "default")) in fourth
    assert ("pods_log", {"name": FAILING_POD, "namespace": "default", "previous": True}) in fourth
    assert not [args for _, args in fourth if args.get("name", "").endswith(("-2xk8p", "-b4mzt"))]
    assert inv.chain_to(FAILING_POD) == [
        ObjRef("HorizontalPodAutoscaler", "php-apache", "default"),
        ObjRef("Deployment", "php-apache", "default"),
        ObjRef("Pod", FAILING_POD, "default"),
    ]


def test_a_failing_pods_description_asks_for_its_failing_containers_logs() -> None:
    inv = Investigation(HPA_ALERT)
    inv.made(
        ("resources_get", describe("HorizontalPodAutoscaler", "php-apache", "default", "autoscaling/v2"),
         output("hpa-maxed.describe.txt")),
        ("resources_get", describe("Deployment", "php-apache", "default", "apps/v1"), PHP_DEPLOYMENT),
        ("pods_list_in_namespace", {"namespace": "default", "labelSelector": "run=php-apache"}, PHP_PODS),
        ("resources_get", describe("Pod", FAILING_POD, "default"), PHP_POD),
    )  # fmt: skip
    calls = pairs(inv.next())
    wanted = {"name": FAILING_POD, "namespace": "default", "container": "php-apache", "previous": True}
    assert ("pods_log", wanted) in calls


# ---- pod -> claim -> storage class ---------------------------------------------------------------------------

PENDING_POD = walk_output("elastic-0-pending.describe.txt")


def test_a_pods_claim_leads_to_the_claim_then_its_storage_class() -> None:
    inv = Investigation(
        {
            "title": "KubePodNotReady",
            "description": "Pod logging/elastic-0 has been in a non-ready state for longer than 15 minutes.",
            "labels": {"alertname": "KubePodNotReady", "namespace": "logging", "pod": "elastic-0",
                       "job": "kube-state-metrics"},
        }
    )  # fmt: skip
    pod = describe("Pod", "elastic-0", "logging")
    assert ("resources_get", pod) in pairs(inv.next())
    inv.made(("resources_get", pod, PENDING_POD), ("events_list", {"namespace": "logging"}, ""))

    claim = describe("PersistentVolumeClaim", "elastic-data-0", "logging")
    second = inv.next()
    assert ("resources_get", claim) in pairs(second)  # `ClaimName: elastic-data-0`
    inv.made(("resources_get", claim, output("pvc-pending.describe.txt")))

    storage_class = describe("StorageClass", "premium-rwo", api="storage.k8s.io/v1")  # cluster-scoped
    third = inv.next()
    assert ("resources_get", storage_class) in pairs(third)
    assert next(c for c in third if c.args == storage_class).reason.endswith(
        "referenced by PersistentVolumeClaim elastic-data-0"
    )
    assert inv.chain_to("premium-rwo") == [
        ObjRef("Pod", "elastic-0", "logging"),
        ObjRef("PersistentVolumeClaim", "elastic-data-0", "logging"),
        ObjRef("StorageClass", "premium-rwo"),
    ]


# ---- ingress -> service -> pods ------------------------------------------------------------------------------

INGRESSES = """NAMESPACE   NAME         CLASS   HOSTS              ADDRESS        PORTS     AGE
retail      storefront   nginx   shop.example.com   203.0.113.10   80, 443   41d
intranet    wiki         nginx   wiki.example.com   203.0.113.10   80        97d
"""
WEB_SERVICE = """Name:                     storefront-web
Namespace:                retail
Labels:                   app=storefront
Annotations:              <none>
Selector:                 app=storefront,tier=web
Type:                     ClusterIP
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       10.96.12.40
IPs:                      10.96.12.40
Port:                     http  80/TCP
TargetPort:               8080/TCP
Endpoints:                10.44.1.5:8080,10.44.2.9:8080
Session Affinity:         None
Events:                   <none>
"""


def test_a_probed_host_leads_to_its_ingress_then_its_services_then_their_pods() -> None:
    inv = Investigation(
        {
            "title": "BlackboxProbeFailed",
            "description": "Probe of https://shop.example.com/api/health failed for 5 minutes.",
            "labels": {"alertname": "BlackboxProbeFailed", "instance": "https://shop.example.com/api/health",
                       "job": "blackbox-exporter", "module": "http_2xx"},
        }
    )  # fmt: skip
    ingresses = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress"}
    assert ("resources_list", ingresses) in pairs(inv.next())  # across namespaces: which one serves the host?
    inv.made(("resources_list", ingresses, INGRESSES))

    ingress = describe("Ingress", "storefront", "retail", "networking.k8s.io/v1")
    second = pairs(inv.next())
    assert ("resources_get", ingress) in second
    assert not [a for _, a in second if a.get("name") == "wiki"]  # the other host's Ingress
    inv.made(("resources_get", ingress, output("ingress-missing-backend.describe.txt")))

    web, api = describe("Service", "storefront-web", "retail"), describe("Service", "storefront-api", "retail")
    third = pairs(inv.next())
    assert ("resources_get", web) in third
    assert ("resources_get", api) in third
    inv.made(("resources_get", web, WEB_SERVICE))

    fourth = pairs(inv.next())
    assert ("pods_list_in_namespace", {"namespace": "retail", "labelSelector": "app=storefront,tier=web"}) in fourth
    assert inv.chain_to("storefront-web") == [
        ObjRef("Ingress", "storefront", "retail"),
        ObjRef("Service", "storefront-web", "retail"),
    ]


# ---- a log line -> the Service it cannot reach ---------------------------------------------------------------

ORDERS_ALERT = {
    "title": "KubePodCrashLooping",
    "description": 'Pod shop/orders-api-6c9d7f8b9-k2x7p (api) is in waiting state (reason: "CrashLoopBackOff").',
    "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "orders-api-6c9d7f8b9-k2x7p",
               "container": "api", "job": "kube-state-metrics", "reason": "CrashLoopBackOff"},
}  # fmt: skip
ORDERS_LOG = walk_output("orders-api.log")
DB_SERVICE = """Name:              orders-db
Namespace:         data
Labels:            app=orders-db
Annotations:       <none>
Selector:          app=orders-db,role=primary
Type:              ClusterIP
IP:                10.96.80.12
Port:              postgres  5432/TCP
TargetPort:        5432/TCP
Endpoints:         <none>
Session Affinity:  None
Events:            <none>
"""


def test_a_refused_connection_in_the_logs_leads_to_that_service_and_its_pods() -> None:
    inv = Investigation(ORDERS_ALERT)
    logs = {"name": "orders-api-6c9d7f8b9-k2x7p", "namespace": "shop", "container": "api", "previous": True}
    assert ("pods_log", logs) in pairs(inv.next())
    inv.made(("pods_log", logs, ORDERS_LOG))

    service = describe("Service", "orders-db", "data")  # the Service's own namespace, from its DNS name
    second = inv.next()
    assert ("resources_get", service) in pairs(second)
    assert "orders-db.data.svc.cluster.local" in next(c for c in second if c.args == service).reason
    assert ("resources_list", {"apiVersion": "v1", "kind": "Service", "namespace": "data"}) in pairs(second)
    inv.made(("resources_get", service, DB_SERVICE))

    assert ("pods_list_in_namespace", {"namespace": "data", "labelSelector": "app=orders-db,role=primary"}) in pairs(
        inv.next()
    )
    assert inv.chain_to("orders-db") == [
        ObjRef("Pod", "orders-api-6c9d7f8b9-k2x7p", "shop"),
        ObjRef("Service", "orders-db", "data"),
    ]


# ---- a namespace stuck terminating -> what remains in it -----------------------------------------------------

TERMINATING = walk_output("namespace-terminating-kinds.describe.txt")


def test_a_namespace_stuck_terminating_leads_to_a_listing_of_each_remaining_kind() -> None:
    inv = Investigation(
        {
            "title": "KubeNamespaceTerminating",
            "description": "Namespace team-alpha has been stuck in Terminating for more than 1 hour.",
            "labels": {"alertname": "KubeNamespaceTerminating", "namespace": "team-alpha", "severity": "warning"},
        }
    )
    namespace = describe("Namespace", "team-alpha")
    assert ("resources_get", namespace) in pairs(inv.next())
    inv.made(
        ("resources_get", namespace, TERMINATING),
        ("events_list", {"namespace": "team-alpha"}, ""),
        ("pods_list_in_namespace", {"namespace": "team-alpha"}, "No resources found in team-alpha namespace."),
    )
    # The description says what is left (`certificates.cert-manager.io`, `persistentvolumeclaims.`): list each.
    second = pairs(inv.next())
    assert (
        "resources_list",
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "namespace": "team-alpha"},
    ) in second
    assert (
        "resources_list",
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "team-alpha"},
    ) in second


# ---- chain_to and the budget ---------------------------------------------------------------------------------


def test_chain_to_an_object_the_walk_never_reached_is_empty() -> None:
    inv = Investigation(HPA_ALERT)
    assert inv.chain_to("nothing-of-the-sort") == []
    inv.made(("resources_get", describe("HorizontalPodAutoscaler", "php-apache", "default", "autoscaling/v2"),
              output("hpa-maxed.describe.txt")))  # fmt: skip
    # An HPA and its scale target share a name: the chain runs to the object followed, from the alert's own.
    assert inv.chain_to("php-apache") == [
        ObjRef("HorizontalPodAutoscaler", "php-apache", "default"),
        ObjRef("Deployment", "php-apache", "default"),
    ]


def _answer(call: ToolCall) -> str:
    """What a cluster would answer, by what the call asks for (the outputs of the walks above)."""
    a = call.args
    if call.tool == "pods_log":
        return ORDERS_LOG
    if call.tool == "pods_list_in_namespace":
        return PHP_PODS
    return {
        "HorizontalPodAutoscaler": output("hpa-maxed.describe.txt"),
        "Deployment": PHP_DEPLOYMENT,
        "Pod": PHP_POD,
        "Service": DB_SERVICE,
    }.get(str(a.get("kind")), "")


def run_to_the_end(alert: dict[str, Any], budget: Budget) -> Investigation:
    inv = Investigation(alert, budget)
    while calls := inv.next():
        inv.made(*[(c.tool, c.args, _answer(c)) for c in calls])
    return inv


def test_a_small_budget_is_respected_and_no_call_is_made_twice() -> None:
    for alert in (HPA_ALERT, ORDERS_ALERT):
        for budget in (
            Budget(max_calls=5, max_iterations=5, max_calls_per_iteration=2),
            Budget(max_calls=15, max_iterations=2, max_calls_per_iteration=3),
            Budget(max_calls=3, max_iterations=5, max_calls_per_iteration=6),
        ):
            inv = run_to_the_end(alert, budget)
            calls = inv.state.calls
            keys = [ToolCall(tool=c.tool, args=c.args).key() for c in calls]
            assert len(keys) == len(set(keys))
            assert len(calls) <= budget.max_calls
            assert inv.state.iterations_done() <= budget.max_iterations
            per_iteration = [sum(1 for c in calls if c.iteration == n) for n in range(inv.iteration)]
            assert max(per_iteration) <= budget.max_calls_per_iteration
            assert calls, (alert["title"], budget)


def test_the_default_budget_walks_the_hpa_chain_within_its_limits() -> None:
    inv = run_to_the_end(HPA_ALERT, Budget())
    made = [(c.tool, c.args) for c in inv.state.calls]
    assert ("resources_get", describe("Pod", FAILING_POD, "default")) in made
    assert len(made) <= 15
    assert inv.state.iterations_done() <= 5


def test_nothing_is_planned_once_the_budget_is_spent() -> None:
    inv = Investigation(HPA_ALERT, Budget(max_calls=2, max_iterations=5, max_calls_per_iteration=6))
    inv.made(
        ("resources_get", describe("HorizontalPodAutoscaler", "php-apache", "default", "autoscaling/v2"),
         output("hpa-maxed.describe.txt")),
        ("events_list", {"namespace": "default"}, ""),
    )  # fmt: skip
    assert inv.next() == []
    spent = Investigation(HPA_ALERT, Budget(max_calls=15, max_iterations=1, max_calls_per_iteration=6))
    spent.made(("events_list", {"namespace": "default"}, ""))
    assert spent.next() == []
