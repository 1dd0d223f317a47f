"""Readings added while generalising the rule path: each reads what an output says, on outputs written here in
kubectl's layouts (object names are made up).

- A runtime told to use more memory than its container may (`-Xmx`, `--max-old-space-size`, `GOMEMLIMIT`).
- "X not set, tracing disabled" is an optional setting the app does without, not a missing one.
- Prose that names an application (`Containers of web-api in namespace shop`).
- A finished pod (Completed, 0/1 ready) is not a failing one; a restarting pod is.
- A host configured in a ConfigMap's description is fixed at its key.
- The report's evidence puts the links of the lead's chain before repeated symptoms.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.investigations import rules
from shared.investigations.rules.log_categories import classify
from shared.investigations.rules.objects import ObjRef, alert_objects, owner_by_name
from shared.investigations.rules.state import CallRecord
from tests.unit.investigations.test_walk import Investigation

POD = """Name:             web-api-5d7c9f8b6d-2xkqp
Namespace:        shop
Status:           Running
Controlled By:    ReplicaSet/web-api-5d7c9f8b6d
Containers:
  web-api:
    Image:          registry.example/web-api:2.7.4
    State:          Running
      Started:      Wed, 01 Apr 2026 03:36:02 +0000
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Ready:          True
    Restart Count:  4
    Limits:
      cpu:     2
      memory:  {limit}
    Requests:
      cpu:      1
      memory:   {limit}
    Environment Variables from:
      web-api-jvm  ConfigMap  Optional: false
Events:  <none>
"""

ALERT: dict[str, Any] = {
    "title": "KubePodCrashLooping",
    "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "web-api-5d7c9f8b6d-2xkqp"},
    "starts_at": "2026-04-01T03:40:00Z",
}


def _investigated(*answers: tuple[str, dict[str, Any], str]) -> Investigation:
    inv = Investigation(ALERT)
    inv.made(*answers)
    return inv


def _pod(limit: str) -> tuple[str, dict[str, Any], str]:
    args = {"name": "web-api-5d7c9f8b6d-2xkqp", "namespace": "shop"}
    return ("pods_get", args, POD.format(limit=limit))


def _log(text: str) -> tuple[str, dict[str, Any], str]:
    return ("pods_log", {"name": "web-api-5d7c9f8b6d-2xkqp", "namespace": "shop", "previous": True}, text)


@pytest.mark.parametrize(
    ("setting", "limit", "said"),
    [
        ("Picked up JAVA_TOOL_OPTIONS: -Xms3g -Xmx3g -XX:+UseG1GC", "2Gi", "3Gi"),
        ("exec java -Xmx2048m -jar app.jar", "2Gi", "2Gi"),
        ("node --max-old-space-size=4096 server.js", "3Gi", "4Gi"),
        ("GOMEMLIMIT=1GiB", "1Gi", "1Gi"),
    ],
)
def test_a_runtime_set_to_the_limit_or_above_is_the_cause_of_the_oom(setting: str, limit: str, said: str) -> None:
    inv = _investigated(_pod(limit), _log(setting + "\nstarted\nrendering batch 12"))
    found = [f for f in rules.findings(inv.state) if f.rule == "heap_over_limit"]
    assert found, "the runtime's setting was not compared with the limit"
    assert said in found[0].cause
    assert limit in found[0].cause
    assert any(setting in e.quote for e in found[0].evidence)
    assert "below the limit" in found[0].remediation[0]


def test_a_runtime_well_under_the_limit_is_not_blamed() -> None:
    inv = _investigated(_pod("4Gi"), _log("Picked up JAVA_TOOL_OPTIONS: -Xmx2g\nstarted"))
    assert not [f for f in rules.findings(inv.state) if f.rule == "heap_over_limit"]
    assert [f for f in rules.findings(inv.state) if f.rule == "oom"]


def test_the_heap_is_read_from_a_configmap_when_the_logs_do_not_print_it() -> None:
    cm = "Name:  web-api-jvm\nNamespace: shop\n\nData\n====\nJAVA_TOOL_OPTIONS:\n----\n-Xms3g -Xmx3g\n"
    inv = _investigated(
        _pod("2Gi"),
        _log("started\nrendering batch 12"),
        ("resources_get", {"apiVersion": "v1", "kind": "ConfigMap", "name": "web-api-jvm", "namespace": "shop"}, cm),
    )
    found = [f for f in rules.findings(inv.state) if f.rule == "heap_over_limit"]
    assert found
    assert found[0].evidence[0].tool == "resources_get"


@pytest.mark.parametrize(
    "line",
    [
        '{"level":"warn","msg":"OTEL_EXPORTER_OTLP_ENDPOINT not set, tracing disabled"}',
        "WARN SENTRY_DSN is not set, error reporting disabled",
        "CACHE_TTL not set, using default 300s",
    ],
)
def test_an_optional_setting_the_app_does_without_is_not_a_missing_one(line: str) -> None:
    assert classify(line)[0] != "missing_config"
    inv = _investigated(_pod("2Gi"), _log(line + "\nlistening on :8080"))
    assert not [f for f in rules.findings(inv.state) if f.rule in ("env_missing", "log_missing_config")]


def test_a_required_setting_that_is_missing_still_is() -> None:
    assert classify("FATAL DATABASE_URL is not set")[0] == "missing_config"


@pytest.mark.parametrize(
    ("text", "app"),
    [
        ("Containers of report-engine in namespace analytics restarted 7 times.", "report-engine"),
        ("Pods of billing-worker keep restarting.", "billing-worker"),
        ("ledger-sync in namespace finance has no ready replicas.", "ledger-sync"),
    ],
)
def test_prose_names_the_application(text: str, app: str) -> None:
    found = alert_objects({"title": "ContainerRestarts", "description": text, "labels": {"alertname": "X"}})
    assert app in found.apps


def test_a_completed_pod_is_not_read_as_failing_and_a_restarting_one_is() -> None:
    listing = (
        "NAME                          READY   STATUS      RESTARTS     AGE\n"
        "web-api-5d7c9f8b6d-2xkqp      1/1     Running     4 (4m ago)   10h\n"
        "web-ui-66c8d7f9b4-lq2wz       1/1     Running     0            6d\n"
        "nightly-29582400-8xvdn        0/1     Completed   0            3h\n"
    )
    alert = {"title": "Restarts", "description": "Containers in namespace shop restart.", "labels": {"alertname": "R"}}
    inv = Investigation(alert)
    inv.made(("pods_list_in_namespace", {"namespace": "shop"}, listing))
    names = {c.args.get("name") for c in inv.next()}
    assert "web-api-5d7c9f8b6d-2xkqp" in names
    assert "nightly-29582400-8xvdn" not in names


def test_a_host_configured_in_a_configmap_is_fixed_at_its_key_and_leads_with_its_chain() -> None:
    cm = (
        "Name:         web-api-config\nNamespace:    shop\n\nData\n====\nLOG_FORMAT:\n----\njson\n\n"
        "CACHE_ADDR:\n----\ncache-main.data.svc.cluster.local:6379\n"
    )
    log = (
        '{"level":"warn","msg":"OTEL_EXPORTER_OTLP_ENDPOINT not set, tracing disabled"}\n'
        '{"level":"error","msg":"ping failed","error":"dial tcp: lookup cache-main.data.svc.cluster.local on '
        '10.96.0.10:53: no such host"}\n'
    )
    inv = _investigated(
        _pod("2Gi"),
        _log(log),
        ("resources_get", {"apiVersion": "v1", "kind": "ConfigMap", "name": "web-api-config", "namespace": "shop"}, cm),
    )
    found = [f for f in rules.findings(inv.state) if f.rule == "configured_bad_host"]
    assert found
    assert "CACHE_ADDR" in found[0].cause
    assert found[0].remediation[0].startswith("update CACHE_ADDR in ConfigMap web-api-config")
    report = rules.report(inv.state)
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in (report["root_cause"] or "")
    assert "update CACHE_ADDR" in report["analysis"]


# ---- placement: a volume pinned where no node is; a DaemonSet pod's own node ----------------------------------

PENDING_POD = """Name:             db-2
Namespace:        data
Status:           Pending
Controlled By:    {owner}
Containers:
  db:
    Image:      registry.example/db:1.2
    Requests:
      cpu:      500m
      memory:   1Gi
Conditions:
  Type           Status
  PodScheduled   False
Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: {why}. preemption: 0/3 nodes.
"""

PV = """Name:              pvc-0d1e
StorageClass:      fast
Status:            Bound
Claim:             data/storage-db-2
Node Affinity:
  Required Terms:
    Term 0:        topology.kubernetes.io/zone in [zone-c]
Events:            <none>
"""

# kubernetes-mcp-server lists cluster-scoped kinds under an `APIVERSION  KIND  NAME` header.
NODES = (
    "APIVERSION   KIND   NAME     STATUS   ROLES    AGE   VERSION   LABELS\n"
    "v1           Node   node-a   Ready    <none>   5d    v1.30.1   kubernetes.io/hostname=node-a,"
    "topology.kubernetes.io/zone=zone-a\n"
    "v1           Node   node-b   Ready    <none>   5d    v1.30.1   kubernetes.io/hostname=node-b,"
    "topology.kubernetes.io/zone=zone-b\n"
)


def _pending(owner: str, why: str, *more: tuple[str, dict[str, Any], str]) -> Investigation:
    alert = {"title": "KubePodNotReady", "labels": {"alertname": "KubePodNotReady", "namespace": "data", "pod": "db-2"}}
    inv = Investigation(alert)
    pod = PENDING_POD.format(owner=owner, why=why)
    inv.made(("pods_get", {"name": "db-2", "namespace": "data"}, pod), *more)
    return inv


def test_a_volume_pinned_to_a_zone_without_nodes_is_named_with_the_zones_that_have_them() -> None:
    inv = _pending(
        "StatefulSet/db",
        "3 node(s) had volume node affinity conflict",
        ("resources_get", {"apiVersion": "v1", "kind": "PersistentVolume", "name": "pvc-0d1e"}, PV),
        ("resources_list", {"apiVersion": "v1", "kind": "Node"}, NODES),
    )
    found = [f for f in rules.findings(inv.state) if f.rule == "volume_zone"]
    assert found
    assert "zone-c" in found[0].cause
    assert "zone-a, zone-b" in found[0].cause
    assert "storage-db-2" in found[0].remediation[0]
    assert rules.report(inv.state)["root_cause"] == found[0].cause


def test_a_volume_in_a_zone_that_has_a_node_is_not_blamed() -> None:
    inv = _pending(
        "StatefulSet/db",
        "3 node(s) had volume node affinity conflict",
        ("resources_get", {"apiVersion": "v1", "kind": "PersistentVolume", "name": "pvc-0d1e"}, PV),
        ("resources_list", {"apiVersion": "v1", "kind": "Node"}, NODES.replace("zone-b", "zone-c")),
    )
    assert not [f for f in rules.findings(inv.state) if f.rule == "volume_zone"]


def test_the_planner_lists_the_nodes_when_the_scheduler_names_a_placement_reason() -> None:
    inv = _pending("StatefulSet/db", "3 node(s) had volume node affinity conflict")
    assert any(c.args.get("kind") == "Node" and not c.args.get("name") for c in inv.next())


def test_a_daemonset_pod_is_not_told_to_fix_the_affinity_that_binds_it_to_its_node() -> None:
    why = "1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector"
    inv = _pending("DaemonSet/agent", why)
    found = next(f for f in rules.findings(inv.state) if f.rule == "scheduling")
    assert "Insufficient memory" in found.cause
    assert "1Gi" in found.cause
    assert "didn't match" not in found.cause
    assert not any("nodeSelector" in r or "label" in r for r in found.remediation)


def test_a_deployment_pod_still_hears_about_its_selector() -> None:
    why = "1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector"
    inv = _pending("ReplicaSet/db-7c9d6f5b8", why)
    found = next(f for f in rules.findings(inv.state) if f.rule == "scheduling")
    assert "didn't match" in found.cause


# ---- two revisions of one workload -------------------------------------------------------------------------

REVISION_POD = """Name:             agent-{suffix}
Namespace:        data
Labels:           app=agent
                  controller-revision-hash={revision}
Status:           {status}
Controlled By:    DaemonSet/agent
Containers:
  agent:
    Image:      registry.example/agent:{version}
    Requests:
      cpu:      100m
      memory:   {memory}
Events:  <none>
"""

LISTING = (
    "NAME          READY   STATUS    RESTARTS   AGE   LABELS\n"
    "agent-new01   1/1     Running   0          40m   app=agent,controller-revision-hash=bbb222\n"
    "agent-old01   1/1     Running   0          17d   app=agent,controller-revision-hash=aaa111\n"
    "agent-new02   0/1     Pending   0          38m   app=agent,controller-revision-hash=bbb222\n"
)


def test_a_healthy_pod_of_the_other_revision_is_described_and_what_changed_is_said() -> None:
    alert = {
        "title": "KubeDaemonSetRolloutStuck",
        "labels": {"alertname": "X", "namespace": "data", "daemonset": "agent"},
    }
    inv = Investigation(alert)
    ds = "Name:           agent\nNamespace:      data\nSelector:       app=agent\n"
    inv.made(
        ("resources_get", {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "namespace": "data"}, ds),
        ("pods_list_in_namespace", {"namespace": "data", "labelSelector": "app=agent"}, LISTING),
    )
    names = {c.args.get("name") for c in inv.next()}
    assert "agent-old01" in names, "the healthy pod of the previous revision is compared"
    assert "agent-new01" not in names, "a healthy pod of the failing revision explains nothing"
    new = REVISION_POD.format(suffix="new02", revision="bbb222", status="Pending", version="2.0", memory="1Gi")
    old = REVISION_POD.format(suffix="old01", revision="aaa111", status="Running", version="1.9", memory="256Mi")
    inv.made(
        ("pods_get", {"name": "agent-new02", "namespace": "data"}, new),
        ("pods_get", {"name": "agent-old01", "namespace": "data"}, old),
    )
    found = next(f for f in rules.findings(inv.state) if f.rule == "template_change")
    # A pending pod's requests come before its image: they are what the scheduler weighs.
    assert found.cause.index("memory request: 256Mi → 1Gi") < found.cause.index("image")
    assert "back to 256Mi" in found.remediation[0]


# ---- a DaemonSet's pods on nodes it does not tolerate -------------------------------------------------------

DS = """Name:           agent
Namespace:      obs
Selector:       app=agent
Number of Nodes Misscheduled: 1
Pod Template:
  Containers:
   agent:
    Image:      registry.example/agent:1
  Node-Selectors:  kubernetes.io/os=linux
  Tolerations:     node-role.kubernetes.io/control-plane:NoSchedule op=Exists
                   gpu=true:NoSchedule
Events:                <none>
"""
DS_PODS = (
    "NAME          READY   STATUS    RESTARTS   AGE   IP          NODE\n"
    "agent-aaaaa   1/1     Running   0          9d    10.0.0.1    pool-a-1\n"
    "agent-bbbbb   1/1     Running   0          9d    10.0.0.2    pool-a-2\n"
    "agent-ccccc   1/1     Running   0          9d    10.0.0.3    pool-b-1\n"
)
POOL_NODES = (
    "NAME       STATUS   ROLES    AGE   VERSION   LABELS\n"
    "pool-a-1   Ready    <none>   9d    v1.30.1   example.com/pool=a\n"
    "pool-a-2   Ready    <none>   9d    v1.30.1   example.com/pool=a\n"
    "pool-b-1   Ready    <none>   9d    v1.30.1   example.com/pool=b\n"
)


@pytest.mark.parametrize(
    ("taints", "blamed"),
    [
        ("Taints:             team=ml:NoSchedule", True),
        ("Taints:             gpu=true:NoSchedule", False),  # tolerated by key, value and effect
        ("Taints:             node-role.kubernetes.io/control-plane:NoSchedule", False),  # op=Exists
        ("Taints:             gpu=false:NoSchedule", True),  # same key, another value
        ("Taints:             <none>", False),
    ],
)
def test_a_daemonset_pod_on_a_node_with_a_taint_it_does_not_tolerate(taints: str, blamed: bool) -> None:
    alert = {
        "title": "KubeDaemonSetMisScheduled",
        "labels": {"alertname": "X", "namespace": "obs", "daemonset": "agent"},
    }
    inv = Investigation(alert)
    inv.made(("resources_get", {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "namespace": "obs"}, DS))
    inv.made(
        ("pods_list_in_namespace", {"namespace": "obs", "labelSelector": "app=agent"}, DS_PODS),
        ("resources_list", {"apiVersion": "v1", "kind": "Node"}, POOL_NODES),
    )
    described = {c.args.get("name") for c in inv.next() if c.args.get("kind") == "Node"}
    assert described == {"pool-a-1", "pool-b-1"}, "one node per pool the pods run on"
    node = f"Name:               pool-b-1\nRoles:              <none>\n{taints}\nUnschedulable:      false\n"
    inv.made(("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "pool-b-1"}, node))
    found = [f for f in rules.findings(inv.state) if f.rule == "daemonset_taint"]
    assert bool(found) is blamed
    if found:
        assert "agent-ccccc" in found[0].cause
        assert "does not evict" in found[0].cause
        assert f"add a toleration for {taints.split()[-1]}" in found[0].remediation[0]


# ---- a node filesystem running out: who writes to it ------------------------------------------------------

NODE = """Name:               node-7
Roles:              <none>
Taints:             <none>
Conditions:
  Type             Status  Reason                       Message
  ----             ------  ------                       -------
  MemoryPressure   False   KubeletHasSufficientMemory   kubelet has sufficient memory available
  DiskPressure     False   KubeletHasNoDiskPressure     kubelet has no disk pressure
  Ready            True    KubeletReady                 kubelet is posting ready status
"""
NODE_PODS = (
    "NAMESPACE     NAME                    READY   STATUS      RESTARTS   AGE   IP          NODE\n"
    "kube-system   kube-proxy-m2z6c        1/1     Running     0          43d   10.0.0.38   node-7\n"
    "web           img-cache-7pzq4         1/1     Running     0          43d   10.0.5.23   node-7\n"
    "web           nightly-29417630-k8w2c  0/1     Completed   0          24m   10.0.5.70   node-7\n"
)
CACHE_DS = """Name:           img-cache
Namespace:      web
Selector:       app=img-cache
Pod Template:
  Containers:
   nginx:
    Image:      nginx:1.27
  Volumes:
   cache:
    Type:          HostPath (bare host directory volume)
    Path:          /data/img-cache
    HostPathType:  DirectoryOrCreate
"""
FS_ALERT: dict[str, Any] = {
    "title": "NodeFilesystemAlmostOutOfFiles",
    "description": "Filesystem on /dev/sdb1, mounted on /data, at node-7 has only 3% available inodes left.",
    "labels": {
        "alertname": "NodeFilesystemAlmostOutOfFiles", "instance": "node-7", "mountpoint": "/data",
        "device": "/dev/sdb1", "namespace": "monitoring", "pod": "node-exporter-q4x7b", "job": "node-exporter",
    },
}  # fmt: skip


def test_the_pod_that_fills_a_node_filesystem_is_found_through_its_hostpath_and_failing_writes() -> None:
    inv = Investigation(FS_ALERT)
    inv.made(("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "node-7"}, NODE))
    listed = inv.next()
    assert ("pods_list", {"fieldSelector": "spec.nodeName=node-7"}) in [(c.tool, c.args) for c in listed]
    inv.made(("pods_list", {"fieldSelector": "spec.nodeName=node-7"}, NODE_PODS))
    asked = {(c.tool, c.args.get("name")) for c in inv.next()}
    assert ("pods_log", "img-cache-7pzq4") in asked
    assert not {n for _, n in asked} & {"kube-proxy-m2z6c", "nightly-29417630-k8w2c"}, "system and finished pods"
    failed = 'failed to get resource: pods "img-cache-7pzq4" not found'
    log = '2025/12/05 11:51:08 [crit] 29#29: open() "/var/cache/x/0000004505" failed (28: No space left on device)'
    inv.made(
        ("resources_get", {"apiVersion": "v1", "kind": "Pod", "name": "img-cache-7pzq4", "namespace": "web"}, failed),
        ("pods_log", {"name": "img-cache-7pzq4", "namespace": "web"}, log),
    )
    inv.state.calls[-2].is_error = True
    # The pod could not be read: its name says which DaemonSet owns it, and that holds the volume.
    owner = ("resources_get", "img-cache")
    assert owner in {(c.tool, c.args.get("name")) for c in inv.next() if c.args.get("kind") == "DaemonSet"}
    ds_args = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "img-cache", "namespace": "web"}
    inv.made(("resources_get", ds_args, CACHE_DS))
    found = next(f for f in rules.findings(inv.state) if f.rule == "node_filesystem")
    assert "/data/img-cache" in found.cause
    assert "inodes" in found.cause
    assert "DiskPressure False" in found.cause
    assert "No space left on device" in found.cause
    assert "file count" in found.remediation[0]


@pytest.mark.parametrize(
    ("pod", "owner"),
    [
        ("web-7c9d6f5b8-x2x9q", ("Deployment", "web")),
        ("agent-x2x9q", ("DaemonSet", "agent")),
        ("db-0", ("StatefulSet", "db")),
        ("report-29582400-8xvdn", None),
        ("plain", None),
    ],
)
def test_a_pods_generated_name_implies_its_owner(pod: str, owner: tuple[str, str] | None) -> None:
    found = owner_by_name(ObjRef("Pod", pod, "ns"))
    assert (None if found is None else (found.kind, found.name)) == owner


# ---- an HTTPS probe failing at an Ingress whose backend answers ---------------------------------------------

INGRESS = """Name:             shop
Namespace:        web
Ingress Class:    nginx
TLS:
  shop-tls-v2 terminates shop.example.com
Rules:
  Host              Path  Backends
  ----              ----  --------
  shop.example.com
                    /     storefront:80 ({endpoints})
Events:           <none>
"""


@pytest.mark.parametrize(("endpoints", "blamed"), [("10.0.1.23:8080,10.0.2.17:8080", True), ("<none>", False)])
def test_the_tls_secret_of_an_ingress_whose_backend_answers_is_named_for_a_person_to_check(
    endpoints: str, blamed: bool
) -> None:
    alert = {
        "title": "BlackboxProbeFailed",
        "labels": {"alertname": "BlackboxProbeFailed", "instance": "https://shop.example.com/health"},
    }
    inv = Investigation(alert)
    args = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "shop", "namespace": "web"}
    inv.made(("resources_get", args, INGRESS.format(endpoints=endpoints)))
    found = [f for f in rules.findings(inv.state) if f.rule == "tls_secret_unverified"]
    assert bool(found) is blamed
    if found:
        assert "shop-tls-v2" in found[0].cause
        assert "kubectl get secret shop-tls-v2 -n web" in found[0].remediation[0]
        assert not any(c.args.get("kind") == "Secret" for c in inv.next()), "Secrets are never read"


# ---- a scrape target that is down while its pods run -----------------------------------------------------------

MONITOR = """apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: checkout
  namespace: shop
spec:
  endpoints:
  - interval: 30s
    path: /metrics
    port: http-mgmt
  selector:
    matchLabels:
      app: checkout
"""
APP_LOG = (
    "2025-12-08T10:21:55.297Z  INFO 1 --- [main] o.s.b.a.e.web.EndpointLinksResolver : Exposing 2 endpoints "
    "beneath base path '/actuator'\n"
    + "".join(
        f'10.8.4.12 - - [08/Dec/2025:10:2{i}:09 +0000] "GET /metrics HTTP/1.1" 404 117 "-" "Prometheus/3.5.0"\n'
        f"2025-12-08T10:2{i}:24Z INFO order accepted id={i}\n"
        for i in range(5)
    )
)


def test_a_scrape_path_the_app_no_longer_serves_is_named_with_where_it_serves_now() -> None:
    alert = {
        "title": "TargetDown",
        "labels": {"alertname": "TargetDown", "job": "checkout", "service": "checkout", "namespace": "shop"},
    }
    inv = Investigation(alert)
    first = {(c.args.get("kind"), c.args.get("name")) for c in inv.next()}
    assert {("Service", "checkout"), ("ServiceMonitor", "checkout")} <= first
    sm = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "name": "checkout", "namespace": "shop"}
    inv.made(
        ("resources_get", sm, MONITOR),
        ("pods_log", {"name": "checkout-58f7c9d6b4-4mxtq", "namespace": "shop"}, APP_LOG),
    )
    found = next(f for f in rules.findings(inv.state) if f.rule == "scrape_path")
    assert "HTTP 404" in found.cause
    assert "path /metrics on port http-mgmt" in found.cause
    assert "/actuator/prometheus" in found.remediation[0]


# ---- alerts that name no object ------------------------------------------------------------------------------


def test_an_alert_that_names_no_object_reads_the_pods_named_like_it() -> None:
    from shared.investigations.rules.alert_words import alert_words, matching_rows
    from shared.investigations.rules.parse import table

    alert = {
        "title": "KafkaConsumergroupLagHigh",
        "labels": {"alertname": "KafkaConsumergroupLagHigh", "consumergroup": "ledger-sync", "topic": "payments",
                   "severity": "warning", "job": "kafka-exporter"},
    }  # fmt: skip
    words = alert_words(alert)
    assert {"ledger", "sync", "payments", "kafka", "consumergroup"} <= words
    assert not words & {"warning", "high", "lag"}
    listing = (
        "NAMESPACE   NAME                           READY   STATUS    RESTARTS   AGE\n"
        "shop        web-7c9d6f5b8-x2x9q            1/1     Running   0          2d\n"
        "finance     ledger-sync-5f9c7b8d6-hn3vx    1/1     Running   0          2d\n"
        "data        kafka-broker-0                 1/1     Running   0          9d\n"
    )
    assert [r.get("NAME") for r in matching_rows(table(listing), words)] == [
        "ledger-sync-5f9c7b8d6-hn3vx", "kafka-broker-0",
    ]  # fmt: skip
    inv = Investigation(alert)
    assert ("pods_list", {}) in [(c.tool, c.args) for c in inv.next()], "every namespace's pods, when none is named"
    inv.made(("pods_list", {}, listing))
    logs = {c.args.get("name") for c in inv.next() if c.tool == "pods_log"}
    assert "ledger-sync-5f9c7b8d6-hn3vx" in logs
    assert "web-7c9d6f5b8-x2x9q" not in logs


def test_a_probed_cluster_dns_name_is_the_service_and_its_namespace_is_searched() -> None:
    alert = {
        "title": "BlackboxProbeFailed",
        "labels": {"alertname": "BlackboxProbeFailed", "instance": "http://orders.shop.svc:80/health"},
    }
    assert ObjRef("Service", "orders", "shop") in alert_objects(alert).objects
    inv = Investigation(alert)
    service = (
        "Name:              orders\nNamespace:         shop\nSelector:          app=orders\nEndpoints:  10.0.0.5:8080\n"
    )
    inv.made(("resources_get", {"apiVersion": "v1", "kind": "Service", "name": "orders", "namespace": "shop"}, service))
    kinds = {c.args.get("kind") for c in inv.next()}
    assert "NetworkPolicy" in kinds, "what may drop the probe's traffic"


# ---- a drain a budget blocks; a Service sending to a port nobody listens on ----------------------------------

CORDONED = """Name:               node-3
Roles:              <none>
Taints:             node.kubernetes.io/unschedulable:NoSchedule
Unschedulable:      true
Conditions:
  Type             Status  Reason                       Message
  ----             ------  ------                       -------
  Ready            True    KubeletReady                 kubelet is posting ready status
"""
BUDGETS = (
    "NAMESPACE   NAME      MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n"
    "shop        web-pdb   N/A             1                 1                     90d\n"
    "ledger      db-pdb    N/A             0                 0                     12d\n"
)


def test_a_cordoned_node_and_a_budget_that_allows_no_disruption_explain_a_drain_that_does_not_finish() -> None:
    alert = {"title": "NodeUnschedulableTooLong", "labels": {"alertname": "NodeUnschedulableTooLong", "node": "node-3"}}
    inv = Investigation(alert)
    inv.made(("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "node-3"}, CORDONED))
    asked = inv.next()
    assert any(c.args.get("kind") == "PodDisruptionBudget" and "namespace" not in c.args for c in asked)
    inv.made(("resources_list", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"}, BUDGETS))
    found = [f for f in rules.findings(inv.state) if f.rule == "drain_blocked"]
    assert [f.subject for f in found] == ["db-pdb"], "only the budget that allows no disruption"
    assert "ledger/db-pdb allows 0 disruptions" in found[0].cause
    assert "maxUnavailable to 1" in found[0].remediation[0]


SERVICE = """Name:              checkout
Namespace:         shop
Selector:          app=checkout
Type:              ClusterIP
Port:              http  80/TCP
TargetPort:        8080/TCP
Endpoints:         10.0.1.5:8080,10.0.2.7:8080
"""
CHECKOUT_POD = """Name:             checkout-7c9d6f5b8-x2x9q
Namespace:        shop
Status:           Running
Containers:
  app:
    Image:          registry.example/checkout:3.1
    Port:           3000/TCP
    State:          Running
    Ready:          True
    Restart Count:  0
Events:  <none>
"""


@pytest.mark.parametrize(("port", "blamed"), [("3000", True), ("8080", False)])
def test_a_service_whose_target_port_its_pods_do_not_listen_on(port: str, blamed: bool) -> None:
    alert = {"title": "BlackboxProbeFailed", "labels": {"alertname": "BlackboxProbeFailed",
                                                        "instance": "http://checkout.shop.svc/health"}}  # fmt: skip
    inv = Investigation(alert)
    pod_args = {"name": "checkout-7c9d6f5b8-x2x9q", "namespace": "shop"}
    inv.made(
        ("resources_get", {"apiVersion": "v1", "kind": "Service", "name": "checkout", "namespace": "shop"}, SERVICE),
        ("pods_get", pod_args, CHECKOUT_POD.replace("3000", port)),
        ("pods_log", pod_args, f"INFO server listening on :{port}\nINFO ready"),
    )
    found = [f for f in rules.findings(inv.state) if f.rule == "target_port"]
    assert bool(found) is blamed
    if found:
        assert "port 8080 (targetPort)" in found[0].cause
        assert "listen on 3000" in found[0].cause
        assert "targetPort to 3000" in found[0].remediation[0]


# ---- an exec probe that cannot pass; a container that exits silently; a pod held by a scheduling gate -----------

NOT_READY_POD = """Name:             worker-0
Namespace:        jobs
Status:           Running
Containers:
  worker:
    Image:          busybox
    Command:
      sh
      -c
      while true; do sleep 5; done
    State:          Running
    Ready:          False
    Restart Count:  0
    Readiness:      exec [sh -c {probe}] delay=5s timeout=1s period=5s #success=1 #failure=3
Events:
  Type     Reason     Age                 From     Message
  ----     ------     ----                ----     -------
  Warning  Unhealthy  2m (x40 over 15m)   kubelet  Readiness probe failed:
"""


@pytest.mark.parametrize(("probe", "never"), [("exit 1", True), ("false", True), ("test -f /tmp/ready", False)])
def test_an_exec_probe_is_read_as_the_command_it_runs(probe: str, never: bool) -> None:
    alert = {
        "title": "KubePodNotReady",
        "labels": {"alertname": "KubePodNotReady", "namespace": "jobs", "pod": "worker-0"},
    }
    inv = Investigation(alert)
    inv.made(("pods_get", {"name": "worker-0", "namespace": "jobs"}, NOT_READY_POD.format(probe=probe)))
    found = next(f for f in rules.findings(inv.state) if f.rule == "probe")
    assert f"`sh -c {probe}`" in found.cause
    assert ("can never succeed" in found.cause) is never
    assert ("real health check" in found.remediation[0]) is never


CRASHED = """Name:             etl-6b8d9f7c5-k2vxn
Namespace:        data
Status:           Running
Containers:
  etl:
    Image:          registry.example/etl:2
    Command:
      python
      /app/run.py
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          False
    Restart Count:  9
Events:  <none>
"""


@pytest.mark.parametrize(
    ("log", "silent"),
    [
        ("The pod etl-6b8d9f7c5-k2vxn in namespace data has not logged any message yet", True),
        ("", True),
        ("Traceback (most recent call last):\n  File run.py\nKeyError: 'DB_URL'", False),
    ],
)
def test_a_container_that_exits_without_a_word_is_said_to(log: str, silent: bool) -> None:
    alert = {
        "title": "KubePodCrashLooping",
        "labels": {"alertname": "X", "namespace": "data", "pod": "etl-6b8d9f7c5-k2vxn"},
    }
    inv = Investigation(alert)
    args = {"name": "etl-6b8d9f7c5-k2vxn", "namespace": "data"}
    inv.made(("pods_get", args, CRASHED), ("pods_log", {**args, "previous": True}, log))
    found = [f for f in rules.findings(inv.state) if f.rule == "silent_exit"]
    assert bool(found) is silent
    if found:
        assert "python /app/run.py" in found[0].cause
        assert "exits with code 1" in found[0].cause


GATED = """apiVersion: v1
kind: Pod
metadata:
  name: train-5c9f7b8d64-7kq2x
  namespace: ml
spec:
  containers:
  - image: registry.example/train:1
    name: train
  schedulingGates:
  - name: quota-keeper.example.com/admitted
status:
  conditions:
  - message: Scheduling is blocked due to non-empty scheduling gates
    reason: SchedulingGated
    status: "False"
    type: PodScheduled
  phase: Pending
"""


def test_a_pod_held_by_a_scheduling_gate_names_the_gate_and_whose_it_is() -> None:
    alert = {
        "title": "KubePodNotReady",
        "labels": {"alertname": "X", "namespace": "ml", "pod": "train-5c9f7b8d64-7kq2x"},
    }
    inv = Investigation(alert)
    inv.made(("pods_get", {"name": "train-5c9f7b8d64-7kq2x", "namespace": "ml"}, GATED))
    found = next(f for f in rules.findings(inv.state) if f.rule == "scheduling_gate")
    assert "quota-keeper.example.com/admitted" in found.cause
    assert "quota-keeper controller" in found.cause
    assert "kubectl patch pod train-5c9f7b8d64-7kq2x -n ml --type=json" in found.remediation[0]


def test_log_lines_about_what_the_alert_measures_lead() -> None:
    from shared.investigations.rules.state_rules import focus_words

    alert: dict[str, Any] = {
        "title": "AlertmanagerFailedToSendAlerts",
        "labels": {"alertname": "AlertmanagerFailedToSendAlerts", "integration": "slack", "namespace": "monitoring",
                   "pod": "alertmanager-main-1", "job": "alertmanager-main", "reason": "clientError"},
    }  # fmt: skip
    assert focus_words(alert) == {"slack", "clienterror"}
    log = (
        'level=WARN msg="Notify attempt failed" integration=pagerduty[0] err="Post \\"https://events.example/v2\\": '
        'context deadline exceeded"\n'
        'level=ERROR msg="Notify for alerts failed" err="team/slack[0]: unexpected status code 404: no_service"\n'
    )
    inv = Investigation(alert)
    args = {"name": "alertmanager-main-1", "namespace": "monitoring"}
    inv.made(("pods_log", args, log))
    report = rules.report(inv.state)
    assert "404" in (report["root_cause"] or "")
    assert "client error" in (report["root_cause"] or "")


def test_the_workload_the_kubelet_keeps_evicting_for_a_resource_is_the_one_to_bound() -> None:
    events = (
        "LAST SEEN   TYPE      REASON    OBJECT                        MESSAGE\n"
        "34m         Warning   Evicted   pod/etl-7b5c9f8d6-4jx9t       The node was low on resource: "
        "ephemeral-storage. Threshold quantity: 7622432632, available: 7301544Ki. Container etl was using "
        "33012470Ki, request is 0, has larger consumption of ephemeral-storage.\n"
        "7m          Warning   Evicted   pod/etl-7b5c9f8d6-c7mzs       The node was low on resource: "
        "ephemeral-storage. Threshold quantity: 7622432632, available: 7188212Ki. Container etl was using "
        "31874616Ki, request is 0, has larger consumption of ephemeral-storage.\n"
    )
    inv = Investigation({"title": "NodeFilesystemAlmostOutOfSpace", "labels": {"alertname": "X", "node": "n1"}})
    inv.made(("events_list", {"namespace": "data"}, events))
    found = next(f for f in rules.findings(inv.state) if f.rule == "heavy_consumer")
    assert found.subject == "etl"
    assert "2 of its pods were evicted" in found.cause
    assert "up to 31.5Gi" in found.cause
    assert "sizeLimit" in found.remediation[0]


def test_a_table_written_out_of_line_with_its_header_is_read_by_its_own_cells() -> None:
    from shared.investigations.rules.parse import table

    text = (
        "LAST SEEN   TYPE      REASON        OBJECT                                   MESSAGE\n"
        "43m         Warning   FailedMount   pod/web-0                   Unable to attach or mount volumes\n"
    )
    row = table(text)[0]
    assert row.get("OBJECT") == "pod/web-0"
    assert row.get("MESSAGE") == "Unable to attach or mount volumes"


def test_a_mount_that_fails_on_the_node_for_a_bound_claim_says_which_part_fails() -> None:
    events = (
        "LAST SEEN   TYPE      REASON        OBJECT      MESSAGE\n"
        "43m         Warning   FailedMount   pod/web-0   Unable to attach or mount volumes: timed out waiting for "
        "the condition\n"
        '3m          Warning   FailedMount   pod/web-0   MountVolume.SetUp failed for volume "pvc-1" : mount failed: '
        "exit status 32 Output: mount: /var/lib/kubelet/pods/x/volumes/kubernetes.io~nfs/pvc-1: bad option; for "
        "several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program.\n"
    )
    claim = "Name:          data\nNamespace:     shop\nStatus:        Bound\nVolume:        pvc-1\n"
    inv = Investigation(
        {"title": "KubeContainerWaiting", "labels": {"alertname": "X", "namespace": "shop", "pod": "web-0"}}
    )
    inv.made(
        ("events_list", {"namespace": "shop"}, events),
        ("resources_get", {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "data", "namespace": "shop"},
         claim),
    )  # fmt: skip
    found = [f for f in rules.findings(inv.state) if f.rule == "volume"]
    assert len(found) == 1, "one finding per object and rule: the surer reading of the two events"
    assert "mount helper" in found[0].cause
    assert "helper program" in found[0].cause
    assert "claim data is Bound" in found[0].cause
    assert "nfs-common" in found[0].remediation[0]


@pytest.mark.parametrize(
    ("env_line", "host", "blamed"),
    [
        ("INFO Environment: PRODUCTION", "db-staging.internal", True),
        ("INFO profile=prod", "cache.stg.example.net", True),
        ("INFO Environment: PRODUCTION", "db-prod.internal", False),
        ("INFO starting", "db-staging.internal", False),  # nothing says where it runs (namespace: shop)
    ],
)
def test_a_service_of_one_environment_configured_with_anothers_hosts(env_line: str, host: str, blamed: bool) -> None:
    log = f"{env_line}\nERROR Connection refused ({host}:5432)\nERROR Connection refused ({host}:5432)\n"
    inv = Investigation({"title": "HighErrorRate", "labels": {"alertname": "X", "namespace": "shop", "pod": "api-1"}})
    inv.made(("pods_log", {"name": "api-1", "namespace": "shop"}, log))
    found = [f for f in rules.findings(inv.state) if f.rule == "environment_mismatch"]
    assert bool(found) is blamed
    if found:
        assert host in found[0].cause
        assert "roll back" in found[0].remediation[0]


@pytest.mark.parametrize(
    ("values", "leak"), [((1200, 1650, 2300, 2900, 3500, 4090), True), ((4092, 4092, 4092, 4092, 4092), False)]
)
def test_memory_that_only_grows_before_a_failure_is_called_a_leak(values: tuple[int, ...], leak: bool) -> None:
    log = "".join(f'{{"level":"WARN","memory_usage_mb": {v},"message":"Memory usage: {v}MB"}}\n' for v in values)
    log += '{"level":"ERROR","error":"java.lang.OutOfMemoryError: Java heap space"}\n'
    inv = Investigation({"title": "KubePodCrashLooping", "labels": {"alertname": "X", "namespace": "d", "pod": "p-1"}})
    inv.made(("pods_log", {"name": "p-1", "namespace": "d", "previous": True}, log))
    found = [f for f in rules.findings(inv.state) if f.rule == "memory_growth"]
    assert bool(found) is leak
    if found:
        assert "1200 to 4090" in found[0].cause
        assert "leak" in found[0].cause


def test_a_json_listing_is_read_as_a_table_with_its_own_fields() -> None:
    from shared.investigations.rules.parse import table

    listing = (
        '[{"namespace": "flags", "name": "flagd", "ready": "2/2", "image": "flagd:v0.11"},'
        ' {"metadata": {"name": "api-1", "namespace": "shop", "labels": {"app": "api"}},'
        ' "status": {"phase": "Running"}, "spec": {"nodeName": "n1"}}]'
    )
    rows = table(listing)
    assert [(r.get("NAMESPACE"), r.get("NAME")) for r in rows] == [("flags", "flagd"), ("shop", "api-1")]
    assert rows[0].get("IMAGE") == "flagd:v0.11"
    assert (rows[1].get("STATUS"), rows[1].get("NODE"), rows[1].get("LABELS")) == ("Running", "n1", "app=api")


def test_a_rolebinding_meant_for_the_workload_that_binds_another_account() -> None:
    log = (
        "W1002 08:00:07.000000 1 reflector.go:547] failed to list *v1.ConfigMap: configmaps is forbidden: User "
        '"system:serviceaccount:flags:flagd" cannot list resource "configmaps" in API group "" in the namespace '
        '"flags"\n'
    )
    bindings = (
        '[{"name": "flagd-configmap-reader", "role": "Role/configmap-reader",'
        ' "subjects": ["ServiceAccount/flags/flagd-sa"]},'
        ' {"name": "ui-editor", "role": "Role/configmap-editor", "subjects": ["ServiceAccount/flags/flagd-ui"]}]'
    )
    inv = Investigation({"title": "FlagErrors", "labels": {"alertname": "X", "namespace": "flags", "pod": "flagd-1"}})
    inv.made(
        ("pods_log", {"name": "flagd-1", "namespace": "flags"}, log),
        ("resources_list", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "namespace": "flags"},
         bindings),
    )  # fmt: skip
    found = next(f for f in rules.findings(inv.state) if f.rule == "binding_wrong_subject")
    assert found.subject == "flagd-configmap-reader"
    assert "binds service account flagd-sa instead" in found.cause
    assert rules.report(inv.state)["root_cause"] == found.cause


def test_a_daemonset_that_skips_a_tainted_pool_and_an_alert_about_the_scrape_job_itself() -> None:
    from shared.investigations.rules.alert_words import subject_names

    alert = {
        "title": "NodeExporterTargetsMissing",
        "labels": {"alertname": "NodeExporterTargetsMissing", "namespace": "obs", "job": "node-agent"},
    }
    assert subject_names(alert) == []  # the alert is not about `node-agent`: its name says node exporter
    about = {
        "title": "NodeAgentTargetsMissing",
        "labels": {"alertname": "NodeAgentTargetsMissing", "job": "node-agent"},
    }
    assert subject_names(about) == ["node-agent"]
    ds = DS.replace("Number of Nodes Misscheduled: 1", "Desired Number of Nodes Scheduled: 2\nNumber of Nodes "
                    "Misscheduled: 0")  # fmt: skip
    inv = Investigation({"title": "KubeDaemonSetNotScheduled", "labels": {"alertname": "X", "namespace": "obs",
                                                                         "daemonset": "agent"}})  # fmt: skip
    inv.made(("resources_get", {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "namespace": "obs"}, ds))
    two_pods = "\n".join(DS_PODS.splitlines()[:3]) + "\n"  # none on pool b
    inv.made(
        ("pods_list_in_namespace", {"namespace": "obs", "labelSelector": "app=agent"}, two_pods),
        ("resources_list", {"apiVersion": "v1", "kind": "Node"}, POOL_NODES),
    )
    described = {c.args.get("name") for c in inv.next() if c.args.get("kind") == "Node"}
    assert described == {"pool-b-1"}, "the node without the DaemonSet's pod"
    node = "Name:               pool-b-1\nTaints:             team=ml:NoSchedule\nUnschedulable:      false\n"
    inv.made(("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "pool-b-1"}, node))
    found = next(f for f in rules.findings(inv.state) if f.rule == "daemonset_untolerated")
    assert "does not run on node pool-b-1" in found.cause
    assert "team=ml:NoSchedule" in found.remediation[0]


def test_an_exported_series_keeps_the_scraped_pod_in_its_own_namespace() -> None:
    found = alert_objects(
        {
            "title": "NginxIngressHigh5xxRate",
            "labels": {"alertname": "NginxIngressHigh5xxRate", "ingress": "web", "exported_namespace": "shop",
                       "exported_service": "web", "namespace": "ingress-nginx", "pod": "ingress-nginx-controller-x1",
                       "job": "ingress-nginx-controller-metrics"},
        }
    ).objects  # fmt: skip
    assert ObjRef("Pod", "ingress-nginx-controller-x1", "ingress-nginx") in found
    assert ObjRef("Ingress", "web", "shop") in found
    assert ObjRef("Service", "web", "shop") in found


def test_ports_are_read_from_yaml_pods_and_from_the_urls_apps_print() -> None:
    from shared.investigations.rules.port_rules import _URL_PORT, _container_ports

    assert _container_ports("spec:\n  containers:\n  - name: web\n    ports:\n    - containerPort: 3000\n") == {"3000"}
    m = _URL_PORT.search("   - Local:        http://localhost:3000")
    assert m is not None
    assert m.group(1) == "3000"


def test_a_failed_scheduling_event_of_a_pod_that_has_a_node_now_is_history() -> None:
    pod = (
        "Name:             dns-1\nNamespace:        kube-system\nNode:             node-1/10.0.0.1\n"
        "Status:           Running\nConditions:\n  Type           Status\n  PodScheduled   True\nEvents:\n"
        "  Type     Reason            Age   From               Message\n"
        "  ----     ------            ----  ----               -------\n"
        "  Warning  FailedScheduling  40m   default-scheduler  0/3 nodes are available: 3 node(s) had untolerated "
        "taint {node.kubernetes.io/not-ready: }.\n"
    )
    inv = Investigation(
        {"title": "TargetDown", "labels": {"alertname": "X", "namespace": "kube-system", "pod": "dns-1"}}
    )
    inv.made(("pods_get", {"name": "dns-1", "namespace": "kube-system"}, pod))
    found = next(f for f in rules.findings(inv.state) if f.rule == "scheduling")
    assert found.symptom
    assert "has a node now" in found.cause


def test_rules_read_other_servers_calls_by_what_they_asked_not_by_argument_names() -> None:
    from shared.investigations.rules.state import InvestigationState, ToolSpec
    from tests.unit.investigations.test_toolshape import KUBECTL_SERVER

    tools: list[ToolSpec] = KUBECTL_SERVER
    state = InvestigationState(alert=ALERT, tools=tools)
    log = "Picked up JAVA_TOOL_OPTIONS: -Xmx3g\nstarted"
    state.calls += [
        CallRecord(tool="execute_kubectl", args={"command": "kubectl describe pod web-api-5d7c9f8b6d-2xkqp -n shop"},
                   output=POD.format(limit="2Gi"), iteration=0),
        CallRecord(tool="execute_kubectl",
                   args={"command": "kubectl logs web-api-5d7c9f8b6d-2xkqp -n shop --previous --tail=500"},
                   output=log, iteration=0),
    ]  # fmt: skip
    found = next(f for f in rules.findings(state) if f.rule == "heap_over_limit")
    assert found.subject == "web-api-5d7c9f8b6d-2xkqp"
    assert found.evidence[0].tool == "execute_kubectl"


def test_an_image_for_one_architecture_fails_on_the_nodes_of_another() -> None:
    def pod(name: str, node: str) -> str:
        return (
            f"Name:             {name}\nNamespace:        maps\nNode:             {node}/10.0.0.1\nStatus:  Running\n"
        )

    def node(name: str, arch: str) -> str:
        return f"Name:               {name}\nLabels:             kubernetes.io/arch={arch}\n"

    listing = (
        "NAME             READY   STATUS             RESTARTS   AGE   IP         NODE\n"
        "tiles-6d8b-7wtr4 0/1     CrashLoopBackOff   11         30m   10.0.0.5   x86-1\n"
        "tiles-6d8b-2kq9v 1/1     Running            0          30m   10.0.0.6   arm-1\n"
    )
    inv = Investigation({"title": "KubeDeploymentReplicasMismatch",
                         "labels": {"alertname": "X", "namespace": "maps", "deployment": "tiles"}})  # fmt: skip
    deployment = "Name:               tiles\nNamespace:          maps\nSelector:           app=tiles\n"
    inv.made(
        ("resources_get", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "tiles", "namespace": "maps"},
         deployment),
        ("pods_list_in_namespace", {"namespace": "maps", "labelSelector": "app=tiles"}, listing),
        ("resources_get", {"apiVersion": "v1", "kind": "Pod", "name": "tiles-6d8b-7wtr4", "namespace": "maps"},
         pod("tiles-6d8b-7wtr4", "x86-1")),
        ("pods_log", {"name": "tiles-6d8b-7wtr4", "namespace": "maps", "previous": True},
         "exec /usr/local/bin/tiles: exec format error"),
    )  # fmt: skip
    asked = {c.args.get("name") for c in inv.next() if c.args.get("kind") == "Node"}
    assert asked == {"x86-1", "arm-1"}, "the failing pod's node and a running sibling's"
    inv.made(
        ("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "x86-1"}, node("x86-1", "amd64")),
        ("resources_get", {"apiVersion": "v1", "kind": "Node", "name": "arm-1"}, node("arm-1", "arm64")),
    )
    found = next(f for f in rules.findings(inv.state) if f.rule == "arch_mismatch")
    assert "built for arm64 only" in found.cause
    assert "linux/arm64,linux/amd64" in found.remediation[0]


def test_a_forbid_cronjob_held_by_a_run_that_never_ends() -> None:
    cronjob = (
        "Name:                          export\nNamespace:                     jobs\nSchedule:                      "
        "30 1 * * *\nConcurrency Policy:            Forbid\nPod Template:\n  Containers:\n   export:\n"
        "    Environment:\n      UPLOAD_TIMEOUT:    0\nActive Jobs:         export-29111130\n"
    )
    job = (
        "Name:             export-29111130\nNamespace:        jobs\nStart Time:       Tue, 15 Jul 2025 01:30:00 +0000\n"
    )
    inv = Investigation({"title": "CronJobNoRecentSuccess", "starts_at": "2025-07-16T01:52:00Z",
                         "labels": {"alertname": "X", "namespace": "jobs", "cronjob": "export"}})  # fmt: skip
    inv.made(
        (
            "resources_get",
            {"apiVersion": "batch/v1", "kind": "CronJob", "name": "export", "namespace": "jobs"},
            cronjob,
        ),
        (
            "resources_get",
            {"apiVersion": "batch/v1", "kind": "Job", "name": "export-29111130", "namespace": "jobs"},
            job,
        ),
    )
    found = next(f for f in rules.findings(inv.state) if f.rule == "cronjob_hung_run")
    assert "Forbid" in found.cause
    assert "still active for 1 day" in found.cause
    assert "UPLOAD_TIMEOUT is 0" in found.cause
    assert "kubectl delete job export-29111130 -n jobs" in found.remediation[0]


def test_the_pods_whose_logins_fail_are_found_by_their_address() -> None:
    from shared.investigations.rules.auth_clients import failing_clients

    server_log = (
        "2025-12-09 07:50:00.000 UTC [1782000] LOG:  connection received: host=10.12.6.41 port=38812\n"
        '2025-12-09 07:50:00.000 UTC [1782000] FATAL:  password authentication failed for user "app"\n'
        "2025-12-09 07:51:00.000 UTC [1782001] LOG:  connection received: host=10.12.4.77 port=1\n"
        "2025-12-09 07:51:00.000 UTC [1782001] LOG:  connection authorized: user=reporting\n"
    )
    assert [ip for ip, _ in failing_clients(server_log)] == ["10.12.6.41"]
    inv = Investigation({"title": "PostgresAuthFailuresHigh",
                         "labels": {"alertname": "X", "namespace": "data", "pod": "db-0"}})  # fmt: skip
    inv.made(("pods_log", {"name": "db-0", "namespace": "data"}, server_log))
    assert ("pods_list", {"fieldSelector": "status.podIP=10.12.6.41"}) in [(c.tool, c.args) for c in inv.next()]
    listing = (
        "NAMESPACE   NAME                        READY   STATUS    RESTARTS   AGE   IP           NODE\n"
        "shop        orders-5d7c9b8f6-4m2qx      1/1     Running   0          6d    10.12.6.41   n1\n"
    )
    inv.made(("pods_list", {"fieldSelector": "status.podIP=10.12.6.41"}, listing))
    found = next(f for f in rules.findings(inv.state) if f.rule == "auth_clients")
    assert "orders-5d7c9b8f6-4m2qx" in found.cause
    assert "Deployment orders" in found.cause
    assert "kubectl rollout restart deployment/orders -n shop" in found.remediation[0]


def test_a_webhook_that_cannot_be_called_is_followed_to_its_service_in_its_own_namespace() -> None:
    from shared.investigations.rules.object_view.messages import About, meaning

    message = (
        'Error creating: Internal error occurred: failed calling webhook "mutate.policy.io": failed to call webhook: '
        'Post "https://policy-svc.policy.svc:443/mutate?timeout=10s": no endpoints available for service "policy-svc"'
    )
    read = meaning(message, About("Job", "batch-1", "acc"))
    assert read is not None
    assert "failurePolicy" in read.why
    assert "Ignore" in read.fixes[0]
    events = (
        "LAST SEEN   TYPE      REASON         OBJECT        MESSAGE\n"
        f"3m          Warning   FailedCreate   Job/batch-1   {message}\n"
    )
    inv = Investigation(
        {"title": "KubeJobNotCompleted", "labels": {"alertname": "X", "namespace": "acc", "job_name": "batch-1"}}
    )
    job = (
        "Name:             batch-1\nNamespace:        acc\nPods Statuses:    0 Active / 0 Succeeded / 0 Failed\n"
        "Events:\n  Type     Reason        Age   From            Message\n  ----     ------        ----  ----     "
        f"       -------\n  Warning  FailedCreate  3m    job-controller  {message}\n"
    )
    inv.made(
        ("resources_get", {"apiVersion": "batch/v1", "kind": "Job", "name": "batch-1", "namespace": "acc"}, job),
        ("events_list", {"namespace": "acc"}, events),
    )
    asked = [(c.args.get("kind"), c.args.get("name"), c.args.get("namespace")) for c in inv.next()]
    assert ("Service", "policy-svc", "policy") in asked


def test_evicted_pods_that_used_little_point_outside_the_pods_accounting() -> None:
    events = (
        "LAST SEEN   TYPE      REASON    OBJECT                        MESSAGE\n"
        "7m          Warning   Evicted   pod/web-6d7c8b9f5-m7r2d       The node was low on resource: "
        "ephemeral-storage. Threshold quantity: 10Gi, available: 6Gi. Container web was using 1204Ki, request is 0, "
        "has larger consumption of ephemeral-storage.\n"
    )
    inv = Investigation({"title": "KubeletPodEvictionsHigh", "labels": {"alertname": "X", "node": "n1"}})
    inv.made(("events_list", {"namespace": "shop"}, events))
    names = {f.rule for f in rules.findings(inv.state)}
    assert "pressure_outside_pods" in names
    assert "heavy_consumer" not in names, "a pod using 1.2Mi does not fill a node"
