"""An ObjectView from an object as `kubectl get -o yaml|json` (or kubernetes-mcp-server) prints it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.investigations.rules.object_view.read_describe import note_remaining
from shared.investigations.rules.object_view.view import (
    Backend,
    Condition,
    ContainerView,
    Fact,
    Metric,
    ObjectEvent,
    ObjectView,
    QuotaItem,
)

_QUOTE_WIDTH = 300


class Quoter:
    """Finds the line of the output that shows a key's value, to quote it verbatim.

    Lines are indexed by their key once; a value is looked up among the lines of its key. One-line (compact)
    JSON is searched as text, and a quote from it is a window of at most 300 characters.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.by_key: dict[str, list[int]] = {}
        for i, line in enumerate(self.lines):
            s = line.strip()
            if s.startswith("- "):
                s = s[2:].lstrip()
            key = s.split(":", 1)[0].strip().strip("\"'") if ":" in s[:120] else ""
            if key:
                self.by_key.setdefault(key, []).append(i)

    def find(self, key: str, value: Any = None) -> str:
        """The stripped line holding `key: value` (or `"key": value`), or "" when the output has none."""
        wanted = text_of(value)
        for i in self.by_key.get(key, []):
            line = self.lines[i].strip()
            if wanted in line:
                return _window(line, line.find(wanted, len(key)))
        return self._in_text(key, wanted)

    def find_text(self, key: str, text: str) -> str:
        """The line holding a long text value: its start is looked up (a long value is wrapped or escaped)."""
        for size in (60, 24):
            found = self.find(key, text[:size].strip())
            if found:
                return found
        return ""

    def _in_text(self, key: str, wanted: str) -> str:
        needle = f'"{key}":'
        pos = self.text.find(needle)
        for _ in range(50):
            if pos < 0:
                return ""
            at = self.text.find(wanted, pos + len(needle), pos + len(needle) + len(wanted) + 4)
            if at >= 0:
                end = min(at + len(wanted) + 1, pos + _QUOTE_WIDTH)
                return self.text[pos:end].strip()
            pos = self.text.find(needle, pos + 1)
        return ""


def _window(line: str, at: int) -> str:
    if len(line) <= _QUOTE_WIDTH:
        return line
    start = max(0, min(at, len(line)) - 80)
    return line[start : start + _QUOTE_WIDTH]


def text_of(value: Any) -> str:
    """A scalar as the output prints it (True -> "True": status fields are quoted strings in YAML)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def get(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]..., or None when a step is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def mapping(value: Any) -> dict[str, Any]:
    """The value when it is a mapping, else {}."""
    return value if isinstance(value, dict) else {}


def dicts(value: Any) -> list[dict[str, Any]]:
    """The mappings of a list (anything else: [])."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    s = text_of(value)
    return int(s) if s.lstrip("-").isdigit() and len(s) < 19 else None


def is_event_list(doc: Any) -> bool:
    """A list of events (kubernetes-mcp-server's YAML list, or an EventList's items)."""
    items = doc.get("items") if isinstance(doc, dict) else doc
    first = dicts(items)[:1]
    return bool(first) and any(k in first[0] for k in ("InvolvedObject", "involvedObject", "regarding"))


def read_events(doc: Any, text: str, shape: str) -> ObjectView:
    """The view of an event listing: no object, only events, each naming its object."""
    q = Quoter(text)
    items = doc.get("items") if isinstance(doc, dict) else doc
    view = ObjectView(shape=shape, kind="EventList")
    for e in dicts(items):

        def pick(*keys: str, e: dict[str, Any] = e) -> Any:
            return next((e[k] for k in keys if e.get(k) not in (None, "")), None)

        involved = pick("InvolvedObject", "involvedObject", "regarding") or {}
        obj = f"{text_of(get(involved, 'Kind') or get(involved, 'kind'))}/"
        obj += text_of(get(involved, "Name") or get(involved, "name"))
        message = text_of(pick("Message", "message", "note"))
        count = _int(pick("Count", "count", "deprecatedCount"))
        age = text_of(pick("Timestamp", "lastTimestamp", "eventTime", "firstTimestamp"))
        key = "Message" if "Message" in e else "message" if "message" in e else "note"
        view.events.append(
            ObjectEvent(
                text_of(pick("Type", "type")),
                text_of(pick("Reason", "reason")),
                message,
                count,
                age,
                obj.strip("/"),
                q.find_text(key, message) or message[:300],
            )
        )
    return view


def read(doc: dict[str, Any], text: str, shape: str, kind_hint: str = "") -> ObjectView:
    """The view of one object's document."""
    q = Quoter(text)
    meta = mapping(doc.get("metadata"))
    view = ObjectView(shape=shape, kind=text_of(doc.get("kind")) or kind_hint)
    view.name, view.namespace = text_of(meta.get("name")), text_of(meta.get("namespace"))
    view.api_version = text_of(doc.get("apiVersion"))
    status = mapping(doc.get("status"))
    spec = mapping(doc.get("spec"))
    view.phase = text_of(status.get("phase"))
    view.reason, view.message = text_of(status.get("reason")), text_of(status.get("message"))
    _owner(meta, view)
    for c in dicts(status.get("conditions")):
        message, reason, ctype = text_of(c.get("message")), text_of(c.get("reason")), text_of(c.get("type"))
        quote = q.find_text("message", message) if message else q.find("reason", reason) if reason else ""
        view.conditions.append(
            Condition(ctype, text_of(c.get("status")), reason, message, quote or q.find("type", ctype))
        )
    pod_spec = _pod_spec(view.kind, spec)
    view.containers = _containers(pod_spec, status if view.kind == "Pod" else {}, q)
    _pod_refs(pod_spec, view)
    for reader in _BY_KIND.get(view.kind, ()):
        reader(doc, spec, status, view, q)
    return view


def _owner(meta: dict[str, Any], view: ObjectView) -> None:
    owners = dicts(meta.get("ownerReferences"))
    owners.sort(key=lambda o: o.get("controller") is not True)
    for o in owners:
        view.ref(text_of(o.get("kind")), text_of(o.get("name")), "owner", api_version=text_of(o.get("apiVersion")))
        view.owner = view.owner or (view.refs[-1] if view.refs else None)


def _pod_spec(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    if kind == "Pod":
        return spec
    template = get(spec, "jobTemplate", "spec", "template", "spec") or get(spec, "template", "spec")
    return template if isinstance(template, dict) else {}


def _state(block: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(block, dict):
        return "", {}
    for name in ("waiting", "running", "terminated"):
        if isinstance(block.get(name), dict):
            return name.capitalize(), block[name]
    return "", {}


def _containers(pod_spec: dict[str, Any], status: dict[str, Any], q: Quoter) -> list[ContainerView]:
    out: list[ContainerView] = []
    for init, spec_key, status_key in (
        (True, "initContainers", "initContainerStatuses"),
        (False, "containers", "containerStatuses"),
    ):
        specs = {text_of(s.get("name")): s for s in dicts(pod_spec.get(spec_key))}
        statuses = {text_of(s.get("name")): s for s in dicts(status.get(status_key))}
        names = [*specs, *(n for n in statuses if n not in specs)]
        out += [_container(name, init, specs.get(name, {}), statuses.get(name, {}), q) for name in names]
    return out


def _container(name: str, init: bool, spec: dict[str, Any], st: dict[str, Any], q: Quoter) -> ContainerView:
    c = ContainerView(name, init, image=text_of(spec.get("image") or st.get("image")))
    quotes: dict[str, str] = {}
    c.state, now = _state(st.get("state"))
    c.last_state, last = _state(st.get("lastState"))
    c.reason, c.message, c.exit_code = (
        text_of(now.get("reason")),
        text_of(now.get("message")),
        _int(now.get("exitCode")),
    )
    c.last_reason, c.last_message = text_of(last.get("reason")), text_of(last.get("message"))
    c.last_exit_code = _int(last.get("exitCode"))
    ready = st.get("ready")
    c.ready = ready if isinstance(ready, bool) else None
    c.restart_count = _int(st.get("restartCount"))
    for field, key, value in (
        ("image", "image", c.image),
        ("reason", "reason", c.reason),
        ("message", "message", c.message[:24]),
        ("exit_code", "exitCode", c.exit_code),
        ("last_reason", "reason", c.last_reason),
        ("last_message", "message", c.last_message[:24]),
        ("last_exit_code", "exitCode", c.last_exit_code),
        ("restart_count", "restartCount", c.restart_count),
    ):
        if value not in (None, ""):
            quotes[field] = q.find(key, value)
    resources = mapping(spec.get("resources"))
    for section, target in (("limits", c.limits), ("requests", c.requests)):
        block = resources.get(section)
        for res, amount in block.items() if isinstance(block, dict) else []:
            target[str(res)] = text_of(amount)
            quotes[f"{section}.{res}"] = q.find(str(res), text_of(amount))
    for key in ("command", "args"):
        value = spec.get(key)
        c.command += [text_of(v) for v in value] if isinstance(value, list) else []
    c.quotes = {k: v for k, v in quotes.items() if v}
    return c


def _pod_refs(pod_spec: dict[str, Any], view: ObjectView) -> None:
    """Node, claims, ConfigMaps, Secrets and the service account a pod (or a pod template) uses."""
    node = text_of(pod_spec.get("nodeName"))
    if node:
        view.node = node
        view.ref("Node", node, "node")
    for v in dicts(pod_spec.get("volumes")):
        vol = text_of(v.get("name"))
        view.ref("PersistentVolumeClaim", text_of(get(v, "persistentVolumeClaim", "claimName")), f"volume {vol}")
        view.ref("ConfigMap", text_of(get(v, "configMap", "name")), f"volume {vol}")
        view.ref("Secret", text_of(get(v, "secret", "secretName")), f"volume {vol}")
        for source in dicts(get(v, "projected", "sources")):
            view.ref("ConfigMap", text_of(get(source, "configMap", "name")), f"volume {vol}")
            view.ref("Secret", text_of(get(source, "secret", "name")), f"volume {vol}")
    for c in dicts(pod_spec.get("initContainers")) + dicts(pod_spec.get("containers")):
        for env in dicts(c.get("env")):
            why = f"env {text_of(env.get('name'))}"
            view.ref("ConfigMap", text_of(get(env, "valueFrom", "configMapKeyRef", "name")), why)
            view.ref("Secret", text_of(get(env, "valueFrom", "secretKeyRef", "name")), why)
        for source in dicts(c.get("envFrom")):
            view.ref("ConfigMap", text_of(get(source, "configMapRef", "name")), "envFrom")
            view.ref("Secret", text_of(get(source, "secretRef", "name")), "envFrom")
    for secret in dicts(pod_spec.get("imagePullSecrets")):
        view.ref("Secret", text_of(secret.get("name")), "image pull secret")
    account = text_of(pod_spec.get("serviceAccountName") or pod_spec.get("serviceAccount"))
    if account and account != "default" and view.kind == "Pod":  # every namespace's own: nothing to follow
        view.ref("ServiceAccount", account, "service account")


def _fact(view: ObjectView, name: str, q: Quoter, key: str, value: Any) -> None:
    if value not in (None, "") and not isinstance(value, (dict, list)):
        view.facts[name] = Fact(text_of(value), q.find(key, value))


def _selector(spec: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    selector = mapping(spec.get("selector"))
    labels = mapping(selector.get("matchLabels")) if "matchLabels" in selector else selector
    pairs = ",".join(f"{k}={text_of(v)}" for k, v in labels.items() if not isinstance(v, (dict, list)))
    if pairs:
        first = next(iter(labels))
        view.facts["selector"] = Fact(pairs, q.find(str(first), labels[first]))
        view.ref("Pod", "", "selected pods", selector=pairs)


_REPLICAS = (
    ("replicas_desired", "spec", "replicas"), ("replicas_total", "status", "replicas"),
    ("replicas_ready", "status", "readyReplicas"), ("replicas_available", "status", "availableReplicas"),
    ("replicas_updated", "status", "updatedReplicas"), ("replicas_unavailable", "status", "unavailableReplicas"),
    ("replicas_desired", "status", "desiredNumberScheduled"), ("replicas_current", "status", "currentNumberScheduled"),
    ("replicas_ready", "status", "numberReady"), ("replicas_available", "status", "numberAvailable"),
    ("replicas_unavailable", "status", "numberUnavailable"), ("replicas_misscheduled", "status", "numberMisscheduled"),
)  # fmt: skip


def _workload(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    _selector(spec, view, q)
    parts = {"spec": spec, "status": status}
    for name, part, key in _REPLICAS:
        _fact(view, name, q, key, parts[part].get(key))
    desired = view.fact("replicas_desired")
    # The API leaves out a count that is zero: a status that was written but has no available count means none.
    if desired and status.get("observedGeneration") is not None and "replicas_available" not in view.facts:
        view.facts["replicas_available"] = Fact("0", q.find("observedGeneration", status.get("observedGeneration")))
    for claim in dicts(spec.get("volumeClaimTemplates")):
        view.ref("StorageClass", text_of(get(claim, "spec", "storageClassName")), "storage class of its volume claims")


def _hpa(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    scale = mapping(spec.get("scaleTargetRef"))
    view.ref(
        text_of(scale.get("kind")),
        text_of(scale.get("name")),
        "scale target",
        api_version=text_of(scale.get("apiVersion")),
    )
    for name, part, field in (
        ("min_replicas", spec, "minReplicas"),
        ("max_replicas", spec, "maxReplicas"),
        ("current_replicas", status, "currentReplicas"),
        ("desired_replicas", status, "desiredReplicas"),
    ):
        _fact(view, name, q, field, part.get(field))
    if spec.get("targetCPUUtilizationPercentage") is not None:  # autoscaling/v1
        current = status.get("currentCPUUtilizationPercentage")
        view.metrics.append(
            Metric(
                "resource cpu on pods (as a percentage of request)",
                f"{current}%" if current is not None else "<unknown>",
                f"{spec['targetCPUUtilizationPercentage']}%",
                q.find("currentCPUUtilizationPercentage", current) if current is not None else "",
            )
        )
    currents = {_metric_key(m): m for m in dicts(status.get("currentMetrics"))}
    for m in dicts(spec.get("metrics")):
        key = _metric_key(m)
        body = _metric_body(m)
        target = _amount(get(body, "target") or body)
        current_block = get(_metric_body(currents[key]), "current") if key in currents else None
        current = _amount(current_block) if current_block is not None else "<unknown>"
        quote = ""
        if isinstance(current_block, dict):
            shown = next(iter(k for k in ("averageUtilization", "averageValue", "value") if k in current_block), "")
            quote = q.find(shown, current_block.get(shown)) if shown else ""
        view.metrics.append(Metric(f"{key[0].lower()} {key[1]}".strip(), current, target, quote))


def _metric_body(m: dict[str, Any]) -> dict[str, Any]:
    mtype = text_of(m.get("type"))
    body = m.get(mtype[:1].lower() + mtype[1:]) if mtype else None
    return body if isinstance(body, dict) else {}


def _metric_key(m: dict[str, Any]) -> tuple[str, str]:
    body = _metric_body(m)
    return text_of(m.get("type")), text_of(body.get("name") or get(body, "metric", "name"))


def _amount(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    if block.get("averageUtilization") is not None:
        return f"{block['averageUtilization']}%"
    for key in ("averageValue", "value", "targetAverageValue"):
        if block.get(key) is not None:
            return text_of(block[key])
    return ""


def _job(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    _selector(spec, view, q)
    for name, part, key in (
        ("backoff_limit", spec, "backoffLimit"),
        ("active_deadline_seconds", spec, "activeDeadlineSeconds"),
        ("completions", spec, "completions"),
        ("pods_failed", status, "failed"),
        ("pods_succeeded", status, "succeeded"),
        ("pods_active", status, "active"),
    ):
        _fact(view, name, q, key, part.get(key))


def _cronjob(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    for name, part, key in (
        ("schedule", spec, "schedule"),
        ("suspend", spec, "suspend"),
        ("concurrency_policy", spec, "concurrencyPolicy"),
        ("last_schedule_time", status, "lastScheduleTime"),
        ("last_successful_time", status, "lastSuccessfulTime"),
    ):
        _fact(view, name, q, key, part.get(key))
    active = dicts(status.get("active"))
    for job in active:
        view.ref("Job", text_of(job.get("name")), "active job", namespace=text_of(job.get("namespace")))
    if active:
        names = ",".join(text_of(j.get("name")) for j in active)
        view.facts["active_jobs"] = Fact(names, q.find("name", active[0].get("name")))


def _node(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    _fact(view, "allocatable_pods", q, "pods", get(status, "allocatable", "pods"))
    _fact(view, "capacity_pods", q, "pods", get(status, "capacity", "pods"))
    _fact(view, "unschedulable", q, "unschedulable", spec.get("unschedulable"))


def _pvc(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    _fact(view, "storage_class", q, "storageClassName", spec.get("storageClassName"))
    _fact(view, "volume", q, "volumeName", spec.get("volumeName"))
    _fact(view, "requested_storage", q, "storage", get(spec, "resources", "requests", "storage"))
    _fact(view, "capacity", q, "storage", get(status, "capacity", "storage"))
    view.ref("StorageClass", view.fact("storage_class"), "storage class")
    view.ref("PersistentVolume", view.fact("volume"), "bound volume")


def _pv(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    claim = mapping(spec.get("claimRef"))
    if claim.get("name"):
        view.facts["claim"] = Fact(
            f"{text_of(claim.get('namespace'))}/{text_of(claim['name'])}", q.find("name", claim["name"])
        )
        view.ref("PersistentVolumeClaim", text_of(claim["name"]), "claim", namespace=text_of(claim.get("namespace")))
    _fact(view, "storage_class", q, "storageClassName", spec.get("storageClassName"))
    _fact(view, "capacity", q, "storage", get(spec, "capacity", "storage"))
    view.ref("StorageClass", view.fact("storage_class"), "storage class")


def _service(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    _selector(spec, view, q)
    _fact(view, "type", q, "type", spec.get("type"))
    view.ref("Endpoints", view.name, "endpoints")


def _endpoints(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    ready = [a for s in dicts(doc.get("subsets")) for a in dicts(s.get("addresses"))]
    not_ready = [a for s in dicts(doc.get("subsets")) for a in dicts(s.get("notReadyAddresses"))]
    view.facts["ready_addresses"] = Fact(
        ",".join(text_of(a.get("ip")) for a in ready) or "<none>", q.find("subsets") or q.find("kind", "Endpoints")
    )
    if not_ready:
        view.facts["not_ready_addresses"] = Fact(
            ",".join(text_of(a.get("ip")) for a in not_ready), q.find("notReadyAddresses")
        )


def _ingress(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    view.ref("IngressClass", text_of(spec.get("ingressClassName")), "ingress class")
    for tls in dicts(spec.get("tls")):
        view.ref("Secret", text_of(tls.get("secretName")), "TLS secret")
    routes: list[tuple[str, str, Any]] = [("", "", spec.get("defaultBackend") or spec.get("backend"))]
    routes += [
        (text_of(rule.get("host")), text_of(p.get("path")), p.get("backend"))
        for rule in dicts(spec.get("rules"))
        for p in dicts(get(rule, "http", "paths"))
    ]
    for host, path, backend in routes:
        service = get(backend, "service", "name") or get(backend, "serviceName")
        if not service:
            continue
        port = get(backend, "service", "port", "number") or get(backend, "service", "port", "name")
        port = port or get(backend, "servicePort")
        view.backends.append(Backend(text_of(service), text_of(port), host, path, "", q.find("name", service)))
        view.ref("Service", text_of(service), "backend service")


def _namespace(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    note_remaining(view)


def _quota(doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter) -> None:
    hard = mapping(status.get("hard")) or mapping(spec.get("hard"))
    used = mapping(status.get("used"))
    for res, limit in hard.items():
        amount = text_of(used.get(res, ""))
        view.quotas.append(QuotaItem(view.name, str(res), amount, text_of(limit), q.find(str(res), amount)))


def _limit_range(
    doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter
) -> None:
    for item in dicts(spec.get("limits")):
        for column in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            block = item.get(column)
            for res, amount in block.items() if isinstance(block, dict) else []:
                name = f"limitrange.{text_of(item.get('type'))}.{res}.{column}"
                view.facts[name] = Fact(text_of(amount), q.find(str(res), amount))


def _certificate(
    doc: dict[str, Any], spec: dict[str, Any], status: dict[str, Any], view: ObjectView, q: Quoter
) -> None:
    _fact(view, "secret_name", q, "secretName", spec.get("secretName"))
    view.ref("Secret", view.fact("secret_name"), "certificate secret")
    issuer = mapping(spec.get("issuerRef"))
    if issuer.get("name"):
        _fact(view, "issuer", q, "name", issuer.get("name"))
        view.ref(text_of(issuer.get("kind")) or "Issuer", text_of(issuer["name"]), "issuer")
    for name, key in (("not_after", "notAfter"), ("not_before", "notBefore"), ("renewal_time", "renewalTime")):
        _fact(view, name, q, key, status.get(key))


_Reader = Callable[[dict[str, Any], dict[str, Any], dict[str, Any], ObjectView, Quoter], None]
_BY_KIND: dict[str, tuple[_Reader, ...]] = {
    "HorizontalPodAutoscaler": (_hpa,),
    "Deployment": (_workload,), "StatefulSet": (_workload,), "DaemonSet": (_workload,), "ReplicaSet": (_workload,),
    "ReplicationController": (_workload,),
    "Job": (_job,), "CronJob": (_cronjob,), "Node": (_node,), "PersistentVolumeClaim": (_pvc,),
    "PersistentVolume": (_pv,), "Service": (_service,), "Endpoints": (_endpoints,), "Ingress": (_ingress,),
    "Namespace": (_namespace,), "ResourceQuota": (_quota,), "LimitRange": (_limit_range,),
    "Certificate": (_certificate,),
}  # fmt: skip
