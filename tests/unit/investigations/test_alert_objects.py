"""objects: the Kubernetes objects an alert names, read from its labels, annotations and text.

The label sets are the ones kube-prometheus (kube-state-metrics, kubelet, node-exporter, blackbox) and operator
mixins (Argo CD, cert-manager) put on their alerts: every series carries the scrape target's own `job`, `instance`,
`pod`, `container`, `service` and `endpoint` beside the labels of the object the metric is about. Names are made up.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.investigations.rules.objects import AlertObjects, ObjRef, alert_objects, text_objects

# kube-state-metrics' own scrape labels, on every alert built on its metrics (kube-prometheus-stack's names).
KSM = {
    "container": "kube-state-metrics",
    "endpoint": "http",
    "instance": "10.244.0.12:8080",
    "job": "kube-state-metrics",
    "pod": "kube-prometheus-stack-kube-state-metrics-6f7c9b8d4-qwz8m",
    "prometheus": "monitoring/kube-prometheus-stack-prometheus",
    "service": "kube-prometheus-stack-kube-state-metrics",
}


def alert(alertname: str, description: str = "", **labels: str) -> dict[str, Any]:
    return {
        "title": alertname,
        "description": description,
        "labels": {"alertname": alertname, "severity": "warning", **labels},
        "annotations": {"description": description} if description else {},
    }


def objects(a: dict[str, Any]) -> list[ObjRef]:
    return alert_objects(a).objects


def names(found: AlertObjects) -> set[str]:
    return {o.name for o in found.objects}


# ---- labels --------------------------------------------------------------------------------------------------


def test_a_pod_label_with_its_own_series_labels_is_the_alerted_pod() -> None:
    # KubePodCrashLooping: kube-state-metrics is scraped with honorLabels, so the series' pod/container win.
    found = alert_objects(
        alert(
            "KubePodCrashLooping",
            'Pod shop/cart-7d9f8b6c5-x2k4q (server) is in waiting state (reason: "CrashLoopBackOff").',
            **{**KSM, "namespace": "shop", "pod": "cart-7d9f8b6c5-x2k4q", "container": "server"},
            reason="CrashLoopBackOff",
            uid="5b1f2c1e-6a1d-4d8e-9d43-0c1d1a1e0f11",
        )
    )
    assert found.namespace == "shop"
    assert found.container == "server"
    assert found.objects == [ObjRef("Pod", "cart-7d9f8b6c5-x2k4q", "shop"), ObjRef("Namespace", "shop")]
    assert found.instance_host is None  # the scrape target's address is not a node for a pod alert


@pytest.mark.parametrize(
    ("alertname", "label", "value", "kind"),
    [
        ("KubeDeploymentReplicasMismatch", "deployment", "api", "Deployment"),
        ("KubeStatefulSetReplicasMismatch", "statefulset", "redis-master", "StatefulSet"),
        ("KubeDaemonSetRolloutStuck", "daemonset", "fluent-bit", "DaemonSet"),
        ("KubeHpaMaxedOut", "horizontalpodautoscaler", "search-frontend", "HorizontalPodAutoscaler"),
        ("KubeHpaReplicasMismatch", "horizontalpodautoscaler", "search-frontend", "HorizontalPodAutoscaler"),
        ("KubeJobFailed", "job_name", "nightly-report-28911520", "Job"),
        ("KubeCronJobRunning", "cronjob", "nightly-report", "CronJob"),
        ("KubePersistentVolumeClaimPending", "persistentvolumeclaim", "data-postgres-0", "PersistentVolumeClaim"),
    ],
)
def test_a_kube_state_metrics_label_names_its_object_and_the_exporter_is_dropped(alertname, label, value, kind) -> None:
    found = alert_objects(alert(alertname, **{**KSM, "namespace": "payments", label: value}))
    assert found.objects == [ObjRef(kind, value, "payments"), ObjRef("Namespace", "payments")]
    # The exporter's own pod, container and service are scrape labels, not what the alert is about.
    assert found.container is None
    assert not {o for o in found.objects if "kube-state-metrics" in o.name}


def test_a_kubelet_volume_alert_names_the_claim_and_its_node_but_not_the_kubelet_service() -> None:
    found = alert_objects(
        alert(
            "KubePersistentVolumeFillingUp",
            "The PersistentVolume claimed by data-postgres-0 in Namespace db is only 2.1% free.",
            endpoint="https-metrics",
            instance="172.18.0.3:10250",
            job="kubelet",
            metrics_path="/metrics",
            namespace="db",
            node="worker-2",
            persistentvolumeclaim="data-postgres-0",
            service="kube-prometheus-stack-kubelet",
        )
    )
    assert found.objects == [
        ObjRef("PersistentVolumeClaim", "data-postgres-0", "db"),
        ObjRef("Node", "worker-2"),  # cluster-scoped: no namespace
        ObjRef("Namespace", "db"),
    ]
    assert found.instance_host is None  # the node is named; the kubelet's address adds nothing


def test_a_node_alert_names_the_node_and_no_namespace() -> None:
    found = alert_objects(
        alert(
            "KubeNodeNotReady",
            "worker-3 has been unready for more than 15 minutes.",
            **{k: v for k, v in KSM.items() if k != "pod"},
            node="worker-3",
            condition="Ready",
            status="true",
        )
    )
    assert (found.namespace, found.objects) == (None, [ObjRef("Node", "worker-3")])


def test_a_service_label_counts_unless_it_is_the_scraped_service() -> None:
    # A recording rule over an app's request metrics keeps the app's service.
    mine = alert_objects(
        alert("HighErrorRate", service="checkout", job="kubernetes-service-endpoints", namespace="shop")
    )
    assert mine.objects == [ObjRef("Service", "checkout", "shop"), ObjRef("Namespace", "shop")]
    # KubeletTooManyPods: `service` is the kubelet's scrape Service (job=kubelet), not an object of the alert.
    kubelet = alert_objects(
        alert(
            "KubeletTooManyPods",
            "Kubelet 'worker-1' is running at 95% of its Pod capacity.",
            job="kubelet",
            service="kube-prometheus-stack-kubelet",
            namespace="kube-system",
            node="worker-1",
            instance="172.18.0.4:10250",
            endpoint="https-metrics",
        )
    )
    assert [o for o in kubelet.objects if o.kind == "Service"] == []
    assert ObjRef("Node", "worker-1") in kubelet.objects
    # The exporters' own services are never the alerted ones.
    assert [
        o for o in objects(alert("KubeDeploymentReplicasMismatch", **KSM, deployment="api")) if o.kind == "Service"
    ] == []


def test_instance_is_a_node_only_for_node_alerts() -> None:
    # node-exporter relabelled to the node name: `instance` is the node.
    named = alert_objects(
        alert(
            "NodeHighNumberConntrackEntriesUsed",
            instance="worker-1",
            job="node-exporter",
            namespace="monitoring",
            container="node-exporter",
            pod="kube-prometheus-stack-prometheus-node-exporter-8xk2p",
            service="kube-prometheus-stack-prometheus-node-exporter",
        )
    )
    assert ObjRef("Node", "worker-1") in named.objects
    assert not {o for o in named.objects if o.kind == "Pod"}  # node-exporter's pod is the exporter
    assert named.container is None
    # The default scrape address: no node object, the host to look a node up by.
    addressed = alert_objects(
        alert(
            "NodeFilesystemSpaceFillingUp",
            "Filesystem on /dev/sda1 at 10.0.2.15:9100 has only 4% available space left and is filling up.",
            instance="10.0.2.15:9100",
            job="node-exporter",
            device="/dev/sda1",
            fstype="ext4",
            mountpoint="/",
        )
    )
    assert addressed.objects == []
    assert addressed.instance_host == "10.0.2.15"
    # The same `instance` on a pod alert is the scrape target, neither a node nor a host to look up.
    pod_alert = alert_objects(
        alert("KubePodNotReady", instance="worker-1", job="kube-state-metrics", namespace="shop", pod="cart-1")
    )
    assert pod_alert.objects == [ObjRef("Pod", "cart-1", "shop"), ObjRef("Namespace", "shop")]
    assert pod_alert.instance_host is None


def test_objects_are_ordered_closest_to_the_failure_first() -> None:
    found = objects(
        alert(
            "Custom",
            namespace="shop",
            persistentvolumeclaim="data-0",
            node="worker-1",
            deployment="web",
            pod="web-5f7d8c9b6-abcde",
            horizontalpodautoscaler="web",
        )
    )
    assert [o.kind for o in found] == [
        "Pod", "Deployment", "HorizontalPodAutoscaler", "PersistentVolumeClaim", "Node", "Namespace",
    ]  # fmt: skip


# ---- text ------------------------------------------------------------------------------------------------------


def test_kube_prometheus_descriptions_name_the_object_without_labels() -> None:
    # Only the exporter's labels and the namespace: the object is in the description.
    hpa = alert_objects(
        alert(
            "KubeHpaMaxedOut",
            "HPA search/search-frontend has been running at max replicas for longer than 15 minutes.",
            **{k: v for k, v in KSM.items() if k not in ("pod", "container")},
            namespace="search",
        )
    )
    assert hpa.objects == [
        ObjRef("HorizontalPodAutoscaler", "search-frontend", "search"),
        ObjRef("Namespace", "search"),
    ]
    pod = alert_objects(
        {"title": "Crash", "description": "Pod billing/invoicer-0 (worker) is restarting 2.1 times / 10 minutes."}
    )
    assert pod.objects == [ObjRef("Pod", "invoicer-0", "billing"), ObjRef("Namespace", "billing")]
    assert pod.namespace == "billing"  # no label: the namespace comes from the text


def test_kind_slash_name_and_quoted_names_in_text() -> None:
    found = text_objects(
        'Rollout of deployment/web stalled; PersistentVolumeClaim "data-0" is Pending; sts/redis and '
        "StatefulSet 'kafka' restart",
        "shop",
    )
    assert found == [
        ObjRef("Deployment", "web", "shop"),
        ObjRef("PersistentVolumeClaim", "data-0", "shop"),
        ObjRef("StatefulSet", "redis", "shop"),
        ObjRef("StatefulSet", "kafka", "shop"),
    ]


def test_text_namespace_phrases_and_ns_slash_name() -> None:
    assert text_objects("HPA web/frontend-hpa is pinned") == [ObjRef("HorizontalPodAutoscaler", "frontend-hpa", "web")]
    assert text_objects("Job db-backup-2891 failed in namespace ops") == [ObjRef("Job", "db-backup-2891", "ops")]
    assert text_objects('deployment named "checkout" in the namespace shop') == [
        ObjRef("Deployment", "checkout", "shop")
    ]


def test_prose_that_only_mentions_a_kind_names_nothing() -> None:
    assert text_objects("The pod capacity is low and the node fails; the service is slow.", "shop") == []
    assert text_objects("Check the cm and the sa of the ing", "shop") == []  # short names are English words too
    assert objects(alert("KubePodNotReady", "The pods are not ready.", job="checkout", namespace="shop")) == [
        ObjRef("Namespace", "shop")
    ]


def test_a_scrape_target_that_is_down_is_its_service_and_the_servicemonitor_named_after_its_job() -> None:
    found = objects(alert("TargetDown", "100% of the targets are down.", job="checkout", service="checkout",
                          namespace="shop"))  # fmt: skip
    assert found == [ObjRef("Service", "checkout", "shop"), ObjRef("ServiceMonitor", "checkout", "shop"),
                     ObjRef("Namespace", "shop")]  # fmt: skip
    # An exporter's own target is not the subject (kube-state-metrics scraping itself).
    assert objects(alert("TargetDown", "targets down", job="kube-state-metrics", namespace="monitoring")) == [
        ObjRef("Namespace", "monitoring")
    ]


def test_labels_and_text_naming_one_object_give_it_once() -> None:
    found = objects(
        alert(
            "KubePodCrashLooping",
            'Pod shop/cart-1 (server) is in waiting state (reason: "CrashLoopBackOff").',
            namespace="shop",
            pod="cart-1",
            container="server",
            job="kube-state-metrics",
        )
    )
    assert found == [ObjRef("Pod", "cart-1", "shop"), ObjRef("Namespace", "shop")]


# ---- app labels, probed hosts, operators ---------------------------------------------------------------------


def test_app_labels_and_probed_url_hosts() -> None:
    found = alert_objects(
        alert(
            "BlackboxProbeFailed",
            "Probe of https://Shop.Example.com/api/health failed.",
            instance="https://shop.example.com/api/health",
            job="blackbox-exporter",
            module="http_2xx",
            app="storefront",
            app_kubernetes_io_name="storefront-web",
        )
    )
    assert found.apps == ("storefront", "storefront-web")
    assert found.hosts == ("shop.example.com",)  # once, lower-cased
    assert found.objects == []
    assert found.instance_host is None  # a probe alert is not about a node


def test_an_argocd_alert_names_its_application() -> None:
    # argocd-mixin's ArgoCdAppOutOfSync over argocd_app_info (name, project, sync_status).
    found = alert_objects(
        alert(
            "ArgoCdAppOutOfSync",
            "An ArgoCD Application guestbook has been out of sync for more than 15 minutes.",
            name="guestbook",
            namespace="argocd",
            project="default",
            sync_status="OutOfSync",
            job="argocd-metrics",
        )
    )
    app = found.objects[0]
    assert app == ObjRef("Application", "guestbook", "argocd")
    assert app.api_version == "argoproj.io/v1alpha1"


def test_a_cert_manager_alert_names_its_certificate_in_the_exported_namespace() -> None:
    found = alert_objects(
        alert(
            "CertManagerCertExpirySoon",
            "The domain that this cert covers will be unavailable after 20 days.",
            name="web-tls",
            exported_namespace="shop",
            namespace="cert-manager",
            job="cert-manager",
        )
    )
    cert = next(o for o in found.objects if o.kind == "Certificate")
    assert cert == ObjRef("Certificate", "web-tls", "shop")
    assert cert.api_version == "cert-manager.io/v1"


@pytest.mark.parametrize(
    ("alertname", "labels", "wanted"),
    [
        (
            "CertManagerCertExpirySoon",
            {
                "name": "web-tls",
                "exported_namespace": "shop",
                "namespace": "cert-manager",
                "job": "cert-manager",
                "container": "cert-manager-controller",
                "endpoint": "tcp-prometheus-servicemonitor",
                "instance": "10.244.2.31:9402",
                "pod": "cert-manager-5d7f97b46d-8qk2x",
                "service": "cert-manager",
            },
            ObjRef("Certificate", "web-tls", "shop"),
        ),
        (
            "ArgoCdAppOutOfSync",
            {
                "name": "guestbook",
                "exported_namespace": "argocd",
                "namespace": "argocd",
                "project": "default",
                "sync_status": "OutOfSync",
                "job": "argocd-metrics",
                "container": "application-controller",
                "endpoint": "metrics",
                "instance": "10.244.1.9:8082",
                "pod": "argocd-application-controller-0",
                "service": "argocd-metrics",
            },
            ObjRef("Application", "guestbook", "argocd"),
        ),
    ],
)
def test_an_operators_own_scrape_pod_is_not_an_alerted_object(alertname, labels, wanted) -> None:
    """An operator exports metrics about its custom resources; scraped without honorLabels (the cert-manager and
    Argo CD charts' default) every series also carries the operator's own pod, container and service, exactly as
    kube-state-metrics' series do. The custom resource is what the alert is about, and the first thing to look at."""
    found = alert_objects(alert(alertname, **labels))
    assert found.objects[0] == wanted
    assert not [o for o in found.objects if o.kind == "Pod"]
    assert found.container is None


def test_hostile_label_values_and_long_text_are_bounded() -> None:
    found = alert_objects(
        {
            "title": "x" * 50_000,
            "description": "Pod " + "a/" * 20_000 + " deployment/" + "-" * 10_000,
            "labels": {"alertname": "X", "pod": "not a name!", "deployment": "", "node": None, "namespace": "ns"},
            "annotations": {"summary": "pod/" + "b" * 300},
        }
    )
    assert all(len(o.name) <= 253 for o in found.objects)
    assert ObjRef("Namespace", "ns") in found.objects
    assert not [o for o in found.objects if o.kind == "Deployment"]
