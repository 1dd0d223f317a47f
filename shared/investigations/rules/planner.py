"""Which tool calls come next: rules keyed on the alert, the runbook and what earlier calls returned."""

from __future__ import annotations

import re
from typing import Any

from shared.investigations.rules import parse
from shared.investigations.rules.state import CallRecord, InvestigationState, Target, ToolCall, call_key, target_of

_HEARTBEAT_NAMES = {"watchdog", "deadmansswitch", "deadmanssnitch", "heartbeat", "infoinhibitor"}
_FAILING_STATUS = re.compile(r"(?i)error|crash|backoff|pending|failed|init:|oomkilled|unknown|terminating|evicted")
_DNS_ERROR = re.compile(
    r"(?i)NameResolutionError|Failed to resolve|Temporary failure in name resolution|NXDOMAIN|no such host|"
    r"could not resolve host|Name or service not known|getaddrinfo|server misbehaving"
)
# The name starts where the dotted name starts (`\b` also after each `-` or `.` inside it, and each such start
# rescanned the rest: quadratic).
_HOST_PORT = re.compile(r"(?<![-.\w])([a-z][-a-z0-9]*(?:\.[-a-z0-9]+)*):(\d{2,5})\b")


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
    available = state.tool_names()
    chosen: list[ToolCall] = []
    for call in _candidates(state):
        if call.tool in available and call.key() not in done and _valid(call, state):
            done.add(call.key())
            chosen.append(call)
            if len(chosen) >= left:
                break
    return chosen


def _valid(call: ToolCall, state: InvestigationState) -> bool:
    """The arguments satisfy the tool's inputSchema: required keys present, no unknown keys, simple types."""
    spec = next(t for t in state.tools if t.name == call.tool)
    schema = spec.input_schema or {}
    props: dict[str, Any] = schema.get("properties") or {}
    if any(k not in call.args for k in schema.get("required") or []):
        return False
    types = {"string": str, "boolean": bool, "integer": int, "object": dict}
    for key, value in call.args.items():
        if props and key not in props:
            return False
        want = types.get(str((props.get(key) or {}).get("type", "")))
        if want is not None and not isinstance(value, want):
            return False
    return True


def _candidates(state: InvestigationState) -> list[ToolCall]:
    """Every call worth making now, most useful first; the caller drops those made or not on offer."""
    t = target_of(state.alert)
    calls: list[ToolCall] = []
    if t.pod and t.namespace:
        calls += _pod_calls(t.pod, t.namespace, t.container, state, "the alerted pod")
    if t.deployment and t.namespace:
        calls += _workload_calls("apps/v1", "Deployment", t.deployment, t.namespace, state)
    for kind, name in (("StatefulSet", t.statefulset), ("DaemonSet", t.daemonset)):
        if name and t.namespace:
            calls += _workload_calls("apps/v1", kind, name, t.namespace, state)
    if t.job and t.namespace:
        calls += _job_calls(t.job, t.namespace, state)
    if t.node and (not (t.pod or t.deployment or t.job) or _pod_pending(state)):
        calls.append(_get("v1", "Node", t.node, None, "the alerted node: conditions, capacity, pods"))
    if t.pvc and t.namespace:
        calls.append(_get("v1", "PersistentVolumeClaim", t.pvc, t.namespace, "the alerted claim"))
    if t.namespace:
        calls.append(ToolCall(tool="events_list", args={"namespace": t.namespace}, reason="recent events"))
    if "throttl" in t.alertname.lower() and t.pod and t.namespace:
        calls.append(ToolCall(tool="pods_top", args={"name": t.pod, "namespace": t.namespace}, reason="CPU use"))
    if not (t.namespace or t.pod or t.deployment or t.job or t.node):
        calls += _discover_namespace(t, state)
    calls += _follow_ups(t, state)
    calls += _runbook_calls(t, state)
    return calls


def _get(api: str, kind: str, name: str, namespace: str | None, reason: str) -> ToolCall:
    args: dict[str, Any] = {"apiVersion": api, "kind": kind, "name": name}
    if namespace:
        args["namespace"] = namespace
    return ToolCall(tool="resources_get", args=args, reason=reason)


def _describe_pod(name: str, namespace: str, state: InvestigationState, why: str) -> ToolCall:
    if "resources_get" in state.tool_names():
        return _get("v1", "Pod", name, namespace, f"describe {why}: state, last state, exit code, events")
    return ToolCall(tool="pods_get", args={"name": name, "namespace": namespace}, reason=f"get {why}")


def _pod_calls(pod: str, namespace: str, container: str | None, state: InvestigationState, why: str) -> list[ToolCall]:
    calls = [_describe_pod(pod, namespace, state, why)]
    log: dict[str, Any] = {"name": pod, "namespace": namespace, "previous": True}
    if container:
        log["container"] = container
    calls.append(ToolCall(tool="pods_log", args=log, reason=f"logs of the last crash of {why}"))
    return calls


def _workload_calls(api: str, kind: str, name: str, namespace: str, state: InvestigationState) -> list[ToolCall]:
    calls = [_get(api, kind, name, namespace, f"the alerted {kind}: replicas, selector, template")]
    for rec in _records(state, "resources_get", kind=kind, name=name):
        selector = parse.field_value(rec.output, "Selector")
        if selector and "=" in selector:
            calls.append(_list_pods(namespace, selector, f"pods of {kind} {name}"))
    return calls


def _job_calls(job: str, namespace: str, state: InvestigationState) -> list[ToolCall]:
    return [
        _get("batch/v1", "Job", job, namespace, "the alerted Job: status, backoff limit, template"),
        _list_pods(namespace, f"job-name={job}", f"pods of Job {job}"),
    ]


def _list_pods(namespace: str, selector: str, why: str) -> ToolCall:
    return ToolCall(tool="pods_list_in_namespace", args={"namespace": namespace, "labelSelector": selector}, reason=why)


def _records(state: InvestigationState, tool: str, **match: Any) -> list[CallRecord]:
    return [
        c
        for c in state.calls
        if c.tool == tool and not c.is_error and all(c.args.get(k) == v for k, v in match.items())
    ]


def _pod_pending(state: InvestigationState) -> bool:
    return any(
        parse.field_value(c.output, "Status") == "Pending"
        for c in state.calls
        if c.tool in ("resources_get", "pods_get")
    )


def _discover_namespace(t: Target, state: InvestigationState) -> list[ToolCall]:
    """No object in the labels: find the namespace the alert's words name, then look at its pods."""
    calls = [ToolCall(tool="namespaces_list", args={}, reason="the alert names no namespace")]
    alert_words = set(parse.words(t.alertname + " " + str(state.alert.get("description") or "")))
    alert_words |= set(parse.words(" ".join(str(v) for v in (state.alert.get("annotations") or {}).values())))
    for rec in _records(state, "namespaces_list"):
        for row in parse.table(rec.output):
            ns = row.get("NAME")
            if ns and ns.lower() in alert_words and ns not in ("default", "kube-system"):
                calls.append(ToolCall(tool="pods_list_in_namespace", args={"namespace": ns}, reason=f"pods of {ns}"))
    return calls


def _follow_ups(t: Target, state: InvestigationState) -> list[ToolCall]:
    """Evidence-driven calls: pods found in listings, failing containers, DNS errors, missing services."""
    calls: list[ToolCall] = []
    for rec in state.calls:
        if rec.is_error:
            if rec.tool == "pods_log" and rec.args.get("previous") and "previous terminated container" in rec.output:
                args = {k: v for k, v in rec.args.items() if k != "previous"}
                calls.append(ToolCall(tool="pods_log", args=args, reason="no earlier crash: current logs"))
            continue
        if rec.tool in ("pods_list_in_namespace", "resources_list") and rec.args.get("kind", "Pod") == "Pod":
            calls += _pods_from_listing(rec, t, state)
        elif rec.tool in ("resources_get", "pods_get") and rec.args.get("kind", "Pod") == "Pod":
            calls += _containers_to_read(rec) + _claims(rec, state)
        elif rec.tool == "pods_log":
            calls += _from_logs(rec, t)
        elif rec.tool == "resources_list" and rec.args.get("kind") == "NetworkPolicy":
            ns = str(rec.args.get("namespace") or "")
            calls += [
                _get("networking.k8s.io/v1", "NetworkPolicy", row.get("NAME"), ns, "read the policy")
                for row in parse.table(rec.output)[:3]
            ]
        elif rec.tool == "tempo_fetch_traces":
            calls += _slowest_traces(rec)
    if "tempo_fetch_traces" in state.tool_names():
        calls.append(ToolCall(tool="tempo_fetch_traces", args={}, reason="recent traces: where does the time go?"))
    return calls


def _from_logs(rec: CallRecord, t: Target) -> list[ToolCall]:
    """DNS failures -> the namespace's NetworkPolicies; connection errors to a host -> its Services."""
    ns = str(rec.args.get("namespace") or t.namespace or "")
    if not ns:
        return []
    if _DNS_ERROR.search(rec.output):
        return [
            ToolCall(
                tool="resources_list",
                args={"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "namespace": ns},
                reason="DNS lookups fail: does a NetworkPolicy block egress?",
            )
        ]
    m = _HOST_PORT.search(rec.output) if re.search(r"(?i)connect|connection", rec.output) else None
    if m:
        return [
            ToolCall(
                tool="resources_list",
                args={"apiVersion": "v1", "kind": "Service", "namespace": ns},
                reason=f"does the service {m.group(1)} the logs cannot reach exist?",
            )
        ]
    return []


def _claims(rec: CallRecord, state: InvestigationState) -> list[ToolCall]:
    """The claims of a pending pod (an unbound claim keeps it from being scheduled)."""
    if not _pod_pending(state):
        return []
    ns = str(rec.args.get("namespace"))
    return [_get("v1", "PersistentVolumeClaim", claim, ns, "the pod's claim") for claim in _CLAIM.findall(rec.output)]


_CLAIM = re.compile(r"[Cc]laimName:\s+(\S+)")
_TRACE = re.compile(r"traceID=([0-9a-f]+)\)? ?\(durationMs=(\d+)\)")


def _slowest_traces(rec: CallRecord) -> list[ToolCall]:
    """The two slowest traces of a listing, to read their spans."""
    traces = sorted(((int(ms), tid) for tid, ms in _TRACE.findall(rec.output)), reverse=True)[:2]
    return [
        ToolCall(tool="tempo_fetch_trace_by_id", args={"trace_id": tid}, reason=f"slow trace ({ms} ms)")
        for ms, tid in traces
    ]


def _pods_from_listing(rec: CallRecord, t: Target, state: InvestigationState) -> list[ToolCall]:
    """Pods of a workload listing: failing ones first (describe + logs), then any for logs; at most four."""
    ns = str(rec.args.get("namespace") or t.namespace or "")
    rows = parse.table(rec.output)
    if not rec.args.get("labelSelector") and t.namespace:
        return []  # an unfiltered listing of a known namespace is context, not a lead
    failing = [r for r in rows if _FAILING_STATUS.search(r.get("STATUS"))]
    calls: list[ToolCall] = []
    for row in (failing or rows)[:4]:
        name = row.get("NAME")
        status = row.get("STATUS")
        restarts = row.get("RESTARTS").split(" ")[0]
        if status == "Pending":
            calls.append(_describe_pod(name, ns, state, f"pending pod {name}"))
            continue
        previous = restarts not in ("", "0") and status != "Error"
        args: dict[str, Any] = {"name": name, "namespace": ns}
        if previous:
            args["previous"] = True
        calls.append(ToolCall(tool="pods_log", args=args, reason=f"logs of pod {name} ({status})"))
        if failing and len(failing) <= 2:
            calls.append(_describe_pod(name, ns, state, f"pod {name}"))
    return calls


def _containers_to_read(rec: CallRecord) -> list[ToolCall]:
    """Logs of the container that fails (an init container, or one other than the labelled one)."""
    calls: list[ToolCall] = []
    name, ns = rec.args.get("name"), rec.args.get("namespace")
    for c in parse.containers(rec.output):
        reason = c.state_reason() or c.last_reason()
        if (reason and reason not in ("Running", "Completed", "PodInitializing")) or (c.init and reason):
            args: dict[str, Any] = {"name": name, "namespace": ns, "container": c.name}
            if c.value("Restart Count") not in ("", "0"):
                args["previous"] = True
            calls.append(ToolCall(tool="pods_log", args=args, reason=f"logs of failing container {c.name}"))
    return calls


_RUNBOOK_KINDS = (
    (r"(?i)network ?polic", "networking.k8s.io/v1", "NetworkPolicy"),
    (r"(?i)\bHPA\b|HorizontalPodAutoscaler", "autoscaling/v2", "HorizontalPodAutoscaler"),
    (r"(?i)\bPVC\b|PersistentVolumeClaim", "v1", "PersistentVolumeClaim"),
    (r"(?i)\bingress\b", "networking.k8s.io/v1", "Ingress"),
)


def _runbook_calls(t: Target, state: InvestigationState) -> list[ToolCall]:
    """PromQL the runbook asks to graph (when a Prometheus tool is offered); listings it mentions, after the
    first iteration (the alert's own objects go first)."""
    queries = [
        ToolCall(tool="prometheus_execute_range_query", args={"query": q}, reason="the runbook asks for this query")
        for q in promql(state.runbook or "")[:2]
    ]
    if not state.runbook or not t.namespace or not state.calls:
        return queries
    return queries + [
        ToolCall(
            tool="resources_list",
            args={"apiVersion": api, "kind": kind, "namespace": t.namespace},
            reason=f"the runbook mentions {kind}s",
        )
        for pattern, api, kind in _RUNBOOK_KINDS
        if re.search(pattern, state.runbook)
    ]


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
