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
from shared.investigations.rules.alert_words import alert_words, matching_rows, subject_names
from shared.investigations.rules.daemonset_placement import (
    desired,
    misscheduled,
    node_pools,
    nodes_to_describe,
    uncovered_nodes,
)
from shared.investigations.rules.disruption_rules import cordoned
from shared.investigations.rules.log_leads import DNS_ERROR, TIMEOUTS, LogLeads
from shared.investigations.rules.memo import evaluation, per_evaluation, remembered
from shared.investigations.rules.node_disk import disk_pressure, filesystem_alert, node_workload_rows
from shared.investigations.rules.objects import ObjRef, owner_by_name
from shared.investigations.rules.pod_listing import PodListing
from shared.investigations.rules.quota_rules import consumers_kind, nearly_full
from shared.investigations.rules.references import references
from shared.investigations.rules.state import CallRecord, InvestigationState, ToolCall, call_key
from shared.investigations.rules.toolshape import Role

_HEARTBEAT_NAMES = {"watchdog", "deadmansswitch", "deadmanssnitch", "heartbeat", "infoinhibitor"}
# Kinds whose description is worth a call when an output points at them (Secrets are never read).
_FOLLOW = frozenset(
    "Pod Deployment StatefulSet DaemonSet ReplicaSet Job CronJob HorizontalPodAutoscaler Service Ingress "
    "PersistentVolumeClaim PersistentVolume StorageClass Node ConfigMap Certificate Namespace IngressClass "
    "ResourceQuota".split()
)
_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Service"})
_MAX_DEPTH = 3
_NAME_RE = re.compile(r"[a-z0-9][-a-z0-9]{0,62}")
# Alerts about reaching a service from outside it: probes, error ratios, unreachable targets.
_PROBED = re.compile(r"(?i)probe|blackbox|5xx|unreachable|endpoint.?down|http.?error")
# Scheduler reasons that the nodes themselves explain (their size, their zones and labels, their taints).
_NODES_MATTER = re.compile(r"Insufficient [\w./-]+|volume node affinity conflict|didn't match|untolerated taint")


def is_heartbeat(alert: dict[str, Any]) -> bool:
    """An always-firing alert (Watchdog / dead man's switch) that certifies the alerting pipeline."""
    name = str((alert.get("labels") or {}).get("alertname") or alert.get("title") or "").lower()
    text = " ".join(str(v) for v in (alert.get("annotations") or {}).values()) + str(alert.get("description") or "")
    return name in _HEARTBEAT_NAMES or bool(re.search(r"(?i)always (be )?firing", text))


@evaluation
def first_calls(state: InvestigationState) -> list[ToolCall]:
    """The calls of the first iteration, from the alert's labels and runbook alone."""
    return next_calls(state)


@evaluation
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
    for call in Walk.of(state).explore():
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


class Walk(PodListing, LogLeads):
    """The walk outward from the alert's objects: the calls worth making (`explore`) and, on the way, the chain of
    objects that led to each (`parents`). The graph it extends is `WalkGraph`'s; pod and log steps are inherited."""

    @classmethod
    def of(cls, state: InvestigationState) -> Walk:
        """The walk of a state, built once per evaluation (the planner, the rules and the report all ask)."""
        return per_evaluation(("walk", id(state), len(state.calls)), lambda: cls(state))

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
                calls += self.pod_logs(obj, self.target.container)
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
        if not seeds:
            calls += self.named_elsewhere()
        calls += self.follow(seeds + namespaces + self.extra_seeds)
        found_in_logs = len(self.extra_seeds)
        calls += self.from_logs()
        calls += self.follow(self.extra_seeds[found_in_logs:])
        if not self.target.namespace and not seeds:
            calls += self._discover_namespace()
            calls += self.cluster_pods()
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
            and (DNS_ERROR.search(s.rec.output[-100_000:]) or TIMEOUTS.search(s.rec.output[-100_000:]))
            for s in self.seen
        )  # fmt: skip

    def after_describe(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """Calls an object's own state asks for: a workload's pods, a pod's failing containers' logs, an unhealthy
        node's pods, a quota's consumers, what a terminating namespace still holds."""
        if obj.kind == "Pod":
            more = self.node_capacity() if _NODES_MATTER.search(rec.output[:200_000]) else []
            return self.failing_container_logs(obj, rec) + more
        if obj.kind == "Service" and obj.namespace and _PROBED.search(self.target_alertname()):
            # A probed Service: what may drop the traffic, and the namespace's other pods (its clients' logs).
            return (
                self.pods_of(obj, references(rec.output, obj).selector)
                + self._call(Role.LIST, "does a NetworkPolicy drop traffic to the probed Service?",
                             api_version="networking.k8s.io/v1", kind="NetworkPolicy", namespace=obj.namespace)
                + self.namespace_pods(obj.namespace)
            )  # fmt: skip
        if obj.kind == "DaemonSet" and misscheduled(rec.output):
            return self.pods_of(obj, references(rec.output, obj).selector) + self._daemonset_nodes(obj, rec)
        if obj.kind == "DaemonSet":
            return self.pods_of(obj, references(rec.output, obj).selector) + self._uncovered_nodes(obj, rec)
        if obj.kind in _WORKLOADS or obj.kind == "CronJob":
            return self.pods_of(obj, references(rec.output, obj).selector)
        if obj.kind == "Node" and cordoned(rec.output):
            # Cordoned, as a drain does first: which budgets refuse the evictions of its pods?
            budgets = self._call(Role.LIST, "a drain that does not finish: which PodDisruptionBudgets allow none?",
                                 api_version="policy/v1", kind="PodDisruptionBudget")  # fmt: skip
            return budgets + self._node_pods(obj, rec)
        if obj.kind == "Node" and (_unhealthy(rec.output) or filesystem_alert(self.state.alert) is not None):
            return self._node_pods(obj, rec)
        if obj.kind == "PersistentVolumeClaim" and obj.namespace and obj in self.target.objects:
            return self._claim_users(obj, rec)
        if obj.kind == "ResourceQuota" and obj.namespace:
            return self._quota_consumers(obj, rec)
        if obj.kind == "Namespace":
            return [
                c
                for r in references(rec.output, obj).objects
                if r.name == "*"
                for c in self._call(
                    Role.LIST, f"{r.kind}s left in namespace {obj.name}", api_version=r.api_version, kind=r.kind,
                    namespace=obj.name,
                )
            ]  # fmt: skip
        return []

    def _claim_users(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """The alerted claim's pod (its description's `Used By`, else a StatefulSet pod whose name ends the
        claim's: `data-db-0` is `db-0`'s), described and read: what fills the volume, and whether it fails."""
        ns = obj.namespace or ""
        used_by = parse.field_value(rec.output[:50_000], "Used By")
        if used_by and used_by != "<none>":
            pod = ObjRef("Pod", used_by.split(",")[0].strip(), ns)
            self.parents.setdefault(pod, obj)
            return self.look_at(pod, f"the pod using {obj.name}") + self._log_call(pod, None, False, "its logs")
        calls = self._pod_list_call(ns, None, f"which pod uses {obj.name}?")
        listing = self._pod_listing(ns, None)
        if listing is None:
            return calls
        for row in parse.table(listing.output[:400_000]):
            name = row.get("NAME")
            if name and obj.name.endswith("-" + name):
                pod = ObjRef("Pod", name, ns)
                self.parents.setdefault(pod, obj)
                calls += self.look_at(pod, f"the pod using {obj.name}") + self._log_call(pod, None, False, "its logs")
                break
        return calls

    def _uncovered_nodes(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """A DaemonSet on fewer nodes than the cluster has: the nodes, then those (one per pool) without its pod."""
        calls = self._call(Role.LIST, "which nodes are there, and which run its pods?", api_version="v1", kind="Node")
        nodes = next(
            (s.rec for s in self.seen if s.role is Role.LIST and s.kind == "Node" and not s.rec.is_error), None
        )
        listing = self._pod_listing(obj.namespace or "", references(rec.output, obj).selector)
        listing = listing or self._pod_listing(obj.namespace or "", None)
        if nodes is None or listing is None:
            return calls
        ready = sum(1 for r in parse.table(nodes.output[:400_000]) if r.get("STATUS").startswith("Ready"))
        wanted = desired(rec.output)
        if wanted is None or wanted >= ready:
            return calls
        for node in uncovered_nodes(nodes.output, listing.output, obj.name, node_pools(nodes.output)):
            calls += self.look_at(ObjRef("Node", node), f"a node without {obj.name}'s pod (its taints)")
        return calls

    def _daemonset_nodes(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """A DaemonSet with pods where they should not be: the nodes, then one node per pool its pods run on."""
        calls = self._call(Role.LIST, "which nodes are there, in which pools?", api_version="v1", kind="Node")
        pools: dict[str, str] = {}
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "Node" and not s.rec.is_error:
                pools.update(node_pools(s.rec.output))
        listing = self._pod_listing(obj.namespace or "", references(rec.output, obj).selector)
        listing = listing or self._pod_listing(obj.namespace or "", None)
        if listing is None:
            return calls
        mine = "\n".join(
            [listing.output.splitlines()[0]]
            + [line for line in listing.output.splitlines()[1:] if line.startswith(obj.name + "-")]
        )
        for node in nodes_to_describe(mine, pools):
            calls += self.look_at(ObjRef("Node", node), f"a node that runs {obj.name}'s pods (its taints)")
        return calls

    def _node_pods(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """An unhealthy node's pods (by field selector) and, in their namespaces, the events and the failing ones."""
        on_node = f"spec.nodeName={obj.name}"
        calls = self._call(Role.POD_LIST_ALL, f"pods on node {obj.name}", fields=on_node) or self._call(
            Role.LIST, f"pods on node {obj.name}", api_version="v1", kind="Pod", fields=on_node
        )
        if filesystem_alert(self.state.alert) is not None or disk_pressure(rec.output):
            calls += self._node_workloads(obj)
        for ns in _node_pod_namespaces(rec.output)[:2]:
            calls += self._call(Role.EVENTS, f"events where node {obj.name}'s pods run", namespace=ns)
            calls += self._pod_list_call(ns, None, f"pods of {ns} on node {obj.name}")
            listing = self._pod_listing(ns, None)
            if listing is not None:
                rows = parse.table(listing.output)
                calls += self.pods_from_rows(rows, ns, f"node {obj.name}", limit=2, failing_only=True)
        return calls

    def _node_workloads(self, obj: ObjRef) -> list[ToolCall]:
        """A node's filesystem fills up: its workload pods, described (their hostPath volumes) and their logs;
        a pod that cannot be described is read through its owner (its name says which)."""
        calls: list[ToolCall] = []
        for s in self.seen:
            if s.role not in (Role.POD_LIST_ALL, Role.LIST) or s.kind != "Pod" or s.rec.is_error:
                continue
            if obj.name not in s.rec.output[:400_000]:
                continue
            for row in node_workload_rows(s.rec.output):
                pod = ObjRef("Pod", row.get("NAME"), row.get("NAMESPACE") or None)
                calls += self.look_at(pod, f"pod {pod.name} on node {obj.name}")
                calls += self._log_call(pod, None, False, f"does {pod.name} fail to write?")
                if pod in self.failed:
                    owner = owner_by_name(pod)
                    if owner is not None:
                        calls += self.look_at(owner, f"the owner of {pod.name} (its volumes)")
        return calls

    def _quota_consumers(self, obj: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """What uses a quota up: the kind that counts against each resource near its limit."""
        calls: list[ToolCall] = []
        for resource, *_ in nearly_full(rec.output[:200_000])[:2]:
            kind = consumers_kind(resource)
            if kind is not None:
                calls += self._call(Role.LIST, f"what uses {resource} of quota {obj.name}", api_version="v1",
                                    kind=kind, namespace=obj.namespace)  # fmt: skip
        return calls

    def node_capacity(self) -> list[ToolCall]:
        """A pod no node has room for: the nodes, then one of them (its Allocatable says what any pod can get)."""
        calls = self._call(Role.LIST, "which nodes are there, and how big?", api_version="v1", kind="Node")
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "Node" and not s.rec.is_error:
                ready = [r for r in parse.table(s.rec.output) if r.get("NAME") and r.get("STATUS").startswith("Ready")]
                if ready:
                    calls += self.look_at(ObjRef("Node", ready[0].get("NAME")), "a node's allocatable resources")
        return calls

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
        # The alerting stack's own namespace (`prometheus: monitoring/k8s`): where an alert about the stack's own
        # components (kube-state-metrics, Prometheus, Alertmanager, exporters) finds them.
        stack = str((alert.get("labels") or {}).get("prometheus") or "")
        if "/" in stack and _NAME_RE.fullmatch(stack.split("/", 1)[0]):
            calls += self.namespace_pods(stack.split("/", 1)[0])
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

    def named_elsewhere(self) -> list[ToolCall]:
        """An alert whose labels name what it measures (`consumergroup="fraud-scorer"`) but no object: the
        workload of that name, wherever it runs (the alert's namespace may be its exporter's)."""
        names = subject_names(self.state.alert)
        words = alert_words(self.state.alert)
        if not names and not words:
            return []
        what = names[0] if names else "what the alert is about"
        calls = [
            c
            for kind in ("Deployment", "DaemonSet", "StatefulSet")
            for c in self._call(Role.LIST, f"where does {what} run?", api_version="apps/v1", kind=kind)
        ] or self._call(Role.POD_LIST_ALL, f"where does {what} run?")
        for s in self.seen:
            if (
                s.rec.is_error
                or s.namespace
                or s.kind not in ("Deployment", "DaemonSet", "StatefulSet", "Pod")
                or s.role not in (Role.LIST, Role.POD_LIST_ALL)
            ):
                continue
            rows = [r for r in parse.table(s.rec.output[:400_000]) if r.get("NAMESPACE")]
            # By a label's name, else by the alert's words (`the flagd service`): the best-named one or two.
            named = [r for r in rows if any(r.get("NAME") == n or r.get("NAME").startswith(n + "-") for n in names)]
            for row in named or matching_rows(rows, words, limit=1):
                name, ns = row.get("NAME"), row.get("NAMESPACE")
                if ns:
                    obj = ObjRef(s.kind, name, ns)
                    calls += self.look_at(obj, f"the {s.kind} named like {what}")
                    if obj not in self.extra_seeds:
                        self.extra_seeds.append(obj)
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


@remembered
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
