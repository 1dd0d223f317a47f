"""The planner's pod steps: list a workload's (or a namespace's) pods, describe the failing ones and read their logs,
the previous run's when the container restarted."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.alert_words import alert_words, matching_rows
from shared.investigations.rules.arch_rules import EXEC_FORMAT, pod_node
from shared.investigations.rules.objects import ObjRef
from shared.investigations.rules.revisions import healthy_row, row_revision
from shared.investigations.rules.state import CallRecord, ToolCall
from shared.investigations.rules.toolshape import Role, Slot
from shared.investigations.rules.walk_graph import WalkGraph

_FAILING_STATUS = re.compile(
    r"(?i)error|crash|backoff|pending|failed|init:|oomkilled|unknown|terminating|evicted|containercreating|"
    r"createcontainer|notready|0/\d"
)
_MAX_PODS = 3


class PodListing(WalkGraph):
    """Which pods to describe and which logs to read, from a listing or a pod's own description."""

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
            # there to compare, not a list of pods to read. The pods it does select are read (a few).
            wanted = dict(p.split("=", 1) for p in (selector or "").split(",") if "=" in p)
            mine = [r for r in rows if wanted and parse.carries(r, wanted)]
            if not mine:
                return calls
            first = ObjRef("Pod", mine[0].get("NAME"), ns)
            return (
                calls
                + self.look_at(first, f"a pod behind Service {owner.name} (its ports)")
                + self.pods_from_rows(mine, ns, f"Service {owner.name}", limit=2)
            )
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
        # No app named: the pods whose names share the alert's words (a consumer group's consumer, a queue's worker).
        if not mine:
            named = matching_rows(rows, alert_words(self.state.alert))
            return calls + self.pods_from_rows(named + [r for r in rows if r not in named], ns, f"namespace {ns}")
        return calls + self.pods_from_rows(mine, ns, f"namespace {ns}")

    def cluster_pods(self) -> list[ToolCall]:
        """An alert that names no object and no namespace: every namespace's pods, those named like the alert."""
        calls = self._call(Role.POD_LIST_ALL, "the alert names no object: which pods are named like it?")
        for s in self.seen:
            if s.role is Role.POD_LIST_ALL and not s.fields and not s.rec.is_error:
                rows = [r for r in parse.table(s.rec.output[:400_000]) if r.get("NAME") and r.get("NAMESPACE")]
                for row in matching_rows(rows, alert_words(self.state.alert)):
                    ns = row.get("NAMESPACE")
                    calls += self.pods_from_rows([row], ns, f"namespace {ns}", limit=1)
                    calls += self.look_at(
                        ObjRef("Pod", row.get("NAME"), ns), f"pod {row.get('NAME')} (named like the alert)"
                    )
        return calls

    def pods_from_rows(
        self, rows: list[parse.Row], ns: str, whose: str, limit: int = _MAX_PODS, failing_only: bool = False
    ) -> list[ToolCall]:
        """The failing pods of a listing (else the first ones): describe them and read their logs."""
        failing = [r for r in rows if _failing(r)]
        calls: list[ToolCall] = []
        if failing and not failing_only:
            calls += self._other_revision(rows, failing, ns)
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

    def _other_revision(self, rows: list[parse.Row], failing: list[parse.Row], ns: str) -> list[ToolCall]:
        """One healthy pod of another revision than the failing ones: what the new template changed."""
        bad = {row_revision(r) for r in failing} - {""}
        if not bad:
            return []
        for row in rows:
            if healthy_row(row) and row_revision(row) not in bad | {""}:
                return self.look_at(ObjRef("Pod", row.get("NAME"), ns), "a healthy pod of the other revision")
        return []

    def _pod_listing(self, ns: str, selector: str | None) -> CallRecord | None:
        role = Role.POD_LIST if self.box.has(Role.POD_LIST) else Role.LIST
        if selector and not self.box.accepts(role, Slot.LABELS):
            selector = None  # the tool cannot filter by labels: its listing is the namespace's, narrowed by name
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

    def pod_logs(self, pod: ObjRef, container: str | None) -> list[ToolCall]:
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
        return calls + self._arch_nodes(pod, rec)

    def _arch_nodes(self, pod: ObjRef, rec: CallRecord) -> list[ToolCall]:
        """A pod whose logs say `exec format error`: its node and a running sibling's node (their architectures)."""
        failed = any(
            s.role is Role.POD_LOG and s.name == pod.name and EXEC_FORMAT.search(s.rec.output[-50_000:])
            for s in self.seen
        )
        if not failed:
            return []
        calls: list[ToolCall] = []
        node = pod_node(rec.output)
        if node:
            calls += self.look_at(ObjRef("Node", node), f"the node where {pod.name} cannot run its binary")
        prefix = pod.name.rsplit("-", 1)[0] + "-"
        for s in self.seen:
            if s.role in (Role.POD_LIST, Role.LIST) and not s.rec.is_error:
                for row in parse.table(s.rec.output[:400_000]):
                    name, where = row.get("NAME"), row.get("NODE")
                    if name.startswith(prefix) and row.get("STATUS") == "Running" and where and where != node:
                        return calls + self.look_at(ObjRef("Node", where), f"the node where {name} runs")
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


def _failing(row: parse.Row) -> bool:
    """A listed pod worth reading: a failing status, not ready, or restarting. A finished pod (Completed) is
    0/1 ready by design and is not failing."""
    status = row.get("STATUS")
    if status in ("Completed", "Succeeded"):
        return False
    restarts = row.get("RESTARTS").split(" ")[0]
    return bool(_FAILING_STATUS.search(status + " " + row.get("READY"))) or restarts not in ("", "0")
