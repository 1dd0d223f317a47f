"""The Kubernetes objects an alert is about: read from its labels, annotations and text, never from a list of
known alerts.

Every label that names an object kind (kube-state-metrics' `pod`, `deployment`, `horizontalpodautoscaler`,
`persistentvolumeclaim`, ...) and every `Kind ns/name`, `kind/name` or `Kind "name"` phrase in the title,
description and annotations becomes an `ObjRef`. The metrics exporter's own pod and service (scrape labels such
as `job="kube-state-metrics"`) are not the alerted objects and are dropped.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple


class Kind(NamedTuple):
    """What the planner needs to know of an object kind: its apiVersion and whether it lives in a namespace."""

    name: str
    api_version: str
    namespaced: bool = True


KINDS: dict[str, Kind] = {
    k.name.lower(): k
    for k in (
        Kind("Pod", "v1"),
        Kind("Deployment", "apps/v1"),
        Kind("StatefulSet", "apps/v1"),
        Kind("DaemonSet", "apps/v1"),
        Kind("ReplicaSet", "apps/v1"),
        Kind("Job", "batch/v1"),
        Kind("CronJob", "batch/v1"),
        Kind("HorizontalPodAutoscaler", "autoscaling/v2"),
        Kind("Node", "v1", namespaced=False),
        Kind("Namespace", "v1", namespaced=False),
        Kind("Service", "v1"),
        Kind("Endpoints", "v1"),
        Kind("Ingress", "networking.k8s.io/v1"),
        Kind("IngressClass", "networking.k8s.io/v1", namespaced=False),
        Kind("NetworkPolicy", "networking.k8s.io/v1"),
        Kind("PersistentVolumeClaim", "v1"),
        Kind("PersistentVolume", "v1", namespaced=False),
        Kind("StorageClass", "storage.k8s.io/v1", namespaced=False),
        Kind("ConfigMap", "v1"),
        Kind("Secret", "v1"),
        Kind("ServiceAccount", "v1"),
        Kind("ResourceQuota", "v1"),
        Kind("LimitRange", "v1"),
        Kind("PodDisruptionBudget", "policy/v1"),
        Kind("Role", "rbac.authorization.k8s.io/v1"),
        Kind("RoleBinding", "rbac.authorization.k8s.io/v1"),
        Kind("ClusterRole", "rbac.authorization.k8s.io/v1", namespaced=False),
        Kind("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", namespaced=False),
        Kind("Certificate", "cert-manager.io/v1"),
        Kind("Issuer", "cert-manager.io/v1"),
        Kind("ClusterIssuer", "cert-manager.io/v1", namespaced=False),
        Kind("ServiceMonitor", "monitoring.coreos.com/v1"),
        Kind("PodMonitor", "monitoring.coreos.com/v1"),
    )
}

# Other spellings of a kind: kube-state-metrics label names, kubectl short names and plurals.
ALIASES: dict[str, str] = {
    "po": "pod",
    "pods": "pod",
    "deploy": "deployment",
    "deployments": "deployment",
    "sts": "statefulset",
    "statefulsets": "statefulset",
    "ds": "daemonset",
    "daemonsets": "daemonset",
    "rs": "replicaset",
    "replicasets": "replicaset",
    "jobs": "job",
    "job_name": "job",
    "job-name": "job",
    "batch.kubernetes.io/job-name": "job",
    "cronjobs": "cronjob",
    "cronjob_name": "cronjob",
    "cj": "cronjob",
    "hpa": "horizontalpodautoscaler",
    "horizontalpodautoscalers": "horizontalpodautoscaler",
    "nodes": "node",
    "kubernetes_node": "node",
    "no": "node",
    "ns": "namespace",
    "namespaces": "namespace",
    "exported_namespace": "namespace",
    "svc": "service",
    "services": "service",
    "exported_service": "service",
    "ep": "endpoints",
    "endpoint": "endpoints",
    "ing": "ingress",
    "ingresses": "ingress",
    "netpol": "networkpolicy",
    "pvc": "persistentvolumeclaim",
    "persistentvolumeclaims": "persistentvolumeclaim",
    "claim": "persistentvolumeclaim",
    "pv": "persistentvolume",
    "persistentvolumes": "persistentvolume",
    "volume": "persistentvolume",
    "sc": "storageclass",
    "storageclasses": "storageclass",
    "storage_class": "storageclass",
    "cm": "configmap",
    "configmaps": "configmap",
    "secrets": "secret",
    "secret_name": "secret",
    "sa": "serviceaccount",
    "service_account": "serviceaccount",
    "quota": "resourcequota",
    "resource_quota": "resourcequota",
    "resourcequotas": "resourcequota",
    "pdb": "poddisruptionbudget",
    "cert": "certificate",
    "certificates": "certificate",
    "certificate_name": "certificate",
    "issuer_name": "issuer",
}

# Label keys that name an object only for some alerts: `job` is the Prometheus scrape job on every alert,
# `service`/`endpoint` the scraped service. They count when the alert's name says it is about that kind.
_AMBIGUOUS_LABELS = {"job": "job", "endpoint": "endpoints", "volume": "persistentvolume", "instance": "node"}
# Exporters that publish metrics about other objects: their own pod, container and service are not the alerted ones.
_EXPORTERS = re.compile(r"(?i)kube-state-metrics|node-exporter")


class ObjRef(NamedTuple):
    """One object to look at. `namespace` is None for cluster-scoped kinds (and when the alert does not say)."""

    kind: str
    name: str
    namespace: str | None = None

    @property
    def api_version(self) -> str:
        """The apiVersion to ask for (the current stable group version of the kind)."""
        return KINDS[self.kind.lower()].api_version if self.kind.lower() in KINDS else "v1"

    def label(self) -> str:
        """`Kind ns/name` (or `Kind name`), the way a report names it."""
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def kind_of(word: str) -> Kind | None:
    """The kind a word names (`hpa`, `Deployment`, `persistentvolumeclaim`, `job_name`), or None."""
    key = word.strip().lower()
    key = ALIASES.get(key, key)
    return KINDS.get(key)


def ref(kind: str, name: str, namespace: str | None) -> ObjRef | None:
    """A reference with the kind's canonical spelling, the namespace dropped for cluster-scoped kinds."""
    k = kind_of(kind)
    name = name.strip().strip("\"'`.,;()")
    if k is None or not _NAME.fullmatch(name):
        return None
    return ObjRef(k.name, name, namespace if k.namespaced else None)


_NAME = re.compile(r"[A-Za-z0-9][-A-Za-z0-9_.:]{0,252}")


class AlertObjects(NamedTuple):
    """What an alert names: its namespace, container, the objects in the order they should be looked at, the
    application names its labels carry (`app`, `app.kubernetes.io/name`: pods are usually named after them)
    and the hosts of the URLs it probes (an Ingress serves them)."""

    namespace: str | None
    container: str | None
    objects: list[ObjRef]
    apps: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    instance_host: str | None = None


_APP_LABELS = (
    "app", "app_kubernetes_io_name", "app.kubernetes.io/name", "app_kubernetes_io_instance", "k8s_app", "k8s-app",
    "service_name", "application", "workload", "label_app", "label_app_kubernetes_io_name",
)  # fmt: skip
_URL_HOST = re.compile(r"(?i)\bhttps?://([a-z0-9][-a-z0-9.]{0,252})")


# Operators' alerts name their custom resource in a `name` label; the alert's name says which operator.
_OPERATOR_KINDS = (
    (re.compile(r"(?i)argo ?cd"), "Application", "argoproj.io/v1alpha1"),
    (re.compile(r"(?i)cert.?manager|certificate"), "Certificate", "cert-manager.io/v1"),
    (re.compile(r"(?i)flux|kustomization"), "Kustomization", "kustomize.toolkit.fluxcd.io/v1"),
    (re.compile(r"(?i)helm ?release"), "HelmRelease", "helm.toolkit.fluxcd.io/v2"),
)
for _rx, _kind, _api in _OPERATOR_KINDS:
    KINDS.setdefault(_kind.lower(), Kind(_kind, _api))


def alert_objects(alert: dict[str, Any]) -> AlertObjects:
    """Every object the alert names, most specific first (a pod before its workload before its namespace)."""
    labels = {str(k): str(v) for k, v in (alert.get("labels") or {}).items() if v not in (None, "")}
    alertname = (labels.get("alertname") or str(alert.get("title") or "")).lower()
    scrape_job = labels.get("job", "")
    # Without honorLabels the series' own namespace is `exported_namespace`; `namespace` is the scraped target's.
    namespace = labels.get("exported_namespace") or labels.get("namespace") or _str(alert.get("namespace"))
    found: list[ObjRef] = []

    def add(obj: ObjRef | None) -> None:
        if obj is not None and obj not in found and not _is_exporter(obj.name, scrape_job):
            found.append(obj)

    operator = next((k for rx, k, _ in _OPERATOR_KINDS if rx.search(alertname)), None)
    operator_alert = bool(operator and labels.get("name"))
    for obj in _label_objects(labels, alertname, namespace, operator_alert):
        add(obj)
    if operator and operator_alert:
        add(ref(operator, labels["name"], namespace))
    for target in _scrape_target(labels, alertname, namespace):
        add(target)
    text = _alert_text(alert)
    for obj in text_objects(text, namespace):
        add(obj)
    if namespace is None:
        namespace = next((o.namespace for o in found if o.namespace), None) or text_namespace(text)
    container = labels.get("container")
    if container and (_is_exporter(container, scrape_job) or operator_alert):
        container = None
    if namespace:
        add(ObjRef("Namespace", namespace))
    apps = tuple(
        dict.fromkeys([*(v for k in _APP_LABELS if (v := labels.get(k)) and _NAME.fullmatch(v)), *text_apps(text)])
    )
    probed = " ".join([*labels.values(), text])
    hosts = tuple(dict.fromkeys(h.lower().rstrip(".") for h in _URL_HOST.findall(probed)))[:3]
    for service in _service_hosts(hosts):
        add(service)
    instance_host = _instance_node(labels, alertname, found)
    return AlertObjects(namespace, container, sorted(found, key=_priority), apps, hosts, instance_host)


def _service_hosts(hosts: tuple[str, ...]) -> list[ObjRef]:
    """A cluster DNS name (`svc.ns.svc`, `svc.ns.svc.cluster.local`) names the Service itself."""
    return [ObjRef("Service", m.group(1), m.group(2)) for h in hosts if (m := _SERVICE_HOST.fullmatch(h))]


_SERVICE_HOST = re.compile(r"([a-z0-9][-a-z0-9]{0,62})\.([a-z0-9][-a-z0-9]{0,62})\.svc(?:\.cluster\.local)?")
_TARGETS_DOWN = re.compile(r"targetdown|scrape|target.?missing|endpoint.?down")


def _scrape_target(labels: dict[str, str], alertname: str, namespace: str | None) -> list[ObjRef]:
    """A scrape target that is down: the `service` label is the target's Service (a scrape label elsewhere), and
    the ServiceMonitor that scrapes it is usually named after the job. An exporter scraping itself is not one."""
    job = labels.get("job", "")
    if not _TARGETS_DOWN.search(alertname) or _is_exporter(job, job):
        return []
    found = [
        ref(kind, labels[key], namespace)
        for key, kind in (("service", "Service"), ("job", "ServiceMonitor"))
        if labels.get(key) and _NAME.fullmatch(labels[key])
    ]
    return [f for f in found if f is not None]


def _label_objects(
    labels: dict[str, str], alertname: str, namespace: str | None, operator_alert: bool
) -> list[ObjRef | None]:
    """The objects the labels name. An operator's alert is about its custom resource: the pod, container and
    service labels are the operator's own scrape target. Beside exported_namespace, the scraped target's own pod
    lives in the target's `namespace`, and `exported_service` is the Service the series is about."""
    scrape_job = labels.get("job", "")
    found: list[ObjRef | None] = []
    for key, value in labels.items():
        kind = _label_kind(key, value, alertname, scrape_job)
        if kind is not None and not (operator_alert and key in ("pod", "service")):
            own = labels.get("namespace") if key == "pod" and labels.get("exported_namespace") else None
            found.append(ref(kind, value, own or namespace))
    if labels.get("exported_service") and _NAME.fullmatch(labels["exported_service"]):
        found.append(ref("Service", labels["exported_service"], namespace))
    return found


def _label_kind(key: str, value: str, alertname: str, scrape_job: str) -> str | None:
    """The kind a label names, or None: `job`, `instance` and `endpoint` only when the alert is about that kind,
    a scraped target's own `service` never."""
    if key in ("namespace", "exported_namespace", "container", "alertname"):
        return None
    if key in _AMBIGUOUS_LABELS:
        kind = _AMBIGUOUS_LABELS[key]
        about = kind.replace("endpoints", "endpoint") in alertname.replace("cronjob", "")
        if not about or (kind == "node" and not _NODE_NAME.fullmatch(value)):
            return None
        return kind
    if kind_of(key) is None or (key == "service" and _is_scrape_service(value, scrape_job)):
        return None
    return key


def _instance_node(labels: dict[str, str], alertname: str, found: list[ObjRef]) -> str | None:
    """A node-level alert (node-exporter, kubelet) names its node by the scrape target's address only."""
    about_nodes = re.search(r"(?i)node|kubelet|filesystem|disk", alertname + labels.get("job", ""))
    if any(o.kind == "Node" for o in found) or not about_nodes:
        return None
    return labels.get("instance", "").rsplit(":", 1)[0] or None


# Looked at first: the object closest to the failure (a pod), then what manages it, then what it uses.
_ORDER = (
    "Pod", "Job", "CronJob", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "HorizontalPodAutoscaler",
    "PersistentVolumeClaim", "PersistentVolume", "Ingress", "Service", "Endpoints", "Certificate", "Node",
    "ResourceQuota", "ConfigMap", "Secret", "StorageClass", "Namespace",
)  # fmt: skip


def _priority(obj: ObjRef) -> int:
    return _ORDER.index(obj.kind) if obj.kind in _ORDER else len(_ORDER) - 1


# An `instance` label is a node only when it is a host name, not `10.0.0.1:9100`.
_NODE_NAME = re.compile(r"[a-z][-a-z0-9.]*[a-z0-9]")


def _is_scrape_service(value: str, scrape_job: str) -> bool:
    """The `service` label of a scraped target (kube-prometheus names it `<release>-kubelet` for job=kubelet)."""
    return bool(scrape_job) and (scrape_job in value or _is_exporter(value, scrape_job))


def _is_exporter(name: str, scrape_job: str) -> bool:
    exporter_job = bool(scrape_job) and bool(_EXPORTERS.search(scrape_job))
    return bool(_EXPORTERS.search(name)) or (exporter_job and scrape_job in name)


def _str(value: Any) -> str | None:
    return str(value) if value else None


def _alert_text(alert: dict[str, Any]) -> str:
    parts = [str(alert.get("title") or ""), str(alert.get("description") or "")]
    parts += [str(v) for k, v in (alert.get("annotations") or {}).items() if k != "runbook_url"]
    return "\n".join(parts)[:20_000]


_KIND_WORDS = sorted({*KINDS, *ALIASES} - {"claim", "volume", "no", "po", "job_name", "ns", "ep"}, key=len)[::-1]
# `Kind ns/name`, `Kind name`, `kind/name`, `Kind "name"`: a kind word, then a name token. Names are one token of
# the characters names may hold (no nested quantifiers: linear on any text).
# `Kind ns/name`, `Kind name`, `kind/name`, `Kind "name"`: a kind word, then a name token. Names are one token of
# the characters names may hold (no nested quantifiers: linear on any text).
_KIND_PHRASE = re.compile(
    r"(?i)(?<![\w/.-])(" + "|".join(re.escape(w) for w in _KIND_WORDS) + r")"
    r"(/|\s+(?:named\s+)?([`'\"]?))([a-z0-9][-a-z0-9_.]*(?:/[a-z0-9][-a-z0-9_.]*)?)"
)
_IN_NAMESPACE = re.compile(
    r"(?i)\bin (?:the )?namespace[s]? [`'\"]?([a-z0-9][-a-z0-9]*)|\bnamespace[=:] ?[`'\"]?([a-z0-9][-a-z0-9]*)|"
    r"\b(?:in|of) (?:the )?[`'\"]?([a-z0-9][-a-z0-9]*)[`'\"]? namespace\b"
)
# Words prose puts where a name could stand ("in the same namespace", "app is down").
_NOT_NAMES = frozenset(
    "a an the this that same its their every each any all other is are was has have been being not no of in on "
    "for to with by from and or which running failing failed down up".split()
)
# Words that name an application rather than a kind: its pods are named after it.
_APP_PHRASE = re.compile(
    r"(?i)\b(?:app|application|workload|microservice)[:=]? [`'\"]?([a-z0-9][-a-z0-9]*)[`'\"]?|"
    r"(?<![-\w])[`'\"]?([a-z0-9]+-[-a-z0-9]*)[`'\"]? "
    r"(?:workload|app|application|microservice|service|deployment|pods?)\b|"
    r"\b(?:containers?|pods?|replicas?|instances?) of [`'\"]?([a-z0-9][-a-z0-9]*)|"
    r"(?<![-\w/])[`'\"]?([a-z0-9]+-[-a-z0-9]*)[`'\"]? in (?:the )?namespace\b"
)


def text_namespace(text: str) -> str | None:
    """The namespace a text names (`in namespace x`, `namespace: x`, `in the x namespace`), or None."""
    m = _IN_NAMESPACE.search(text)
    found = (m.group(1) or m.group(2) or m.group(3)) if m else None
    return found if found and found.lower() not in _NOT_NAMES else None


def text_apps(text: str) -> list[str]:
    """Application names a text gives (`app foo-api`, `workload ledger`): pods are usually named after them."""
    names = [next(g for g in m.groups() if g) for m in _APP_PHRASE.finditer(text)]
    return list(dict.fromkeys(n for n in names if n.lower() not in _NOT_NAMES))[:3]


def text_objects(text: str, namespace: str | None = None) -> list[ObjRef]:
    """Objects named in prose: `Pod ns/name`, `deployment web`, `hpa/web`, `PersistentVolumeClaim "data-0"`."""
    text_ns = text_namespace(text)
    out: list[ObjRef] = []
    for m in _KIND_PHRASE.finditer(text):
        word, sep, quote, token = m.group(1), m.group(2), m.group(3), m.group(4).rstrip(".")
        # Prose says "pod capacity", "node fails": a bare word after a kind counts only when it looks like a name
        # (a hyphen or a digit in it), is quoted, or is written kind/name or ns/name.
        if not (sep == "/" or quote or "/" in token or re.search(r"[-\d]", token)):
            continue
        if word.islower() and len(word) <= 3 and sep != "/":
            continue  # `ing`, `sa`, `cm` are English too; only `cm/name` style counts
        k = kind_of(word)
        if k is None:
            continue
        ns = namespace or text_ns
        if "/" in token:
            ns, token = token.split("/", 1)
        obj = ref("Namespace", token, None) if k.name == "Namespace" else ref(k.name, token, ns)
        if obj is not None and obj not in out:
            out.append(obj)
    return out


_DEPLOYMENT_POD = re.compile(r"^([a-z0-9][-a-z0-9]{0,200})-[a-z0-9]{6,10}-[a-z0-9]{5}$")
_JOB_POD = re.compile(r"^[a-z0-9][-a-z0-9]{0,200}-\d{6,12}-[a-z0-9]{5}$")
_SET_POD = re.compile(r"^([a-z0-9][-a-z0-9]{0,200})-[a-z0-9]{5}$")
_ORDINAL_POD = re.compile(r"^([a-z0-9][-a-z0-9]{0,200})-\d{1,4}$")


def owner_by_name(pod: ObjRef) -> ObjRef | None:
    """The workload a pod's generated name implies, when the pod itself cannot be read: `web-7c9d6f5b8-x2x9q` is
    Deployment web's, `agent-x2x9q` a DaemonSet's, `db-0` a StatefulSet's (a CronJob's pods are left out: their
    Job is gone soon and the name says little)."""
    name = pod.name
    if _JOB_POD.match(name):
        return None
    if m := _DEPLOYMENT_POD.match(name):
        return ObjRef("Deployment", m.group(1), pod.namespace)
    if m := _SET_POD.match(name):
        return ObjRef("DaemonSet", m.group(1), pod.namespace)
    if m := _ORDINAL_POD.match(name):
        return ObjRef("StatefulSet", m.group(1), pod.namespace)
    return None
