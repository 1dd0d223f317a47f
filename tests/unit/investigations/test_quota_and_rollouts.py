"""Quotas near their limit and rollouts held on purpose, read from kubectl output as it prints them."""

from __future__ import annotations

from shared.investigations import rules
from shared.investigations.rules.quota_rules import consumers_kind, nearly_full, quantity
from tests.support import scenarios

QUOTA = """Name:                   team-quota
Namespace:              team
Resource                Used    Hard
--------                ----    ----
pods                    4       20
requests.cpu            9       10
requests.storage        900Gi   1Ti
"""
CLAIMS = """NAME     STATUS   VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   AGE
db-0     Bound    pv-a     500Gi      RWO            ssd            9d
db-1     Bound    pv-b     300Gi      RWO            ssd            9d
cache    Bound    pv-c     100Gi      RWO            ssd            2d
"""
STATEFULSET = """Name:               search
Namespace:          team
Replicas:           5 desired | 5 total
Update Strategy:    RollingUpdate
  Partition:        3
Pods Status:        5 Running / 0 Waiting / 0 Succeeded / 0 Failed
"""


def _state(alert: dict, calls: list[rules.CallRecord]) -> rules.InvestigationState:
    tools = [rules.ToolSpec.model_validate(t) for t in scenarios.all_tools()]
    return rules.InvestigationState(alert=alert, tools=tools, calls=calls)


def test_quantities_and_what_uses_a_resource() -> None:
    assert quantity("1Ti") == 2**40
    assert quantity("9250m") == 9.25
    assert quantity("lots") is None
    assert consumers_kind("requests.storage") == "PersistentVolumeClaim"
    assert consumers_kind("gold.storageclass.storage.k8s.io/requests.storage") == "PersistentVolumeClaim"
    assert consumers_kind("limits.memory") == "Pod"
    assert consumers_kind("services") is None
    assert [r[0] for r in nearly_full(QUOTA)] == ["requests.cpu", "requests.storage"]


def test_a_nearly_full_quota_lists_its_largest_consumers() -> None:
    alert = {"title": "KubeQuotaAlmostFull", "labels": {"alertname": "KubeQuotaAlmostFull", "namespace": "team",
                                                        "resourcequota": "team-quota"}}  # fmt: skip
    describe = {"apiVersion": "v1", "kind": "ResourceQuota", "name": "team-quota", "namespace": "team"}
    state = _state(alert, [rules.CallRecord(tool="resources_get", args=describe, output=QUOTA)])
    listing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "team"}
    assert ("resources_list", listing) in [(c.tool, c.args) for c in rules.next_calls(state)]
    state.calls.append(rules.CallRecord(tool="resources_list", args=listing, output=CLAIMS, iteration=1))
    found = [f for f in rules.findings(state) if f.rule == "quota_nearly_full"]
    storage = next(f for f in found if "requests.storage" in f.cause)
    assert "900Gi of 1Ti" in storage.cause
    assert "db-0 (500Gi)" in storage.cause
    assert storage.cause.index("db-0") < storage.cause.index("db-1")


def test_a_statefulset_partition_holds_the_rollout() -> None:
    labels = {"alertname": "KubeStatefulSetUpdateNotRolledOut", "namespace": "team", "statefulset": "search"}
    alert = {"title": labels["alertname"], "labels": labels}
    args = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "search", "namespace": "team"}
    state = _state(alert, [rules.CallRecord(tool="resources_get", args=args, output=STATEFULSET)])
    (held,) = [f for f in rules.findings(state) if f.rule == "rollout_partition"]
    assert "partition of 3" in held.cause
    assert "search-0 to search-2" in held.cause
    assert held.evidence[0].quote == "Partition:        3"


def test_an_hpa_at_its_maximum_names_the_request_behind_its_utilisation() -> None:
    """184% for 92m of use means a request of about 50m: modest use read as overload."""
    hpa = """Name:                                                  web
Namespace:                                             shop
Reference:                                             Deployment/web
Metrics:                                               ( current / target )
  resource cpu on pods  (as a percentage of request):  184% (92m) / 70%
Min replicas:                                          2
Max replicas:                                          12
Deployment pods:                                       12 current / 12 desired
"""
    labels = {"alertname": "KubeHpaMaxedOut", "namespace": "shop", "horizontalpodautoscaler": "web"}
    args = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "name": "web", "namespace": "shop"}
    state = _state({"title": "KubeHpaMaxedOut", "labels": labels}, [
        rules.CallRecord(tool="resources_get", args=args, output=hpa)
    ])  # fmt: skip
    (maxed,) = [f for f in rules.findings(state) if f.rule == "hpa_maxed"]
    assert "92m CPU against a request of about 50m" in maxed.cause
    assert "request was lowered" in maxed.cause
