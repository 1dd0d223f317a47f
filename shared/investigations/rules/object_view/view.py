"""What one Kubernetes object's output says, in one shape whatever the output's shape (describe, YAML, JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field

# The API group/version of the kinds a reference names, for a tool that needs apiVersion next to kind.
API_VERSIONS = {
    "Pod": "v1", "Service": "v1", "Endpoints": "v1", "ConfigMap": "v1", "Secret": "v1", "Node": "v1",
    "Namespace": "v1", "PersistentVolumeClaim": "v1", "PersistentVolume": "v1", "ServiceAccount": "v1",
    "ResourceQuota": "v1", "LimitRange": "v1", "Event": "v1", "ReplicationController": "v1",
    "Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
    "Job": "batch/v1", "CronJob": "batch/v1", "HorizontalPodAutoscaler": "autoscaling/v2",
    "Ingress": "networking.k8s.io/v1", "IngressClass": "networking.k8s.io/v1",
    "NetworkPolicy": "networking.k8s.io/v1", "StorageClass": "storage.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1", "EndpointSlice": "discovery.k8s.io/v1",
    "Certificate": "cert-manager.io/v1", "Issuer": "cert-manager.io/v1", "ClusterIssuer": "cert-manager.io/v1",
    "CertificateRequest": "cert-manager.io/v1",
}  # fmt: skip

# Resource names (plural[.group]) of the kinds above, as API messages print them (`pods.`, `deployments.apps`).
PLURALS = {
    "pods": "Pod", "services": "Service", "endpoints": "Endpoints", "configmaps": "ConfigMap", "secrets": "Secret",
    "persistentvolumeclaims": "PersistentVolumeClaim", "serviceaccounts": "ServiceAccount",
    "resourcequotas": "ResourceQuota", "limitranges": "LimitRange", "events": "Event",
    "replicationcontrollers": "ReplicationController", "deployments.apps": "Deployment",
    "statefulsets.apps": "StatefulSet", "daemonsets.apps": "DaemonSet", "replicasets.apps": "ReplicaSet",
    "jobs.batch": "Job", "cronjobs.batch": "CronJob", "horizontalpodautoscalers.autoscaling": "HorizontalPodAutoscaler",
    "ingresses.networking.k8s.io": "Ingress", "networkpolicies.networking.k8s.io": "NetworkPolicy",
    "poddisruptionbudgets.policy": "PodDisruptionBudget", "endpointslices.discovery.k8s.io": "EndpointSlice",
    "certificates.cert-manager.io": "Certificate", "issuers.cert-manager.io": "Issuer",
    "certificaterequests.cert-manager.io": "CertificateRequest",
}  # fmt: skip

# Kinds that live outside namespaces: a reference to one carries no namespace.
CLUSTER_SCOPED = {
    "Node", "Namespace", "PersistentVolume", "StorageClass", "IngressClass", "ClusterIssuer", "ClusterRole",
    "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass",
}  # fmt: skip


@dataclass(frozen=True)
class Ref:
    """An object this one points at, for the planner to look at next.

    `name` is "" when the reference is a label selector (`selector`, e.g. "app=web,tier=api": the pods it selects)
    or a resource type to list (`resource`, plural[.group] as the API names it, e.g. "foos.example.com").
    `namespace` is None for cluster-scoped kinds. `relation` says why (e.g. "scale target", "owner", "node").
    """

    kind: str
    name: str
    namespace: str | None = None
    relation: str = ""
    selector: str = ""
    resource: str = ""
    api_version: str = ""


@dataclass
class Condition:
    """A status condition: type, status (True/False/Unknown), reason, message, and the line(s) to quote."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    quote: str = ""


@dataclass
class ContainerView:
    """One container (or init container) of a pod or pod template: spec and status."""

    name: str
    init: bool = False
    image: str = ""
    state: str = ""  # Waiting | Running | Terminated | "" (a template has no state)
    reason: str = ""
    message: str = ""
    exit_code: int | None = None
    ready: bool | None = None
    restart_count: int | None = None
    last_state: str = ""
    last_reason: str = ""
    last_exit_code: int | None = None
    last_message: str = ""
    limits: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    quotes: dict[str, str] = field(default_factory=dict)  # field (reason, exit_code, last_reason, ...) -> line


@dataclass
class ObjectEvent:
    """An event: type (Normal/Warning), reason, message, how often and how long ago, about which object."""

    type: str
    reason: str
    message: str
    count: int | None = None
    age: str = ""
    object: str = ""  # Kind/name when the output lists events of several objects, else ""
    quote: str = ""


@dataclass
class Metric:
    """An autoscaler metric: current against target, as printed (e.g. "95%" / "50%", "475m" / "500m")."""

    name: str
    current: str
    target: str
    quote: str = ""


@dataclass
class QuotaItem:
    """One resource of a ResourceQuota: used against hard."""

    quota: str
    resource: str
    used: str
    hard: str
    quote: str = ""


@dataclass
class Backend:
    """An ingress route: host, path, the service and port it sends to, and the endpoints kubectl printed."""

    service: str
    port: str = ""
    host: str = ""
    path: str = ""
    endpoints: str = ""  # describe only: "10.0.0.1:8080", or `<error: endpoints "x" not found>`
    quote: str = ""


@dataclass
class Fact:
    """A value read from the object and the line it was read from."""

    value: str
    quote: str = ""


@dataclass
class ObjectView:
    """One object as its output shows it. Fields the output does not show are empty.

    `facts` holds kind-specific values under stable names whatever the shape printed, e.g. max_replicas,
    current_replicas, desired_replicas, min_replicas, replicas_desired/updated/total/available/unavailable/ready,
    pods_running/waiting/succeeded/failed, backoff_limit, active_deadline_seconds, schedule, suspend,
    last_schedule_time, storage_class, volume, capacity, requested_storage, claim, allocatable_pods,
    non_terminated_pods, requests_percent.<resource>, endpoints, ready_addresses, selector, unschedulable,
    concurrency_policy, active_jobs, secret_name, issuer, not_after, renewal_time, service_account, and
    limitrange.<Type>.<resource>.<min|max|default|defaultRequest|maxLimitRequestRatio>.
    """

    shape: str = "empty"  # describe | yaml | json | events | empty
    kind: str = ""
    name: str = ""
    namespace: str = ""
    api_version: str = ""
    phase: str = ""  # status.phase / `Status:` (Running, Pending, Bound, Terminating, ...)
    reason: str = ""  # the object's own status reason (a pod's Evicted, DeadlineExceeded)
    message: str = ""
    conditions: list[Condition] = field(default_factory=list)
    containers: list[ContainerView] = field(default_factory=list)
    events: list[ObjectEvent] = field(default_factory=list)
    owner: Ref | None = None
    node: str = ""
    refs: list[Ref] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    quotas: list[QuotaItem] = field(default_factory=list)
    backends: list[Backend] = field(default_factory=list)
    facts: dict[str, Fact] = field(default_factory=dict)
    finalizers_remaining: list[str] = field(default_factory=list)
    truncated: bool = False

    def fact(self, name: str) -> str:
        """A fact's value, or ""."""
        found = self.facts.get(name)
        return found.value if found else ""

    def ref(self, kind: str, name: str, relation: str, **more: str) -> None:
        """Adds a reference (once), with the namespace this object's when the kind is namespaced."""
        if not (name or more.get("selector") or more.get("resource")):
            return
        namespace = None if kind in CLUSTER_SCOPED else (more.pop("namespace", "") or self.namespace or None)
        more.pop("namespace", None)
        api = more.pop("api_version", "") or API_VERSIONS.get(kind, "")
        new = Ref(kind, name, namespace, relation, api_version=api, **more)
        if new not in self.refs:
            self.refs.append(new)
