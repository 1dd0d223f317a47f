"""An ObjectView from `kubectl describe` text (built-in kinds and custom resources alike)."""

from __future__ import annotations

import re

from shared.investigations.rules.object_view import describe
from shared.investigations.rules.object_view.describe import DNode
from shared.investigations.rules.object_view.view import (
    PLURALS,
    Backend,
    Condition,
    ContainerView,
    Fact,
    Metric,
    ObjectEvent,
    ObjectView,
    QuotaItem,
)

_NONE = {"", "<none>", "<unset>", "<nil>", "none"}
_COUNT = re.compile(r"(?<!\d)(\d+) ([A-Za-z]+)")  # `3 desired`, `2 unavailable`, `0 Running`
_REPEATS = re.compile(r"\(x(\d+) over")
_SECRET_IN_ENV = re.compile(r"in secret '([^']+)'")
_CONFIGMAP_IN_ENV = re.compile(r"of config map '([^']+)'")

# Top-level keys (all of them present) that tell a kind from its describe text, first match wins.
_KIND_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("HorizontalPodAutoscaler", ("Reference", "Max replicas")),
    ("CronJob", ("Schedule", "Concurrency Policy")),
    ("Job", ("Pods Statuses",)),
    ("DaemonSet", ("Desired Number of Nodes Scheduled",)),
    ("Deployment", ("StrategyType",)),
    ("StatefulSet", ("Update Strategy", "Pods Status")),
    ("ReplicaSet", ("Replicas", "Pods Status")),
    ("Node", ("Capacity", "Allocatable")),
    ("Node", ("System Info",)),
    ("PersistentVolume", ("Reclaim Policy",)),
    ("PersistentVolumeClaim", ("Access Modes", "Used By")),
    ("PersistentVolumeClaim", ("Access Modes", "Volume")),
    ("StorageClass", ("Provisioner",)),
    ("Pod", ("Containers", "Node")),
    ("Pod", ("QoS Class",)),
    ("Service", ("TargetPort",)),
    ("Service", ("Session Affinity",)),
    ("Endpoints", ("Subsets",)),
    ("Ingress", ("Rules",)),
    ("IngressClass", ("Controller",)),
)


def read(text: str, kind_hint: str = "") -> ObjectView:
    """The view of one describe text. `kind_hint` (the kind the caller asked for) wins over guessing."""
    root = describe.parse(text)
    view = ObjectView(shape="describe")
    view.kind = root.value_of("Kind") or kind_hint or _guess_kind(root, text)
    view.name = root.value_of("Name")
    view.namespace = root.value_of("Namespace")
    view.api_version = root.value_of("API Version")
    status = root.child("Status")
    view.phase = status.value if status and not status.children else ""
    view.reason, view.message = root.value_of("Reason"), root.value_of("Message")
    _node_and_owner(root, view)
    view.conditions = [c for node in root.walk() if node.key == "Conditions" for c in _conditions(node)]
    view.containers = _containers(root)
    events = root.child("Events")
    view.events = _events(events) if events else []
    _facts(root, view)
    view.quotas = _quotas(text, view.name)
    reader = _BY_KIND.get(view.kind)
    if reader:
        reader(root, view)
    _pod_refs(root, view)
    return view


def _guess_kind(root: DNode, text: str) -> str:
    keys = {c.key for c in root.children}
    for kind, needed in _KIND_KEYS:
        if all(k in keys for k in needed):
            return kind
    if "updated" in root.value_of("Replicas"):  # `N desired | N updated | ...` is a Deployment's
        return "Deployment"
    rows = [r.split() for r in root.rows]
    if any(r[:3] == ["Resource", "Used", "Hard"] for r in rows):
        return "Namespace" if "Status" in keys else "ResourceQuota"
    if any(r[:4] == ["Type", "Resource", "Min", "Max"] for r in rows):
        return "LimitRange"
    if "Status" in keys and ("Resource Quotas" in text or "No resource quota" in text):
        return "Namespace"
    if any(r == ["Data"] for r in rows):
        return "Secret" if "Type" in keys else "ConfigMap"
    return ""


def _absent(value: str) -> bool:
    return value.strip().lower() in _NONE


def _node_and_owner(root: DNode, view: ObjectView) -> None:
    node = root.value_of("Node")
    if node and not _absent(node):
        view.node = node.split("/", 1)[0]
        view.ref("Node", view.node, "node")
    owner = root.value_of("Controlled By")
    if "/" in owner:
        kind, name = owner.split("/", 1)
        view.ref(kind, name, "owner")
        view.owner = view.refs[-1]
    metadata = root.child("Metadata")
    owners = metadata.child("Owner References") if metadata else None
    if owners and owners.value_of("Kind") and owners.value_of("Name"):
        version = owners.value_of("API Version")
        view.ref(owners.value_of("Kind"), owners.value_of("Name"), "owner", api_version=version)
        view.owner = view.owner or view.refs[-1]


def _conditions(node: DNode) -> list[Condition]:
    """A table (`Type  Status  Reason  Message`) or a custom resource's list (Type:, Status:, Reason:, Message:)."""
    if node.rows:
        rows = describe.table(node.rows, "Type")
        return [
            Condition(r.get("Type"), r.get("Status"), r.get("Reason"), r.get("Message"), r.line)
            for r in rows
            if r.get("Type")
        ]
    out: list[Condition] = []
    current: dict[str, DNode] = {}
    for child in [*node.children, None]:
        if child is None or child.key in current:
            if "Type" in current:
                quote = current.get("Message") or current.get("Reason") or current["Type"]
                out.append(
                    Condition(
                        current["Type"].value,
                        current["Status"].value if "Status" in current else "",
                        current["Reason"].value if "Reason" in current else "",
                        current["Message"].value if "Message" in current else "",
                        quote.line,
                    )
                )
            current = {}
        if child is not None:
            current[child.key] = child
    return out


def _int(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.lstrip("-").isdigit() and len(value) < 19 else None


def _containers(root: DNode) -> list[ContainerView]:
    out: list[ContainerView] = []
    for section in root.walk():
        if section.key not in ("Containers", "Init Containers"):
            continue
        out += [_container(c, section.key.startswith("Init")) for c in section.children]
    return out


def _container(node: DNode, init: bool) -> ContainerView:
    c = ContainerView(node.key, init, image=node.value_of("Image"))
    quotes: dict[str, str] = {}
    image = node.child("Image")
    if image:
        quotes["image"] = image.line
    state, last = node.child("State"), node.child("Last State")
    if state:
        c.state, c.reason, c.message = state.value, state.value_of("Reason"), state.value_of("Message")
        c.exit_code = _int(state.value_of("Exit Code"))
        quotes["state"] = state.line
        _quote_children(state, quotes, "")
    if last:
        c.last_state, c.last_reason, c.last_message = last.value, last.value_of("Reason"), last.value_of("Message")
        c.last_exit_code = _int(last.value_of("Exit Code"))
        _quote_children(last, quotes, "last_")
    ready = node.value_of("Ready")
    c.ready = {"True": True, "False": False}.get(ready)
    restarts = node.child("Restart Count")
    if restarts:
        c.restart_count = _int(restarts.value)
        quotes["restart_count"] = restarts.line
    for section, target in (("Limits", c.limits), ("Requests", c.requests)):
        block = node.child(section)
        for q in block.children if block else []:
            target[q.key] = q.value
            quotes[f"{section.lower()}.{q.key}"] = q.line
    for key in ("Command", "Args"):
        block = node.child(key)
        if block:
            c.command += ([block.value] if block.value else []) + block.lines
    c.quotes = quotes
    return c


def _quote_children(state: DNode, quotes: dict[str, str], prefix: str) -> None:
    for key, name in (("Reason", "reason"), ("Exit Code", "exit_code"), ("Message", "message")):
        child = state.child(key)
        if child:
            quotes[prefix + name] = child.line


def _events(node: DNode) -> list[ObjectEvent]:
    rows = [r for r in node.rows if r.strip() and not describe.is_rule(r)]
    if not rows:
        return []
    if rows[0].split()[:1] != ["Type"]:
        return [
            ObjectEvent(
                r.get("Type"), r.get("Reason"), r.get("Message"), _int(r.get("Count")), r.get("LastSeen"), quote=r.line
            )
            for r in describe.table(node.rows, rows[0].split()[0])
            if r.get("Type") in ("Normal", "Warning")
        ]
    out: list[ObjectEvent] = []
    for raw in rows[1:]:
        cells = describe.cells(raw, 5)
        if len(cells) == 4 and " " in cells[3]:  # a hand-aligned row: one blank between From and Message
            cells[3:] = cells[3].split(" ", 1)
        if len(cells) < 5 or cells[0] not in ("Normal", "Warning"):
            continue
        repeats = _REPEATS.search(cells[2])
        count = int(repeats.group(1)) if repeats else 1
        out.append(ObjectEvent(cells[0], cells[1], cells[4], count, cells[2], quote=raw.strip()))
    return out


def _fact(view: ObjectView, name: str, node: DNode | None, value: str | None = None) -> None:
    if node is None:
        return
    value = node.value if value is None else value
    if not _absent(value):
        view.facts[name] = Fact(value, node.line)


_SIMPLE_FACTS = {
    "Selector": "selector", "Min replicas": "min_replicas", "Max replicas": "max_replicas",
    "Backoff Limit": "backoff_limit", "Active Deadline Seconds": "active_deadline_seconds",
    "Completions": "completions", "Parallelism": "parallelism", "Schedule": "schedule", "Suspend": "suspend",
    "Last Schedule Time": "last_schedule_time", "Last Successful Time": "last_successful_time",
    "StorageClass": "storage_class", "Volume": "volume", "Capacity": "capacity", "Claim": "claim",
    "Endpoints": "endpoints", "Unschedulable": "unschedulable", "Type": "type", "Service Account": "service_account",
    "Active Jobs": "active_jobs", "Concurrency Policy": "concurrency_policy", "Used By": "used_by",
    "Start Time": "start_time", "Duration": "duration",
    "Desired Number of Nodes Scheduled": "replicas_desired",
    "Current Number of Nodes Scheduled": "replicas_current",
    "Number of Nodes Scheduled with Available Pods": "replicas_available",
    "Number of Nodes Scheduled with Up-to-date Pods": "replicas_updated",
    "Number of Nodes Misscheduled": "replicas_misscheduled",
}  # fmt: skip


def _facts(root: DNode, view: ObjectView) -> None:
    for key, name in _SIMPLE_FACTS.items():
        node = root.child(key)
        if node is not None and (node.value or not node.children):
            _fact(view, name, node)
    endpoints = root.child("Endpoints")
    if endpoints is not None and not endpoints.children:  # `<none>` is the signal here, not an absent value
        view.facts["endpoints"] = Fact(endpoints.value or "<none>", endpoints.line)
    for key in ("Replicas", "Pods Status", "Pods Statuses"):
        node = root.child(key)
        prefix = "replicas_" if key == "Replicas" else "pods_"
        for number, word in _COUNT.findall(node.value if node else ""):
            _fact(view, prefix + word.lower(), node, number)
    for child in root.children:
        # `Deployment pods:  10 current / 10 desired` (the HPA's view of its target)
        if child.key.endswith(" pods") and "current" in child.value:
            for number, word in _COUNT.findall(child.value):
                _fact(view, f"{word.lower()}_replicas", child, number)


def _quotas(text: str, name: str) -> list[QuotaItem]:
    """`Resource  Used  Hard` tables, wherever they are (a ResourceQuota, or a Namespace's quotas section)."""
    out: list[QuotaItem] = []
    quota = name
    in_table = False
    for raw in text.splitlines():
        s = raw.strip()
        if s.startswith("Name:"):
            quota, in_table = s.split(":", 1)[1].strip(), False
            continue
        words = s.split()
        if words[:3] == ["Resource", "Used", "Hard"]:
            in_table = True
            continue
        if not in_table or describe.is_rule(s):
            continue
        cells = describe.cells(s, 3)
        if len(cells) != 3 or not s:
            in_table = False
            continue
        out.append(QuotaItem(quota, cells[0], cells[1], cells[2], s))
    return out


def _hpa(root: DNode, view: ObjectView) -> None:
    ref = root.value_of("Reference")
    if "/" in ref:
        kind, name = ref.split("/", 1)
        view.ref(kind, name, "scale target")
    metrics = root.child("Metrics")
    for line in metrics.lines if metrics else []:
        cut = line.rfind(":  ")
        cut = cut if cut >= 0 else line.rfind(": ")
        if cut < 0 or " / " not in line[cut:]:
            continue
        current, _, target = line[cut + 1 :].strip().partition(" / ")
        view.metrics.append(Metric(line[:cut].strip(), current.split(" ", 1)[0], target.strip(), line))


def _workload(root: DNode, view: ObjectView) -> None:
    selector = view.fact("selector")
    if selector:
        view.ref("Pod", "", "selected pods", selector=selector)
    for key in ("NewReplicaSet", "OldReplicaSets"):
        for part in root.value_of(key).split(","):
            name = part.strip().split(" ", 1)[0]
            if name and not _absent(name):
                view.ref("ReplicaSet", name, "replica set")
    claims = root.child("Volume Claims")
    for c in claims.children if claims else []:
        if c.key == "StorageClass" and not _absent(c.value):
            view.ref("StorageClass", c.value, "storage class of its volume claims")


def _job(root: DNode, view: ObjectView) -> None:
    _workload(root, view)
    for e in view.events:
        m = re.match(r"Created pod: (\S+)", e.message)
        if m:
            view.ref("Pod", m.group(1), "pod of the job")


def _cronjob(root: DNode, view: ObjectView) -> None:
    for part in view.fact("active_jobs").split(","):
        if part.strip():
            view.ref("Job", part.strip(), "active job")
    for e in view.events:
        m = re.match(r"(?:Created job|Saw completed job:) ([a-z0-9][-a-z0-9.]*)", e.message)
        if m:
            view.ref("Job", m.group(1), "job it ran")


def _node(root: DNode, view: ObjectView) -> None:
    for section, name in (("Allocatable", "allocatable_pods"), ("Capacity", "capacity_pods")):
        block = root.child(section)
        pods = block.child("pods") if block else None
        _fact(view, name, pods)
    running = root.child("Non-terminated Pods")
    m = re.search(r"(?<!\d)(\d+) in total", running.value) if running else None
    if m:
        _fact(view, "non_terminated_pods", running, m.group(1))
    allocated = root.child("Allocated resources")
    for row in describe.table(allocated.rows, "Resource") if allocated else []:
        for column in ("Requests", "Limits"):
            pct = re.search(r"\((\d+)%\)", row.get(column))
            if pct:
                view.facts[f"{column.lower()}_percent.{row.get('Resource')}"] = Fact(pct.group(1), row.line)


def _pvc(root: DNode, view: ObjectView) -> None:
    if view.fact("storage_class"):
        view.ref("StorageClass", view.fact("storage_class"), "storage class")
    if view.fact("volume"):
        view.ref("PersistentVolume", view.fact("volume"), "bound volume")
    for part in view.fact("used_by").split(","):
        if part.strip():
            view.ref("Pod", part.strip(), "pod using it")


def _pv(root: DNode, view: ObjectView) -> None:
    claim = view.fact("claim")
    if "/" in claim:
        ns, name = claim.split("/", 1)
        view.ref("PersistentVolumeClaim", name, "claim", namespace=ns)
    if view.fact("storage_class"):
        view.ref("StorageClass", view.fact("storage_class"), "storage class")


def _service(root: DNode, view: ObjectView) -> None:
    if view.fact("selector"):
        view.ref("Pod", "", "selected pods", selector=view.fact("selector"))
    if view.name:
        view.ref("Endpoints", view.name, "endpoints")


def _endpoints(root: DNode, view: ObjectView) -> None:
    subsets = root.child("Subsets")
    for key, name in (("Addresses", "ready_addresses"), ("NotReadyAddresses", "not_ready_addresses")):
        _fact(view, name, subsets.child(key) if subsets else None)


def _ingress(root: DNode, view: ObjectView) -> None:
    ingress_class = root.value_of("Ingress Class")
    if ingress_class and not _absent(ingress_class):
        view.ref("IngressClass", ingress_class, "ingress class")
    tls = root.child("TLS")
    for line in tls.lines if tls else []:
        secret = line.split(" terminates ", 1)[0].strip()
        if " terminates " in line and secret:
            view.ref("Secret", secret, "TLS secret")
    default = root.child("Default backend")
    if default and not _absent(default.value) and default.value != "<default>":
        _backend(view, default.value, "", "", default.line)
    rules = root.child("Rules")
    host = ""
    for raw in rules.rows if rules else []:
        s = raw.strip()
        if not s or describe.is_rule(s) or s.split()[:1] == ["Host"]:
            continue
        cells = describe.cells(s, 3)
        if len(cells) == 3 or (len(cells) == 1 and not cells[0].startswith("/")):
            host, cells = cells[0], cells[1:]
        if len(cells) == 2:
            _backend(view, cells[-1], host, cells[0], s)


def _backend(view: ObjectView, cell: str, host: str, path: str, line: str) -> None:
    target, _, endpoints = cell.partition(" (")
    service, _, port = target.partition(":")
    if not service or service.startswith("<"):
        return
    view.backends.append(Backend(service, port, host, path, endpoints.rstrip(")"), line))
    view.ref("Service", service, "backend service")


def _namespace(root: DNode, view: ObjectView) -> None:
    note_remaining(view)


# A name starts where its run of name characters starts (from inside a run, each start rescanned the rest).
_REMAINING = re.compile(r"(?<![-a-z0-9.])([a-z0-9][-a-z0-9.]*) has (\d+) resource instances")
_FINALIZER = re.compile(r"(?<![-a-z0-9./])([a-z0-9][-a-z0-9./]*) in (\d+) resource instances")


def note_remaining(view: ObjectView) -> None:
    """Resources and finalizers a Terminating namespace still holds, from its conditions' messages."""
    for c in view.conditions:
        if "remaining:" not in c.message:
            continue
        for m in _REMAINING.finditer(c.message):
            resource = m.group(1).rstrip(".")  # core resources print as `pods.` (an empty group)
            view.ref(
                PLURALS.get(resource, ""), "", "remaining in the namespace", resource=resource, namespace=view.name
            )
        for m in _FINALIZER.finditer(c.message):
            if m.group(1) not in view.finalizers_remaining:
                view.finalizers_remaining.append(m.group(1))


def _certificate(root: DNode, view: ObjectView) -> None:
    spec = root.child("Spec")
    if spec is None:
        return
    secret = spec.child("Secret Name")
    if secret:
        _fact(view, "secret_name", secret)
        view.ref("Secret", secret.value, "certificate secret")
    issuer = spec.child("Issuer Ref")
    if issuer and issuer.value_of("Name"):
        kind = issuer.value_of("Kind") or "Issuer"
        _fact(view, "issuer", issuer.child("Name"))
        view.ref(kind, issuer.value_of("Name"), "issuer")


def _pod_refs(root: DNode, view: ObjectView) -> None:
    """ConfigMaps, Secrets and claims a pod (or a pod template) uses, and its service account."""
    for node in root.walk():
        if node.key == "Volumes":
            for volume in node.children:
                _volume_refs(volume, view)
        elif node.key == "Environment":
            for env in node.children:
                for rx, kind in ((_SECRET_IN_ENV, "Secret"), (_CONFIGMAP_IN_ENV, "ConfigMap")):
                    m = rx.search(env.value)
                    if m:
                        view.ref(kind, m.group(1), f"env {env.key}")
        elif node.key == "Environment Variables from":
            for raw in node.rows:
                cells = describe.cells(raw, 3)
                if len(cells) >= 2 and cells[1] in ("ConfigMap", "Secret"):
                    view.ref(cells[1], cells[0], "envFrom")
    account = view.fact("service_account")
    if account and account != "default" and view.kind == "Pod":  # every namespace's own: nothing to follow
        view.ref("ServiceAccount", account, "service account")


def _volume_refs(volume: DNode, view: ObjectView) -> None:
    kind = volume.value_of("Type").split(" ", 1)[0]
    if kind == "PersistentVolumeClaim":
        view.ref("PersistentVolumeClaim", volume.value_of("ClaimName"), f"volume {volume.key}")
    elif kind == "Secret":
        view.ref("Secret", volume.value_of("SecretName"), f"volume {volume.key}")
    elif kind == "ConfigMap":
        view.ref("ConfigMap", volume.value_of("Name"), f"volume {volume.key}")


# LimitRange columns as describe prints them, by the spec field names the YAML reader uses for the facts.
_LIMIT_COLUMNS = {"Min": "min", "Max": "max", "Default Request": "defaultRequest", "Default Limit": "default",
                  "Max Limit/Request Ratio": "maxLimitRequestRatio"}  # fmt: skip


def _limit_range(root: DNode, view: ObjectView) -> None:
    for row in describe.table(root.rows, "Type"):
        kind, resource = row.get("Type"), row.get("Resource")
        for column, field in _LIMIT_COLUMNS.items():
            value = row.get(column)
            if value and value != "-":
                view.facts[f"limitrange.{kind}.{resource}.{field}"] = Fact(value, row.line)


_BY_KIND = {
    "HorizontalPodAutoscaler": _hpa,
    "Deployment": _workload,
    "StatefulSet": _workload,
    "DaemonSet": _workload,
    "ReplicaSet": _workload,
    "ReplicationController": _workload,
    "Job": _job,
    "CronJob": _cronjob,
    "Node": _node,
    "PersistentVolumeClaim": _pvc,
    "PersistentVolume": _pv,
    "Service": _service,
    "Endpoints": _endpoints,
    "Ingress": _ingress,
    "Namespace": _namespace,
    "Certificate": _certificate,
    "LimitRange": _limit_range,
}
