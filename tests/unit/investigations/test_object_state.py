"""object_state: one object's output (describe, YAML, JSON, event listings) read into a view, and the findings
its state gives whatever the alert (tests/fixtures/object_outputs, see its README)."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.investigations.rules.object_state import Ref, read_object, state_findings
from shared.investigations.rules.object_view import kube_yaml
from shared.investigations.rules.state import CallRecord, Finding

OUTPUTS = Path(__file__).resolve().parents[2] / "fixtures" / "object_outputs"
ALL = sorted(p.name for p in OUTPUTS.iterdir() if p.suffix in (".txt", ".yaml", ".json"))
HEALTHY = {"certificate-expiring.yaml", "ingress.yaml"}  # nothing wrong at the default alert time


def text(name: str) -> str:
    return (OUTPUTS / name).read_text()


def record(name: str, **args: object) -> CallRecord:
    return CallRecord(tool="resources_get", args=args, output=text(name))


def found(name: str, when: str | None = "2025-06-02T00:00:00+00:00", **args: object) -> list[Finding]:
    alert_time = datetime.fromisoformat(when) if when else None
    return state_findings(record(name, **args), alert_time)


def rule(findings: list[Finding], name: str) -> list[Finding]:
    return [f for f in findings if f.rule == name]


def refs(name: str) -> set[tuple[str, str, str | None, str]]:
    return {(r.kind, r.name or r.selector or r.resource, r.namespace, r.relation) for r in read_object(text(name)).refs}


# --- reading --------------------------------------------------------------------------------------------------


def test_a_pod_description_reads_containers_conditions_events_and_what_it_uses() -> None:
    view = read_object(text("pod-crashloop-oom.describe.txt"))
    assert (view.shape, view.kind, view.namespace, view.phase) == ("describe", "Pod", "default", "Running")
    c = view.containers[0]
    assert (c.name, c.state, c.reason, c.restart_count) == ("nginx", "Waiting", "CrashLoopBackOff", 6)
    assert (c.last_state, c.last_reason, c.last_exit_code) == ("Terminated", "OOMKilled", 137)
    assert c.limits == {"cpu": "500m", "memory": "128Mi"}
    assert c.ready is False
    assert [(k.type, k.status) for k in view.conditions][:2] == [("Initialized", "True"), ("Ready", "False")]
    backoff = next(e for e in view.events if e.reason == "BackOff")
    assert (backoff.type, backoff.count, backoff.age) == ("Warning", 4, "2s (x4 over 40s)")
    assert view.owner == Ref("ReplicaSet", "nginx-deployment-67d4bdd6f5", "default", "owner", api_version="apps/v1")
    assert view.node == "kube-worker-1"
    assert refs("pod-crashloop-oom.describe.txt") >= {
        ("Node", "kube-worker-1", None, "node"),
        ("Secret", "db-credentials", "default", "env DB_PASSWORD"),
        ("ConfigMap", "app-settings", "default", "env MODE"),
        ("ConfigMap", "app-env", "default", "envFrom"),
        ("PersistentVolumeClaim", "data-claim", "default", "volume data"),
    }
    # The service-account token's projected ConfigMap and the namespace's default account are not worth a call.
    assert not {r for r in view.refs if r.name in ("kube-root-ca.crt", "default")}


def test_a_pod_in_yaml_reads_owner_volumes_env_pull_secrets_and_a_folded_message() -> None:
    view = read_object(text("pod-pending.yaml"))
    assert (view.shape, view.kind, view.name, view.phase) == ("yaml", "Pod", "trainer-84f6d7c9d-q8w2n", "Pending")
    scheduled = view.conditions[0]
    assert (scheduled.type, scheduled.status, scheduled.reason) == ("PodScheduled", "False", "Unschedulable")
    # go-yaml folds long strings over lines: read back as one line.
    assert "{node-role.kubernetes.io/control-plane: }, 3 Insufficient nvidia.com/gpu." in scheduled.message
    assert view.containers[0].requests == {"cpu": "6", "memory": "24Gi", "nvidia.com/gpu": "1"}
    assert refs("pod-pending.yaml") == {
        ("ReplicaSet", "trainer-84f6d7c9d", "ml", "owner"),
        ("PersistentVolumeClaim", "dataset-cache", "ml", "volume dataset"),
        ("ConfigMap", "trainer-hyperparams", "ml", "volume params"),
        ("ConfigMap", "trainer-config", "ml", "env MODEL_BUCKET"),
        ("Secret", "trainer-token", "ml", "env API_TOKEN"),
        ("Secret", "trainer-env", "ml", "envFrom"),
        ("Secret", "registry-creds", "ml", "image pull secret"),
        ("ServiceAccount", "trainer", "ml", "service account"),
    }


def test_json_pretty_or_compact_reads_as_the_same_object() -> None:
    pretty = read_object(text("pod-crashloop.json"))
    compact_text = json.dumps(json.loads(text("pod-crashloop.json")), separators=(",", ":"))
    compact = read_object(compact_text)
    assert pretty.shape == compact.shape == "json"
    for view in (pretty, compact):
        c = view.containers[0]
        assert (c.reason, c.last_reason, c.last_exit_code, c.restart_count) == (
            "CrashLoopBackOff",
            "OOMKilled",
            137,
            12,
        )
        assert view.owner is not None
        assert view.owner.kind == "StatefulSet"
    # A quote from one-line JSON is a window of the line, still verbatim.
    rec = CallRecord(tool="pods_get", args={}, output=compact_text)
    oom = rule(state_findings(rec, None), "container_oom")[0]
    assert oom.evidence
    assert all(e.quote in compact_text and len(e.quote) <= 300 for e in oom.evidence)


def test_the_callers_kind_names_an_object_the_text_does_not() -> None:
    described = "Name:         limits\nNamespace:    dev\nSpec:\n  Hard:\n    pods:  10\n"
    assert read_object(described).kind == ""
    assert read_object(described, kind="SomeCustomKind").kind == "SomeCustomKind"
    assert read_object("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", kind="Pod").kind == "ConfigMap"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hpa-maxed.describe.txt", {("Deployment", "php-apache", "default", "scale target")}),
        ("hpa-maxed.yaml", {("Deployment", "checkout-web", "shop", "scale target")}),
        (
            "deployment-stalled.describe.txt",
            {
                ("Pod", "app=ledger,tier=backend", "finance", "selected pods"),
                ("ReplicaSet", "ledger-7d9c8b6f4", "finance", "replica set"),
                ("ReplicaSet", "ledger-6f8b9c7d5", "finance", "replica set"),
                ("ConfigMap", "ledger-db", "finance", "env LEDGER_DB_URL"),
                ("PersistentVolumeClaim", "ledger-journal", "finance", "volume journal"),
            },
        ),
        (
            "statefulset.yaml",
            {
                ("Pod", "app.kubernetes.io/name=kafka", "streaming", "selected pods"),
                ("StorageClass", "fast-ssd", None, "storage class of its volume claims"),
            },
        ),
        (
            "job-failed.describe.txt",
            {
                ("CronJob", "nightly-export", "data", "owner"),
                (
                    "Pod",
                    "batch.kubernetes.io/controller-uid=8c7b6a59-0000-4000-8000-00000000abcd",
                    "data",
                    "selected pods",
                ),
                ("Pod", "nightly-export-29012040-4xk9p", "data", "pod of the job"),
                ("Pod", "nightly-export-29012040-8m2qz", "data", "pod of the job"),
                ("Pod", "nightly-export-29012040-b7n4s", "data", "pod of the job"),
                ("Pod", "nightly-export-29012040-r5t6v", "data", "pod of the job"),
                ("Secret", "export-target", "data", "env TARGET_URL"),
            },
        ),
        (
            "cronjob-stale.describe.txt",
            {
                ("Job", "nightly-export-29012040", "data", "active job"),
                ("Job", "nightly-export-29012040", "data", "job it ran"),
            },
        ),
        (
            "cronjob-suspended.yaml",
            {("Job", "cache-warmer-29100345", "web", "active job"), ("ConfigMap", "warmer-targets", "web", "envFrom")},
        ),
        (
            "pvc-pending.describe.txt",
            {("StorageClass", "premium-rwo", None, "storage class"), ("Pod", "elastic-0", "logging", "pod using it")},
        ),
        (
            "pv-released.describe.txt",
            {
                ("PersistentVolumeClaim", "pg-data-0", "warehouse", "claim"),
                ("StorageClass", "gp3", None, "storage class"),
            },
        ),
        (
            "service-no-endpoints.describe.txt",
            {
                ("Pod", "app=inventory,version=v2", "warehouse", "selected pods"),
                ("Endpoints", "inventory", "warehouse", "endpoints"),
            },
        ),
        (
            "ingress-missing-backend.describe.txt",
            {
                ("IngressClass", "nginx", None, "ingress class"),
                ("Secret", "storefront-tls", "retail", "TLS secret"),
                ("Service", "storefront-web", "retail", "backend service"),
                ("Service", "storefront-api", "retail", "backend service"),
            },
        ),
        (
            "ingress.yaml",
            {
                ("IngressClass", "traefik", None, "ingress class"),
                ("Secret", "docs-tls", "web", "TLS secret"),
                ("Service", "docs-fallback", "web", "backend service"),
                ("Service", "docs-site", "web", "backend service"),
            },
        ),
        (
            "namespace-terminating.describe.txt",
            {
                ("", "backups.storage.example.io", "sandbox-42", "remaining in the namespace"),
                ("Pod", "pods", "sandbox-42", "remaining in the namespace"),
            },
        ),
        (
            "certificate-expired.describe.txt",
            {
                ("Secret", "api-gateway-tls", "edge", "certificate secret"),
                ("ClusterIssuer", "acme-production", None, "issuer"),
            },
        ),
        (
            "certificate-expiring.yaml",
            {("Secret", "portal-tls", "portal", "certificate secret"), ("Issuer", "internal-ca", "portal", "issuer")},
        ),
        ("node-pressure.describe.txt", set()),
    ],
)
def test_refs_name_what_to_look_at_next(name: str, expected: set[tuple[str, str, str | None, str]]) -> None:
    assert refs(name) == expected


def test_refs_carry_the_api_version_a_generic_get_needs() -> None:
    by_kind = {r.kind: r.api_version for r in read_object(text("ingress-missing-backend.describe.txt")).refs}
    assert by_kind == {"IngressClass": "networking.k8s.io/v1", "Secret": "v1", "Service": "v1"}
    target = read_object(text("hpa-maxed.yaml")).refs[0]
    assert (target.kind, target.api_version) == ("Deployment", "apps/v1")


def test_event_listings_name_the_object_of_each_event() -> None:
    listed = read_object(text("events.yaml"))
    assert (listed.kind, listed.shape) == ("EventList", "events")
    assert [(e.object, e.reason) for e in listed.events][:3] == [
        ("Pod/ledger-7d9c8b6f4-2xk7m", "Unhealthy"),
        ("Pod/ledger-7d9c8b6f4-2xk7m", "Unhealthy"),
        ("Pod/ledger-7d9c8b6f4-9pq2r", "FailedScheduling"),
    ]
    table = read_object(text("events-table.txt"))
    assert [(e.type, e.reason, e.object) for e in table.events][1] == (
        "Warning",
        "FailedMount",
        "pod/uploader-5d4c-7wq9z",
    )


# --- signals ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_every_finding_argues_with_verbatim_lines_and_a_fix(name: str) -> None:
    output = text(name)
    findings = found(name)
    assert bool(findings) != (name in HEALTHY), name
    for f in findings:
        assert f.cause
        assert f.remediation
        assert 0 < f.confidence <= 1
        assert f.evidence, f.rule
        assert all(e.quote and e.quote in output for e in f.evidence), f.rule
    # Causes lead, symptoms follow.
    assert [f.symptom for f in findings] == sorted(f.symptom for f in findings)


def test_oom_is_the_cause_and_the_crash_loop_its_symptom() -> None:
    findings = found("pod-crashloop-oom.describe.txt")
    assert findings[0].rule == "container_oom"
    assert not findings[0].symptom
    assert "OOMKilled" in findings[0].cause
    assert "128Mi memory limit" in findings[0].cause
    assert "Raise the memory limit of nginx above 128Mi" in findings[0].remediation[0]
    assert [e.quote for e in findings[0].evidence] == ["Reason:       OOMKilled", "Exit Code:    137", "memory:  128Mi"]
    loop = rule(findings, "container_crashloop")[0]
    assert loop.symptom
    assert "after 6 restarts" in loop.cause
    assert "exit code 137" in loop.cause


def test_an_image_the_registry_refuses_asks_for_pull_credentials() -> None:
    pull = rule(found("pod-image-pull.describe.txt"), "container_image")[0]
    assert "registry refuses" in pull.cause
    assert "401 Unauthorized" in pull.cause
    assert "imagePullSecret" in pull.remediation[0]
    assert "registry.example.net/retail/storefront:4.2.0" in pull.remediation[0]


def test_a_missing_secret_is_named_with_its_namespace() -> None:
    cannot = rule(found("pod-config-error.describe.txt"), "container_cannot_start")[0]
    assert "CreateContainerConfigError" in cannot.cause
    assert "`billing-db`" in cannot.cause
    assert cannot.remediation == [("Create the Secret `billing-db` in namespace payments, or fix the name "
                                  "billing-api-5f7d9c8b4-7hxkz refers to.")]  # fmt: skip
    assert any('secret "billing-db" not found' in e.quote for e in cannot.evidence)


def test_a_mistyped_init_command_is_named_with_the_command_it_meant() -> None:
    findings = found("pod-init-typo.describe.txt")
    exit_ = rule(findings, "container_exit")[0]
    assert "Init container fetch-assets" in exit_.cause
    assert "`curll` looks like a typo for `curl`" in exit_.cause
    assert exit_.remediation == ["Fix the command in the container spec: replace `curll` with `curl`."]
    assert rule(findings, "container_crashloop")[0].remediation == exit_.remediation


def test_an_evicted_pod_says_which_resource_ran_low() -> None:
    status = rule(found("pod-evicted.describe.txt"), "pod_status")[0]
    assert "Evicted" in status.cause
    assert "low on memory" in status.cause
    assert "memory requests close to real use" in status.remediation[0]


def test_an_unschedulable_pod_names_the_resource_no_node_has() -> None:
    scheduled = rule(found("pod-pending.yaml"), "object_condition")[0]
    assert "PodScheduled is False (Unschedulable)" in scheduled.cause
    assert "no node has enough free nvidia.com/gpu" in scheduled.cause
    assert scheduled.remediation[0].startswith("Lower the nvidia.com/gpu request of trainer-84f6d7c9d-q8w2n")


@pytest.mark.parametrize(
    ("name", "most", "usage", "target"),
    [("hpa-maxed.describe.txt", 10, "95%", "50%"), ("hpa-maxed.yaml", 8, "138%", "60%")],
)
def test_an_autoscaler_pinned_at_its_maximum_above_target(name: str, most: int, usage: str, target: str) -> None:
    maxed = rule(found(name), "hpa_maxed")[0]
    assert f"pinned at its maximum of {most} replicas while CPU is {usage} against a {target} target" in maxed.cause
    assert maxed.remediation[0].startswith(f"Raise maxReplicas of {read_object(text(name)).name} above {most}")
    assert "check the cluster has room" in maxed.remediation[0]
    assert "raise the CPU requests" in maxed.remediation[0]
    assert any("TooManyReplicas" in e.quote or "maximum replica count" in e.quote for e in maxed.evidence)


def test_an_autoscaler_without_a_cpu_request_names_the_missing_request() -> None:
    findings = found("hpa-unknown.describe.txt")
    active = next(f for f in rule(findings, "object_condition") if "ScalingActive" in f.subject)
    assert "no cpu request" in active.cause
    assert 'container "log-shipper"' in active.cause
    assert active.remediation == [
        "Set resources.requests.cpu on every container (sidecars included) of the pods the autoscaler scales."
    ]
    assert not rule(findings, "hpa_maxed")


def test_an_autoscaler_that_reads_no_metric_says_so() -> None:
    output = text("hpa-unknown.describe.txt").split("Conditions:")[0]
    unknown = rule(state_findings(CallRecord(tool="resources_get", output=output), None), "hpa_metrics_unknown")
    assert "cannot read its CPU metric" in unknown[0].cause


def test_a_stalled_rollout_reports_replicas_and_the_deadline() -> None:
    findings = found("deployment-stalled.describe.txt")
    replicas = rule(findings, "replicas_unavailable")[0]
    assert replicas.cause == "Deployment ledger has 1 of 3 desired replicas available (2 unavailable)."
    assert "selector app=ledger,tier=backend" in replicas.remediation[0]
    progressing = next(f for f in findings if f.subject == "Deployment/ledger Progressing")
    assert "ProgressDeadlineExceeded" in progressing.cause
    assert "kubectl rollout undo deployment/ledger" in (progressing.remediation[0])


def test_a_replica_set_blocked_by_a_quota_names_the_quota_and_its_numbers() -> None:
    failure = next(f for f in found("replicaset-quota.describe.txt") if f.subject.endswith("ReplicaFailure"))
    assert "ResourceQuota `tenant-a-compute` is exhausted" in failure.cause
    assert "requests.memory=2Gi" in failure.remediation[0]
    assert not failure.symptom


def test_a_statefulset_in_yaml_counts_available_replicas() -> None:
    assert rule(found("statefulset.yaml"), "replicas_unavailable")[0].cause == (
        "StatefulSet kafka has 1 of 3 desired replicas available."
    )


def test_a_node_under_memory_pressure_and_out_of_pod_slots() -> None:
    findings = found("node-pressure.describe.txt")
    full = rule(findings, "node_pods_full")[0]
    assert full.cause == "Node pool-b-worker-4 runs 29/29 pods: it is at its pod capacity (max pods 29)."
    pressure = next(f for f in findings if f.subject.endswith("MemoryPressure"))
    assert "KubeletHasInsufficientMemory" in pressure.cause
    assert "Free memory on node pool-b-worker-4" in (pressure.remediation[0])
    assert "96% of its allocatable cpu requested" in rule(findings, "node_requests_full")[0].cause
    assert not [f for f in findings if "DiskPressure" in f.subject]
    reclaim = next(f for f in findings if f.subject.endswith("EvictionThresholdMet"))
    assert "short of memory" in reclaim.cause


def test_a_node_that_stopped_reporting_and_is_cordoned() -> None:
    findings = found("node-not-ready.yaml")
    ready = next(f for f in findings if f.subject == "Node/edge-3 Ready")
    assert "Ready is Unknown (NodeStatusUnknown)" in ready.cause
    assert "kubelet stopped reporting" in ready.cause
    assert not [f for f in findings if "MemoryPressure" in f.subject]  # Unknown pressure is not pressure
    assert "kubectl uncordon edge-3" in rule(findings, "node_cordoned")[0].remediation[0]


def test_claims_and_volumes() -> None:
    pending = found("pvc-pending.describe.txt")
    assert "(StorageClass premium-rwo)" in rule(pending, "pvc_unbound")[0].cause
    missing = rule(pending, "warning_event")[0]
    assert missing.remediation == ["Create the StorageClass `premium-rwo`, or fix the name elastic-data-0 refers to."]
    resize = found("pvc-resize.yaml")
    assert rule(resize, "pvc_resize")[0].cause.startswith(
        "PersistentVolumeClaim prometheus-db asks for 200Gi but has 100Gi"
    )
    assert [f for f in resize if f.subject.endswith("FileSystemResizePending")]
    assert "Released" in rule(found("pv-released.describe.txt"), "pv_unusable")[0].cause


def test_quotas_used_up() -> None:
    described = rule(found("quota.describe.txt"), "quota_exhausted")
    assert {f.subject for f in described} == {
        "ResourceQuota/compute-quota limits.cpu",
        "ResourceQuota/compute-quota pods",
        "ResourceQuota/compute-quota requests.memory",
    }
    assert described[0].remediation[0].startswith("Raise limits.cpu in ResourceQuota compute-quota above 8")
    in_yaml = rule(found("quota.yaml"), "quota_exhausted")
    assert [f.subject for f in in_yaml] == ["ResourceQuota/object-counts persistentvolumeclaims"]
    assert "4 used of 4 hard" in in_yaml[0].cause


def test_a_namespace_stuck_terminating_names_what_is_left_and_the_finalizer() -> None:
    stuck = rule(found("namespace-terminating.describe.txt"), "namespace_stuck")[0]
    assert stuck.cause == (
        "Namespace sandbox-42 is stuck Terminating: backups.storage.example.io, pods still exist in it, held by the "
        "finalizer storage.example.io/snapshot-cleanup."
    )
    assert "storage.example.io/snapshot-cleanup is not running" in stuck.remediation[0]
    discovery = found("namespace-discovery.yaml")
    failure = next(f for f in discovery if "DiscoveryFailure" in f.subject)
    assert "`custom.metrics.k8s.io/v1beta1` does not answer" in failure.cause
    assert "APIService for `custom.metrics.k8s.io/v1beta1`" in failure.remediation[0]


def test_a_service_without_endpoints_and_an_ingress_backend_that_does_not_exist() -> None:
    service = rule(found("service-no-endpoints.describe.txt"), "service_no_endpoints")[0]
    assert "no Ready pod matches its selector app=inventory,version=v2" in service.cause
    backend = rule(found("ingress-missing-backend.describe.txt"), "ingress_backend")[0]
    assert backend.cause == (
        "Ingress storefront routes shop.example.com /api to Service `storefront-api`, but the backend Service "
        "`storefront-api` does not exist (no endpoints object)."
    )
    assert not rule(found("ingress.yaml"), "ingress_backend")  # YAML does not show endpoints


def test_jobs_that_failed() -> None:
    failed = found("job-failed.describe.txt")
    assert rule(failed, "job_failed")[0].cause == (
        "Job nightly-export-29012040 has 4 failed pods and none succeeded (backoff limit 3)."
    )
    assert "reached its backoff limit" in rule(failed, "warning_event")[0].cause
    deadline = found("job-deadline.yaml")
    assert "activeDeadlineSeconds" in deadline[0].cause
    assert not rule(deadline, "job_failed")


def test_a_cron_job_that_stopped_running() -> None:
    stale = rule(found("cronjob-stale.describe.txt", "2025-03-06T12:00:00+00:00"), "cronjob_stale")[0]
    assert "4 days before the alert" in stale.cause
    assert "`0 2 * * *` runs it at least every 1 day" in stale.cause
    assert "concurrencyPolicy is Forbid and job nightly-export-29012040 is still active" in stale.cause
    assert stale.remediation[0].startswith("Find why job nightly-export-29012040 does not finish")
    assert not rule(found("cronjob-stale.describe.txt", "2025-03-02T23:00:00+00:00"), "cronjob_stale")
    suspended = found("cronjob-suspended.yaml")
    assert [f.rule for f in suspended] == ["cronjob_suspended"]


def test_certificates_against_the_alert_time() -> None:
    expired = rule(found("certificate-expired.describe.txt"), "expired")[0]
    assert expired.cause.startswith(
        "Certificate api-gateway-tls has expired: it was valid until 2025-06-01T08:00:00Z, 16 hours before the alert, "
        "because its renewal fails: The certificate request has failed"
    )
    assert "issuer acme-production" in expired.remediation[0]
    assert "Secret api-gateway-tls" in expired.remediation[0]
    soon = found("certificate-expiring.yaml", "2025-06-30T12:00:00+00:00")
    assert (
        rule(soon, "expiring")[0].cause
        == "Certificate portal-tls expires at 2025-07-10T00:00:00Z, 9 days after the alert."
    )
    assert rule(soon, "renewal_overdue")
    assert not found("certificate-expiring.yaml", "2025-05-01T00:00:00+00:00")
    assert not rule(found("certificate-expired.describe.txt", None), "expired")  # no alert time, no comparison


def test_warning_events_one_finding_per_object_and_reason() -> None:
    listed = found("events.yaml")
    assert [(f.subject, f.rule) for f in listed] == [
        ("Pod/ledger-7d9c8b6f4-2xk7m Unhealthy", "warning_event"),
        ("Pod/ledger-7d9c8b6f4-9pq2r FailedScheduling", "warning_event"),
    ]
    assert "(2 times)" in listed[0].cause
    assert "nothing listens on the probe's port" in listed[0].cause
    table = found("events-table.txt")
    assert [f.subject for f in table] == [
        "pod/uploader-5d4c-7wq9z FailedMount",
        "pod/uploader-5d4c-7wq9z FailedAttachVolume",
        "pod/uploader-5d4c-7wq9z BackOff",
    ]
    assert table[0].remediation[0].startswith("Create the ConfigMap `uploader-config`")
    assert table[-1].symptom


def test_a_rollout_whose_new_pods_do_not_come_up() -> None:
    described = (
        "Name:      api\nNamespace: pay\nSelector:  app=api\n"
        "Replicas:  2 desired | 1 updated | 3 total | 2 available | 1 unavailable\n"
    )
    rollout = state_findings(CallRecord(tool="resources_get", output=described), None)
    assert [(f.rule, f.cause) for f in rollout] == [
        (
            "rollout_incomplete",
            (
                "Deployment api has 1 unavailable replica (1 of 2 updated): its rollout is not complete, the new pods "
                "do not become available."
            ),
        )
    ]


def test_a_finished_pod_is_not_reported_as_not_ready() -> None:
    finished = "Name: done-1\nNamespace: ci\nStatus: Succeeded\nConditions:\n  Type   Status\n  Ready  False\n"
    assert state_findings(CallRecord(tool="resources_get", output=finished, args={"kind": "Pod"}), None) == []


def test_limit_ranges_and_the_pods_they_refuse() -> None:
    described = (
        "Name:       cpu-bounds\nNamespace:  team\n"
        "Type        Resource  Min   Max   Default Request  Default Limit  Max Limit/Request Ratio\n"
        "----        --------  ---   ---   ---------------  -------------  -----------------------\n"
        "Container   cpu       100m  800m  250m             500m           -\n"
    )
    view = read_object(described)
    assert view.kind == "LimitRange"
    assert view.fact("limitrange.Container.cpu.max") == "800m"
    assert "limitrange.Container.cpu.maxLimitRequestRatio" not in view.facts
    in_yaml = read_object(
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: cpu-bounds\nspec:\n  limits:\n  - max:\n"
        "      cpu: 800m\n    type: Container\n"
    )
    assert in_yaml.fact("limitrange.Container.cpu.max") == "800m"
    # A hand-aligned row (one blank between From and Message) still reads.
    events = (
        "Name: web-5f\nNamespace: team\nReplicas: 0 current / 2 desired\nPods Status: 0 Running / 0 Waiting\n"
        "Events:\n  Type     Reason        Age   From                  Message\n"
        "  ----     ------        ----  ----                  -------\n"
        '  Warning  FailedCreate  1m    replicaset-controller Error creating: pods "web-5f-x" is forbidden: maximum '
        "cpu usage per Container is 800m, but limit is 1500m\n"
    )
    refused = rule(state_findings(CallRecord(tool="resources_get", output=events), None), "warning_event")[0]
    assert "a LimitRange caps cpu at 800m per Container, and the pod asks for 1500m" in refused.cause
    assert refused.remediation[0].startswith("Lower the cpu limit of web-5f's containers to 800m or less")


def test_failed_or_empty_calls_give_nothing() -> None:
    assert state_findings(CallRecord(tool="resources_get", output="", is_error=False), None) == []
    error = CallRecord(tool="resources_get", output=text("pod-crashloop-oom.describe.txt"), is_error=True)
    assert state_findings(error, None) == []


# --- robustness -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        "- " * 300_000,
        "a:\n" + "  " * 2_000 + "b: c\n",
        "x: " + "[" * 200_000,
        "{" * 200_000,
        "\n" * 600_000,
        "Name: x\nConditions:\n  Type  Status\n" + ("  Ready" + " " * 50_000 + "False\n") * 10,
        "kind: Pod\nstatus:\n  conditions:\n  - message: '" + "0/3 nodes are available: Insufficient " * 20_000,
        "Events:\n  Type  Reason  Age  From  Message\n" + "  Warning  X  1s  k  " + "a" * 500_000 + "\n",
        "apiVersion: v1\n" + "key: 'unterminated\n" * 50_000,
        'kind: Pod\nspec:\n  containers:\n  - name: "' + "\\" * 300_000 + '"\n',
        "Not After: " + "2024-01-01T00:00:00Z " * 30_000,
        "Selector: " + "a=b," * 150_000,
    ],
    ids=lambda s: f"{s[:12]!r}x{len(s)}",
)
def test_hostile_outputs_are_read_in_bounded_time(hostile: str) -> None:
    rec = CallRecord(tool="resources_get", args={"kind": "Pod"}, output=hostile)
    started = time.perf_counter()
    view = read_object(hostile)
    state_findings(rec, datetime(2025, 1, 1, tzinfo=UTC))
    assert time.perf_counter() - started < 5
    assert view.truncated == (len(hostile) > 512 * 1024)


def test_random_text_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "ab:- \n\t'\"{}[]|>#&*!%@`,.=/\\0123456789NameStatus"
    for _ in range(300):
        junk = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        state_findings(CallRecord(tool="resources_get", output=junk), datetime(2025, 1, 1, tzinfo=UTC))


def _document(rng: random.Random, depth: int = 0) -> object:
    words = ["a", "b c", "x: y", "http://h:80/p", "it's", 'say "hi"', "#tag", "- dash", "true", "12", "", "{x}", "ü"]
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        pick = rng.random()
        if pick < 0.2:
            return rng.randint(-5, 10**6)
        if pick < 0.25:
            return rng.choice([True, False, None])
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 14)))
    if roll < 0.7:
        return {f"{rng.choice(words).strip() or 'k'}{i}": _document(rng, depth + 1) for i in range(rng.randint(0, 4))}
    return [_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_the_yaml_reader_agrees_with_pyyaml_on_block_documents() -> None:
    # kubectl's YAML is block style, long strings folded at about 80 columns, sequences at the mapping's indentation.
    # PyYAML is the reference reader here only: the dev tools' lock has it (moto, schemathesis), the app does not.
    yaml = pytest.importorskip("yaml")
    rng = random.Random(11)
    for _ in range(400):
        doc = {"root": _document(rng)}
        for width, indent in ((30, 2), (80, 4)):
            dumped = yaml.safe_dump(doc, default_flow_style=False, width=width, indent=indent, allow_unicode=True)
            assert kube_yaml.load(dumped) == yaml.safe_load(dumped), dumped


def test_the_yaml_reader_keeps_what_it_read_from_a_cut_document() -> None:
    whole = text("hpa-maxed.yaml")
    cut = whole[: whole.index("currentMetrics:")] + "currentMetrics:\n  - resource:\n      curr"
    view = read_object(cut)
    assert (view.kind, view.name, view.fact("max_replicas")) == ("HorizontalPodAutoscaler", "checkout-web", "8")
    assert [c.type for c in view.conditions] == ["AbleToScale", "ScalingActive", "ScalingLimited"]
