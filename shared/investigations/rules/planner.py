"""Which tool calls come next: the objects the alert names, then what their outputs point at.

The planner walks outward from the alert, breadth first: describe each object the alert names (its pod, workload,
HPA, claim, node, ...), list its namespace's events, then follow what the outputs reference (an HPA's scale
target, a workload's pods, a pod's claim, an ingress's services, a claim's storage class), read the logs of the
containers that fail, and chase what the logs name (a host that refuses connections, names that do not resolve).
Tools are chosen by what they accept (`toolshape`), never by name.
"""

from __future__ import annotations

import re
from typing import Any

from shared.investigations.rules import parse
from shared.investigations.rules.objects import ObjRef, alert_objects, kind_of
from shared.investigations.rules.rbac import denials
from shared.investigations.rules.references import references
from shared.investigations.rules.seen import Seen
from shared.investigations.rules.state import CallRecord, InvestigationState, ToolCall, call_key
from shared.investigations.rules.toolshape import Role, Toolbox

_HEARTBEAT_NAMES = {"watchdog", "deadmansswitch", "deadmanssnitch", "heartbeat", "infoinhibitor"}
_FAILING_STATUS = re.compile(
    r"(?i)error|crash|backoff|pending|failed|init:|oomkilled|unknown|terminating|evicted|containercreating|"
    r"createcontainer|notready|0/\d"
)
_DNS_ERROR = re.compile(
    r"(?i)NameResolutionError|Failed to resolve|Temporary failure in name resolution|NXDOMAIN|no such host|"
    r"could not resolve host|Name or service not known|getaddrinfo|server misbehaving"
)
# The name starts where the dotted name starts (`\b` also after each `-` or `.` inside it, and each such start
# rescanned the rest: quadratic).
_HOST_PORT = re.compile(r"(?<![-.\w/@])([a-z][-a-z0-9]*(?:\.[-a-z0-9]+)*):(\d{2,5})\b")
_TIMEOUTS = re.compile(r"(?i)connection time ?out|connect(?:ion)? timed out|i/o timeout|ETIMEDOUT")
_CONNECT = re.compile(r"(?i)connect|connection|refused|timed? ?out|unreachable|no route")
# Kinds whose description is worth a call when an output points at them (Secrets are never read).
_FOLLOW = frozenset(
    "Pod Deployment StatefulSet DaemonSet ReplicaSet Job CronJob HorizontalPodAutoscaler Service Ingress "
    "PersistentVolumeClaim PersistentVolume StorageClass Node ConfigMap Certificate Namespace IngressClass "
    "ResourceQuota".split()
)
_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Service"})
_MAX_DEPTH = 3
# `namespaces "x" not found`, `configmap "x" not found`, `services "x" not found` (API and kubelet wording).
NOT_FOUND = re.compile(r"\b([a-z][a-z.]{1,60}) \\?\"([a-z0-9][-a-z0-9.]{0,252})\\?\" not found")
_MAX_PODS = 3


def is_heartbeat(alert: dict[str, Any]) -> bool:
    """An always-firing alert (Watchdog / dead man's switch) that certifies the alerting pipeline."""
    name = str((alert.get("labels") or {}).get("alertname") or alert.get("title") or "").lower()
    text = " ".join(str(v) for v in (alert.get("annotations") or {}).values()) + str(alert.get("description") or "")
    return name in _HEARTBEAT_NAMES or bool(re.search(r"(?i)always (be )?firing", text))


def first_calls(state: InvestigationState) -> list[ToolCall]:
    """The calls of the first iteration, from the alert's labels and runbook alone."""
    return next_calls(state)


def next_calls(state: InvestigationState) -> list[ToolCall]:
    """The calls of the next iteration (empty: stop). Never repeats a call, stays within the budget."""
    budget = state.budget
    left = min(budget.max_calls - len(state.calls), budget.max_calls_per_iteration)
    if left <= 0 or state.iterations_done() >= budget.max_iterations or not state.tools:
        return []
    if is_heartbeat(state.alert):
        return []
    done = {call_key(c.tool, c.args) for c in state.calls}
    chosen: list[ToolCall] = []
    for call in Walk(state).explore():
        if call.key() not in done and _valid(call, state):
            done.add(call.key())
            chosen.append(call)
            if len(chosen) >= left:
                break
    return chosen


def _valid(call: ToolCall, state: InvestigationState) -> bool:
    """The arguments satisfy the tool's inputSchema: required keys present, no unknown keys, simple types."""
    spec = next((t for t in state.tools if t.name == call.tool), None)
    if spec is None:
        return False
    schema = spec.input_schema if isinstance(spec.input_schema, dict) else {}
    raw = schema.get("properties")
    props: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required = schema.get("required")
    if isinstance(required, list) and any(k not in call.args for k in required):
        return False
    types = {"string": str, "boolean": bool, "integer": int, "object": dict}
    for key, value in call.args.items():
        if props and key not in props:
            return False
        prop = props.get(key)
        want = types.get(str(prop.get("type", ""))) if isinstance(prop, dict) else None
        if want is not None and not isinstance(value, want):
            return False
    return True


class Walk:
    """The investigation so far, as a graph: objects described, what they point at, pods found, logs read."""

    def __init__(self, state: InvestigationState) -> None:
        self.state = state
        self.box = Toolbox(state.tools)
        self.target = alert_objects(state.alert)
        self.seen = [Seen(c, self.box) for c in state.calls]
        self.described: dict[ObjRef, CallRecord] = {}
        self.failed: set[ObjRef] = set()
        # Which object led to which (child -> parent), filled by `follow`: the report's chain of cause.
        self.parents: dict[ObjRef, ObjRef] = {}
        # Objects found on the way that count as the alert's own (the Ingress that serves a probed host).
        self.extra_seeds: list[ObjRef] = []
        self._candidates: list[ToolCall] | None = None
        # Pods the last object's listings showed (described by pods_from_rows), to walk on from.
        self.found_pods: list[ObjRef] = []
        for s in self.seen:
            o = s.obj()
            if o is not None:
                (self.failed.add(o) if s.rec.is_error else self.described.setdefault(o, s.rec))

    # ---- the order of the walk ---------------------------------------------------------------------------

    def explore(self) -> list[ToolCall]:
        """The walk, once: the candidate calls, and on the way the chain of objects (`parents`)."""
        if self._candidates is None:
            self._candidates = self.candidates()
        return self._candidates

    def candidates(self) -> list[ToolCall]:
        """Every call worth making now, most useful first; the caller drops those made or not on offer."""
        calls: list[ToolCall] = []
        seeds = [o for o in self.target.objects if o.kind != "Namespace"]
        for obj in seeds:
            calls += self.look_at(obj, "the alerted " + obj.kind)
            if obj.kind == "Pod":
                calls += self.pod_logs(obj, self.target.container, first=True)
        for ns in self._namespaces():
            calls += self._call(Role.EVENTS, f"recent events in {ns}", namespace=ns)
        if not seeds:
            ns_obj = next((o for o in self.target.objects if o.kind == "Namespace"), None)
            if ns_obj is not None:
                calls += self.namespace_pods(ns_obj.name)
                if _about_namespace(self.state.alert):
                    calls += self.look_at(ns_obj, "the alerted namespace")
        calls += self.hosts()
        calls += self.instance_node()
        if _throttling(self.state.alert):
            for obj in seeds:
                if obj.kind == "Pod":
                    calls += self._call(Role.POD_TOP, "CPU use", name=obj.name, namespace=obj.namespace)
        namespaces = [o for o in self.target.objects if o.kind == "Namespace" and _about_namespace(self.state.alert)]
        calls += self.follow(seeds + namespaces + self.extra_seeds)
        found_in_logs = len(self.extra_seeds)
        calls += self.from_logs()
        calls += self.follow(self.extra_seeds[found_in_logs:])
        if not self.target.namespace and not seeds:
            calls += self._discover_namespace()
        calls += self.missing_names()
        calls += self._telemetry()
        calls += self._runbook_lists()
        return calls

    def follow(self, seeds: list[ObjRef]) -> list[ToolCall]:
        """Breadth first from the alert's objects: what each described object points at (and the pods its
        listings show), up to a depth."""
        calls: list[ToolCall] = []
        frontier, visited = list(seeds), set(seeds)
        for _ in range(_MAX_DEPTH):
            nxt: list[ObjRef] = []
            for obj in frontier:
                rec = self.described.get(obj)
                if rec is None:
                    continue
                self.found_pods = []
                calls += self.after_describe(obj, rec)
                children = [*self.worth_following(obj, rec), *self.found_pods]
                for child in children:
                    if child in visited:
                        continue
                    visited.add(child)
                    self.parents.setdefault(child, obj)
                    if child not in self.found_pods:
                        calls += self.look_at(child, f"{child.kind} referenced by {obj.kind} {obj.name}")
                    nxt.append(child)
            frontier = nxt
        return calls

    def chain_to(self, name: str) -> list[ObjRef]:
        """The objects from the alert's to the one named `name`, in the order they were followed."""
        self.explore()
        end = next((o for o in [*self.parents, *self.described] if o.name == name), None)
        path: list[ObjRef] = []
        while end is not None and end not in path:
            path.append(end)
            end = self.parents.get(end)
        return path[::-1]

    def worth_following(self, obj: ObjRef, rec: CallRecord) -> list[ObjRef]:
        """What `obj` points at that could hold the cause. A healthy pod's node or a config map that loads are
        not worth a call; a pending pod's claim, a failing workload's newest ReplicaSet, an HPA's target are."""
        refs = references(rec.output, obj)
        unhealthy = _unhealthy(rec.output)
        out: list[ObjRef] = []
        for r in refs.objects:
            if r.name == "*" or r.kind not in _FOLLOW:
                continue
            if (
                r.kind == "Node"
                and obj.kind == "Pod"
                and not re.search(
                    r"(?i)NodeNotReady|NodeLost|Evicted|node\(s\)|Unknown|Terminating|NodeAffinity|taint", rec.output
                )
            ):
                continue
            if r.kind in ("ConfigMap", "ServiceAccount") and not (
                re.search(r"(?i)not found|FailedMount|CreateContainerConfigError|forbidden", rec.output)
                or (r.kind == "ConfigMap" and self._cannot_reach(obj))
            ):
                continue  # a config map that loads matters only when the pod cannot reach what it configures
            if r.kind == "ReplicaSet" and obj.kind == "Pod":
                continue  # the pod is the ReplicaSet's; its Deployment (via the RS) adds little over the pod
            if r.kind == "ReplicaSet" and not unhealthy:
                continue
            out.append(r)
        return out

    def _cannot_reach(self, pod: ObjRef) -> bool:
        """The pod's logs show a name that does not resolve or a connection that fails."""
        return any(
            s.role is Role.POD_LOG and s.name == pod.name and not s.rec.is_error
            and (_DNS_ERROR.search(s.rec.output[-100_000:]) or _TIMEOUTS.search(s.rec.output[-100_000:]))
            for s in self.seen
        )  # fmt: skip

    def after_describe(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """Calls an object's own state asks for: a workload's pods, a pod's failing containers' logs."""
        calls: list[ToolCall] = []
        if obj.kind == "Pod":
            calls += self.failing_container_logs(obj, rec)
        elif obj.kind in _WORKLOADS or obj.kind == "CronJob":
            refs = references(rec.output, obj)
            calls += self.pods_of(obj, refs.selector)
        elif obj.kind == "Node" and _unhealthy(rec.output):
            calls += self._call(Role.LIST, f"pods on node {obj.name}", api_version="v1", kind="Pod",
                                fields=f"spec.nodeName={obj.name}")  # fmt: skip
            for ns in _node_pod_namespaces(rec.output)[:2]:
                calls += self._call(Role.EVENTS, f"events where node {obj.name}'s pods run", namespace=ns)
                calls += self._pod_list_call(ns, None, f"pods of {ns} on node {obj.name}")
                listing = self._pod_listing(ns, None)
                if listing is not None:
                    rows = parse.table(listing.output)
                    calls += self.pods_from_rows(rows, ns, f"node {obj.name}", limit=2, failing_only=True)
        elif obj.kind == "Namespace":
            for r in references(rec.output, obj).objects:
                if r.name == "*":
                    calls += self._call(
                        Role.LIST, f"{r.kind}s left in namespace {obj.name}", api_version=r.api_version,
                        kind=r.kind, namespace=obj.name,
                    )  # fmt: skip
        return calls

    # ---- pods --------------------------------------------------------------------------------------------

    def pods_of(self, owner: ObjRef, selector: str | None) -> list[ToolCall]:
        """List the owner's pods (by its selector, else the namespace's pods filtered by name prefix), then
        describe and read the failing ones."""
        ns = owner.namespace
        if owner.kind == "Job":
            selector = f"job-name={owner.name}"  # every pod of a Job carries it; the controller-uid changes
        if not ns:
            return []
        calls: list[ToolCall] = []
        listing = self._pod_listing(ns, selector)
        if selector:
            calls += self._pod_list_call(ns, selector, f"pods of {owner.kind} {owner.name}")
        if (not selector) or (listing is not None and not parse.table(listing.output)):
            # No selector, or it matched nothing: the namespace's pods, narrowed by name below.
            calls += self._pod_list_call(ns, None, f"pods in {ns} (to find those of {owner.kind} {owner.name})")
            listing = self._pod_listing(ns, None) or listing
        if listing is None:
            return calls
        rows = [r for r in parse.table(listing.output) if r.get("NAME")]
        if owner.kind == "Service":
            # A selector that matches no pod is the finding itself; the namespace's listing (with labels) is
            # there to compare, not a list of pods to read.
            return calls
        if owner.kind != "Service":
            # A workload's pods are named after it; a listing that answered more than the selector asked for
            # (or the namespace's whole listing) is narrowed to them.
            rows = [r for r in rows if r.get("NAME").startswith(owner.name + "-") or r.get("NAME") == owner.name]
        return calls + self.pods_from_rows(rows, ns, f"{owner.kind} {owner.name}")

    def namespace_pods(self, ns: str) -> list[ToolCall]:
        """An alert that names only a namespace (and maybe an app): its pods, those of the app first."""
        calls = self._pod_list_call(ns, None, f"pods of {ns}")
        listing = self._pod_listing(ns, None)
        if listing is None:
            return calls
        rows = [r for r in parse.table(listing.output) if r.get("NAME")]
        apps = self.target.apps
        mine = [r for r in rows if any(r.get("NAME").startswith(a + "-") or r.get("NAME") == a for a in apps)]
        return calls + self.pods_from_rows(mine or rows, ns, f"namespace {ns}")

    def hosts(self) -> list[ToolCall]:
        """A probed URL's host: the Ingress that serves it (listed across namespaces), then that Ingress."""
        if not self.target.hosts:
            return []
        calls = self._call(Role.LIST, "which Ingress serves the probed host?", api_version="networking.k8s.io/v1",
                           kind="Ingress")  # fmt: skip
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "Ingress" and not s.rec.is_error:
                for row in parse.table(s.rec.output):
                    if any(h in row.get("HOSTS").split(",") for h in self.target.hosts):
                        ing = ObjRef("Ingress", row.get("NAME"), row.get("NAMESPACE") or s.namespace)
                        calls += self.look_at(ing, f"the Ingress serving {row.get('HOSTS')}")
                        self.extra_seeds.append(ing)
        return calls

    def instance_node(self) -> list[ToolCall]:
        """A node alert that names its node by address: list the nodes, describe the one with that address."""
        host = self.target.instance_host
        if not host:
            return []
        calls = self._call(Role.LIST, f"which node is {host}?", api_version="v1", kind="Node")
        dashed = host.replace(".", "-")
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "Node" and not s.rec.is_error:
                for row in parse.table(s.rec.output):
                    name = row.get("NAME")
                    if (name and host in (name, row.get("INTERNAL-IP"), row.get("EXTERNAL-IP"))) or dashed in name:
                        node = ObjRef("Node", name)
                        calls += self.look_at(node, f"the node at {host}")
                        if node not in self.extra_seeds:
                            self.extra_seeds.append(node)
        return calls

    def pods_from_rows(
        self, rows: list[parse.Row], ns: str, whose: str, limit: int = _MAX_PODS, failing_only: bool = False
    ) -> list[ToolCall]:
        """The failing pods of a listing (else the first ones): describe them and read their logs."""
        failing = [r for r in rows if _FAILING_STATUS.search(r.get("STATUS") + " " + r.get("READY"))]
        calls: list[ToolCall] = []
        for row in (failing if failing or failing_only else rows)[:limit]:
            pod = ObjRef("Pod", row.get("NAME"), ns)
            self.found_pods.append(pod)
            restarts = row.get("RESTARTS").split(" ")[0]
            status = row.get("STATUS")
            if status == "Pending" or (failing and pod not in self.described):
                calls += self.look_at(pod, f"pod {pod.name} of {whose} ({status})")
            if status not in ("Pending", "Evicted", "ContainerStatusUnknown", "Completed", "OutOfcpu", "OutOfmemory"):
                previous = restarts not in ("", "0") and status != "Error"
                calls += self._log_call(pod, None, previous, f"logs of pod {pod.name} ({status})")
        return calls

    def _pod_listing(self, ns: str, selector: str | None) -> CallRecord | None:
        for s in self.seen:
            if s.rec.is_error or s.namespace != ns:
                continue
            is_pods = s.role is Role.POD_LIST or (s.role is Role.LIST and s.kind == "Pod")
            if is_pods and (s.labels or None) == selector:
                return s.rec
        return None

    def _pod_list_call(self, ns: str, selector: str | None, why: str) -> list[ToolCall]:
        if self.box.has(Role.POD_LIST):
            return self._call(Role.POD_LIST, why, namespace=ns, labels=selector)
        return self._call(Role.LIST, why, api_version="v1", kind="Pod", namespace=ns, labels=selector)

    def pod_logs(self, pod: ObjRef, container: str | None, first: bool = False) -> list[ToolCall]:
        """The alerted pod's logs: the last crashed run first (the current run of a crash loop says little)."""
        return self._log_call(pod, container, True, "logs of the last crash of the alerted pod")

    def failing_container_logs(self, pod: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """Logs of each container that fails (waiting, terminated with an error, restarting), init ones too;
        a running pod that the alert names gets its current logs."""
        calls: list[ToolCall] = []
        containers = parse.containers(rec.output) or parse.yaml_containers(rec.output)
        for c in containers:
            reason = c.state_reason() or c.last_reason()
            restarts = c.value("Restart Count") not in ("", "0")
            bad = reason and reason not in ("Running", "Completed", "PodInitializing", "ContainerCreating")
            if bad or (c.init and reason and reason != "Completed") or restarts:
                calls += self._log_call(pod, c.name, restarts, f"logs of failing container {c.name}")
        never_started = parse.field_value(rec.output, "Status") == "Pending" and not any(
            c.state_reason() or c.last_reason() for c in containers
        )
        if (pod in self.target.objects or not calls) and not never_started:
            calls += self._log_call(pod, None, False, f"current logs of pod {pod.name}")
        return calls

    def _log_call(self, pod: ObjRef, container: str | None, previous: bool, why: str) -> list[ToolCall]:
        if not pod.namespace:
            return []
        if previous and self._no_previous(pod):
            previous = False
        return self._call(
            Role.POD_LOG, why, name=pod.name, namespace=pod.namespace, container=container,
            previous=True if previous else None,
        )  # fmt: skip

    def _no_previous(self, pod: ObjRef) -> bool:
        """A log call for the previous run already failed: there is no earlier run to read."""
        return any(
            s.role is Role.POD_LOG and s.rec.is_error and s.previous and s.name == pod.name
            and re.search(r"(?i)previous terminated container|not found", s.rec.output)
            for s in self.seen
        )  # fmt: skip

    # ---- logs point at other objects -----------------------------------------------------------------------

    def from_logs(self) -> list[ToolCall]:
        """What logs point at: cluster names that do not resolve and hosts that refuse or time out -> that
        Service; DNS failures -> the namespace's NetworkPolicies (and each policy)."""
        calls: list[ToolCall] = []
        for s in self.seen:
            ns = s.namespace or self.target.namespace
            if s.role is not Role.POD_LOG or s.rec.is_error or not ns:
                continue
            out = s.rec.output[-200_000:]
            pod = ObjRef("Pod", s.name, s.namespace)
            if _DNS_ERROR.search(out) or _TIMEOUTS.search(out):
                # Where does it get the name it cannot reach? Its spec (env, ConfigMaps) says.
                calls += self._lead(pod, pod, f"pod {pod.name} cannot reach a name: where is it configured?")
            for svc in _cluster_names(out, ns)[:2]:
                calls += self._lead(
                    svc, pod, f"the logs cannot resolve {svc.name}.{svc.namespace}: is there a Service?"
                )
            if _DNS_ERROR.search(out) or _TIMEOUTS.search(out):
                calls += self._call(
                    Role.LIST, "connections or DNS lookups fail: does a NetworkPolicy drop the traffic?",
                    api_version="networking.k8s.io/v1", kind="NetworkPolicy", namespace=ns,
                )  # fmt: skip
            calls += self.rbac(out)
            target = _unreachable_service(out, ns)
            if target is not None:
                svc, host = target
                calls += self._lead(svc, pod, f"does the service {host} the logs cannot reach exist?")
                calls += self._call(
                    Role.LIST, "services of the namespace", api_version="v1", kind="Service", namespace=svc.namespace
                )
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "NetworkPolicy" and not s.rec.is_error and s.namespace:
                for row in parse.table(s.rec.output)[:3]:
                    if row.get("NAME"):
                        calls += self.look_at(ObjRef("NetworkPolicy", row.get("NAME"), s.namespace), "read the policy")
        return calls

    def rbac(self, log: str) -> list[ToolCall]:
        """A service account the API refuses: the namespace's RoleBindings, then the bindings and Roles they name."""
        calls: list[ToolCall] = []
        for d in denials(log)[:1]:
            why = f"which Role does {d.account} have? it may not {d.verb} {d.resource}"
            calls += self._call(Role.LIST, why, api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding",
                                namespace=d.namespace)  # fmt: skip
            for s in self.seen:
                if s.role is not Role.LIST or s.kind != "RoleBinding" or s.rec.is_error:
                    continue
                for row in parse.table(s.rec.output)[:3]:
                    binding = ObjRef("RoleBinding", row.get("NAME"), d.namespace)
                    calls += self._lead(binding, ObjRef("ServiceAccount", d.account, d.namespace), why)
                    kind, _, name = row.get("ROLE").partition("/")
                    role = ObjRef(kind, name, d.namespace if kind == "Role" else None) if name else None
                    if role is not None:
                        calls += self._lead(role, binding, f"the verbs {binding.name} grants")
        return calls

    def _lead(self, obj: ObjRef, found_by: ObjRef, why: str) -> list[ToolCall]:
        """An object a log names: described, walked on from, and chained to the pod whose log named it."""
        if obj not in self.extra_seeds:
            self.extra_seeds.append(obj)
            self.parents.setdefault(obj, found_by)
        return self.look_at(obj, why)

    def missing_names(self) -> list[ToolCall]:
        """An output says `<kind> "x" not found` (a sync error, a mount, an env reference): list that kind where
        it should be, so a name that is close to an existing one shows up as a typo."""
        calls: list[ToolCall] = []
        for s in self.seen:
            if s.rec.is_error:
                continue
            for plural, name in NOT_FOUND.findall(s.rec.output[:200_000])[:3]:
                k = kind_of(plural.split(".")[0])
                if k is None or k.name in ("Pod", "ReplicaSet"):
                    continue
                if k.name == "Namespace":
                    why = f"namespace {name} is not found: which ones exist?"
                    calls += self._call(Role.NAMESPACES, why) or self._call(
                        Role.LIST, why, api_version="v1", kind="Namespace"
                    )
                elif s.namespace or self.target.namespace:
                    ns = s.namespace or self.target.namespace
                    calls += self._call(Role.LIST, f"{k.name} {name} is not found: which ones exist in {ns}?",
                                        api_version=k.api_version, kind=k.name, namespace=ns)  # fmt: skip
        return calls

    # ---- building calls ------------------------------------------------------------------------------------

    def look_at(self, obj: ObjRef, why: str) -> list[ToolCall]:
        """Describe one object with the generic describe tool, or a pod with the pod tool."""
        retry = obj in self.failed and obj in self.target.objects  # the alert's own pod: its tool may know it
        if obj.kind == "Pod" and (not self.box.has(Role.DESCRIBE) or retry):
            calls = self._call(Role.POD_GET, f"get {why}", name=obj.name, namespace=obj.namespace)
            if calls or obj in self.failed:
                return calls
        if obj.kind == "Secret":
            return []
        return self._call(
            Role.DESCRIBE, f"describe {why}", api_version=obj.api_version, kind=obj.kind, name=obj.name,
            namespace=obj.namespace,
        )  # fmt: skip

    def _call(self, role: Role, why: str, **values: Any) -> list[ToolCall]:
        call = self.box.call(role, why, **values)
        return [call] if call is not None else []

    def _namespaces(self) -> list[str]:
        seen: list[str] = []
        for o in self.target.objects:
            ns = o.name if o.kind == "Namespace" else o.namespace
            if ns and ns not in seen:
                seen.append(ns)
        return seen[:2]

    def _discover_namespace(self) -> list[ToolCall]:
        """No object in the labels: find the namespace the alert's words name, then look at its pods."""
        calls = self._call(Role.NAMESPACES, "the alert names no namespace")
        alert = self.state.alert
        text = " ".join([self.target_alertname(), str(alert.get("description") or "")])
        text += " " + " ".join(str(v) for v in (alert.get("annotations") or {}).values())
        alert_words = set(parse.words(text))
        for s in self.seen:
            if s.role is Role.NAMESPACES and not s.rec.is_error:
                for row in parse.table(s.rec.output):
                    ns = row.get("NAME")
                    if ns and ns.lower() in alert_words and ns not in ("default", "kube-system"):
                        calls += self._pod_list_call(ns, None, f"pods of {ns}")
                        listing = self._pod_listing(ns, None)
                        if listing is not None:
                            calls += self.pods_from_rows(parse.table(listing.output), ns, f"namespace {ns}", 4)
        return calls

    def target_alertname(self) -> str:
        return str((self.state.alert.get("labels") or {}).get("alertname") or self.state.alert.get("title") or "")

    def _telemetry(self) -> list[ToolCall]:
        """PromQL the runbook asks to graph; recent traces and the slowest of them, when such tools exist."""
        calls = [
            c
            for q in promql(self.state.runbook or "")[:2]
            for c in self._call(Role.METRICS_QUERY, "the runbook asks for this query", query=q)
        ]
        if self.box.has(Role.TRACES):
            calls += self._call(Role.TRACES, "recent traces: where does the time go?")
            for s in self.seen:
                if self.box.role_of(s.rec.tool) is Role.TRACES and not s.rec.is_error:
                    traces = sorted(((int(ms), t) for t, ms in _TRACE.findall(s.rec.output)), reverse=True)[:2]
                    for ms, tid in traces:
                        calls += self._call(Role.TRACE, f"slow trace ({ms} ms)", trace_id=tid)
        return calls

    def _runbook_lists(self) -> list[ToolCall]:
        """Kinds the runbook mentions, listed in the alert's namespace after the first iteration."""
        ns = self.target.namespace
        if not self.state.runbook or not ns or not self.state.calls:
            return []
        calls: list[ToolCall] = []
        for pattern, api, kind in _RUNBOOK_KINDS:
            if re.search(pattern, self.state.runbook[:100_000]):
                calls += self._call(
                    Role.LIST, f"the runbook mentions {kind}s", api_version=api, kind=kind, namespace=ns
                )
        return calls


_SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "monitoring")


def _node_pod_namespaces(describe: str) -> list[str]:
    """The namespaces of the pods a node description lists (`Non-terminated Pods:` table), system ones last."""
    at = describe.find("Non-terminated Pods:")
    if at < 0:
        return []
    block = describe[at:].split("\n", 1)[-1].split("Allocated resources:", 1)[0]
    words = [line.split() for line in block.splitlines()[:500] if line.startswith("  ")]
    found = list(dict.fromkeys(w[0] for w in words if len(w) >= 2 and w[0] not in ("Namespace", "---------")))
    return [n for n in found if n not in _SYSTEM_NAMESPACES]


# `name.svc.cluster.local` names in lines that failed to resolve: `[pod.]service.namespace.svc[.cluster.local]`.
_CLUSTER_NAME = re.compile(r"(?<![-\w.])(?:[a-z0-9][-a-z0-9]*\.)?([a-z0-9][-a-z0-9]*)\.([a-z0-9][-a-z0-9]*)\.svc\b")
_UNRESOLVED = re.compile(
    r"(?i)UnknownHost|no such host|NXDOMAIN|could not resolve|not resolve|Name or service not known|"
    r"Temporary failure in name resolution|getaddrinfo"
)


def _cluster_names(log: str, ns: str) -> list[ObjRef]:
    """Services whose cluster DNS names the log could not resolve."""
    found: list[ObjRef] = []
    for line in log.splitlines()[-500:]:
        if not _UNRESOLVED.search(line):
            continue
        for m in _CLUSTER_NAME.finditer(line[:1000]):
            svc = ObjRef("Service", m.group(1), m.group(2) or ns)
            if svc not in found:
                found.append(svc)
    return found


def _unreachable_service(log: str, ns: str) -> tuple[ObjRef, str] | None:
    """The Service behind the first `host:port` a log fails to connect to (refused, timed out, unreachable)."""
    for line in log.splitlines()[-300:]:
        if not _CONNECT.search(line):
            continue
        m = _HOST_PORT.search(line)
        if m and not re.fullmatch(r"[\d.]+", m.group(1)) and m.group(1) not in ("localhost", "http", "https"):
            host = m.group(1).split(".")
            # `svc.ns.svc...` names a Service; `pod.svc.ns.svc...` a pod behind its governing Service.
            at = 1 if host[3:4] == ["svc"] else 0
            svc_ns = host[at + 1] if host[at + 2 : at + 3] == ["svc"] else ns
            return ObjRef("Service", host[at], svc_ns), m.group(1)
    return None


def _about_namespace(alert: dict[str, Any]) -> bool:
    name = str((alert.get("labels") or {}).get("alertname") or alert.get("title") or "")
    return "namespace" in name.lower() or "terminat" in str(alert.get("description") or "").lower()


def _throttling(alert: dict[str, Any]) -> bool:
    name = str((alert.get("labels") or {}).get("alertname") or alert.get("title") or "")
    return "throttl" in name.lower()


_UNHEALTHY = re.compile(
    r"(?i)\b(Warning|Pending|Failed|FailedCreate|exceeded|CrashLoopBackOff|Error)\b|[1-9]\d* unavailable|"
    r"^\s+\w+\s+(False|Unknown)\b"
)


def _unhealthy(output: str) -> bool:
    return any(_UNHEALTHY.search(line) for line in output[:200_000].splitlines())


_TRACE = re.compile(r"traceID=([0-9a-f]+)\)? ?\(durationMs=(\d+)\)")

_RUNBOOK_KINDS = (
    (r"(?i)network ?polic", "networking.k8s.io/v1", "NetworkPolicy"),
    (r"(?i)\bHPA\b|HorizontalPodAutoscaler", "autoscaling/v2", "HorizontalPodAutoscaler"),
    (r"(?i)\bPVC\b|PersistentVolumeClaim", "v1", "PersistentVolumeClaim"),
    (r"(?i)\bingress\b", "networking.k8s.io/v1", "Ingress"),
)

_PROMQL_START = re.compile(r"\b(?:avg|sum|max|min|count|rate|irate|increase|histogram_quantile|topk)\b ?(?:by ?\()?")


def promql(text: str) -> list[str]:
    """PromQL expressions written in a text: an aggregation or rate call with balanced parentheses."""
    found: list[str] = []
    pos = 0
    while m := _PROMQL_START.search(text, pos):
        depth, i, end = 0, m.start(), None
        while i < len(text) and text[i] != "\n":
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0 and (i + 1 == len(text) or text[i + 1] != "("):
                    end = i + 1
                    break
            i += 1
        expr = text[m.start() : end] if end else ""
        if expr and "[" in expr and expr not in found:
            found.append(expr)
        pos = end or m.end()
    return found
