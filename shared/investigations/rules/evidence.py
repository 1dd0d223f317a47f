"""Evidence rules: what the tool outputs say (OOMKilled, exit codes, pull errors, scheduling, DNS, latency...)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from datetime import UTC, datetime

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, alert_lines, ev
from shared.investigations.rules.log_rules import http_errors, latency, log_lines, network, traces
from shared.investigations.rules.log_signals import log_findings
from shared.investigations.rules.netpol import blocks_ingress, labels, matches, read_policy
from shared.investigations.rules.object_state import state_findings
from shared.investigations.rules.planner import NOT_FOUND, Walk, is_heartbeat
from shared.investigations.rules.rbac import denials, granted_verbs
from shared.investigations.rules.state import CallRecord, Finding, InvestigationState
from shared.investigations.rules.toolshape import Role
from shared.investigations.rules.vocabulary import KNOWN_COMMANDS


def findings(state: InvestigationState) -> list[Finding]:
    """Every finding the evidence rules draw from the calls made, strongest first (deterministic order)."""
    ctx = Context(state)
    found: list[Finding] = []
    for rule in _RULES:
        found += rule(ctx)
    # One finding per quoted line: two rules reading the same line say the same thing, and the one surer of
    # its reading (a named category over "the application stops on an error") is kept; the first on a tie.
    best: dict[str, Finding] = {}
    for f in found:
        first = _quote_key(f.evidence[0].quote) if f.evidence else ""
        if first and (first not in best or f.confidence > best[first].confidence):
            best[first] = f
    seen: set[tuple[str, str]] = set()
    unique: list[Finding] = []
    for f in found:
        first = _quote_key(f.evidence[0].quote) if f.evidence else ""
        if (f.rule, f.subject) in seen or (first and best[first] is not f):
            continue
        seen.add((f.rule, f.subject))
        unique.append(f)
    return sorted(unique, key=lambda f: (f.symptom, -f.confidence))


def _quote_key(quote: str) -> str:
    """A quoted line as a message: the YAML `Message: "..."` of an event and its table row's message match."""
    q = quote.strip()
    q = q.split("Message:", 1)[1] if q.startswith("Message:") else q
    return re.sub(r"\s+", " ", q.replace('\\"', '"').strip().strip("\"'")).lower()


def _heartbeat(ctx: Context) -> list[Finding]:
    if not is_heartbeat(ctx.state.alert):
        return []
    name = ctx.target.alertname or "This alert"
    return [
        Finding(
            rule="heartbeat",
            subject=name,
            cause=(
                f"{name} is not an issue: it is a heartbeat alert, always firing by design, that proves the "
                "alerting pipeline (Prometheus to Alertmanager to its receivers) works. It is expected behaviour."
            ),
            evidence=alert_lines(ctx, r"(?i)always (be )?firing|alerting pipeline"),
            remediation=[
                "No action is needed while it fires.",
                (
                    "Route it to a dead man's switch (e.g. DeadMansSnitch, a heartbeat monitor) so that its absence "
                    "pages someone: if it stops firing, the alerting pipeline is broken."
                ),
            ],
            confidence=0.95,
        )
    ]


def _container_states(ctx: Context) -> list[Finding]:
    """OOMKilled, exit codes, command not found, CrashLoopBackOff, image pull errors, from pod descriptions."""
    out: list[Finding] = []
    for rec in ctx.pods:
        pod = str(rec.args.get("name"))
        for c in parse.containers(rec.output) or parse.yaml_containers(rec.output):
            out += _one_container(rec, pod, c)
        if "OOMKilled" in rec.output and not any(f.rule == "oom" for f in out):
            out.append(_oom(rec, pod, None))
    return out


def _one_container(rec: CallRecord, pod: str, c: parse.Container) -> list[Finding]:
    out: list[Finding] = []
    state, last = c.state_reason(), c.last_reason()
    kind = "init container" if c.init else "container"
    if "OOMKilled" in (state, last):
        out.append(_oom(rec, pod, c))
    message = c.value("Message", after="Last State:") or c.value("Message")
    m = re.search(r'exec: "([^"]+)": (executable file not found in \$PATH|no such file or directory)', message)
    if m:
        out.append(_command_not_found(rec, pod, c, m.group(1), c.line_with("Message:")))
    if state in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
        out.append(
            Finding(
                rule="image_pull",
                subject=pod,
                cause=f"The image `{c.value('Image')}` of {kind} {c.name} in pod {pod} cannot be pulled ({state}).",
                evidence=[ev(rec, c.line_with(r"Image:")), ev(rec, c.line_with(r"Reason:"))],
                remediation=["Fix the image name/tag or the registry credentials (see the pull error)."],
                confidence=0.8,
            )
        )
    if state == "CrashLoopBackOff":
        exit_code = c.value("Exit Code")
        detail = f" (last exit: {last or 'unknown'}, exit code {exit_code})" if exit_code else ""
        out.append(
            Finding(
                rule="crashloop",
                subject=pod,
                cause=f"{kind.capitalize()} {c.name} of pod {pod} is in CrashLoopBackOff (crash loop){detail}.",
                evidence=[ev(rec, c.line_with(r"Reason:\s+CrashLoopBackOff"))]
                + ([ev(rec, c.line_with(r"Exit Code:"))] if exit_code else []),
                remediation=["Fix the cause of the crash below; the restarts stop once the container stays up."],
                confidence=0.6,
                symptom=True,
            )
        )
        if exit_code == "0":
            out.append(
                Finding(
                    rule="exits_zero",
                    subject=pod,
                    cause=f"{kind.capitalize()} {c.name} exits by itself (exit code 0, Completed) and is restarted.",
                    evidence=[ev(rec, c.line_with(r"Reason:\s+Completed")), ev(rec, c.line_with(r"Exit Code:"))],
                    remediation=["Make the command run in the foreground, or check why it decides to stop."],
                    confidence=0.45,
                    symptom=True,
                )
            )
    return out


def _oom(rec: CallRecord, pod: str, c: parse.Container | None) -> Finding:
    limit = c.quantity("Limits", "memory") if c else ""
    name = f"container {c.name} of " if c else ""
    evidence = [ev(rec, c.line_with(r"Reason:\s+OOMKilled") if c else "OOMKilled")]
    if c and c.value("Exit Code") == "137":
        evidence.append(ev(rec, c.line_with(r"Exit Code:\s+137")))
    if limit:
        evidence.append(ev(rec, f"Limits: memory: {limit}"))
    return Finding(
        rule="oom",
        subject=pod,
        cause=f"The {name}pod {pod} is OOMKilled (out of memory, exit code 137)"
        + (f": it uses more than its {limit} memory limit." if limit else "."),
        evidence=evidence,
        remediation=[
            "Raise the memory limit (and request) to what the process needs"
            + (f", above {limit}" if limit else "")
            + ", or reduce its memory use (leak, cache or batch size)."
        ],
        confidence=0.9,
    )


def _command_not_found(rec: CallRecord, pod: str, c: parse.Container, cmd: str, quote: str) -> Finding:
    close = difflib.get_close_matches(cmd, KNOWN_COMMANDS, n=1, cutoff=0.6)
    typo = f" `{cmd}` looks like a typo: the intended command is probably `{close[0]}`." if close else ""
    kind = "init container" if c.init else "container"
    return Finding(
        rule="command_not_found",
        subject=pod,
        cause=f'The {kind} {c.name} of pod {pod} runs the command "{cmd}", which is not found '
        f"(executable file not found in $PATH).{typo}",
        evidence=[ev(rec, quote), ev(rec, f"Command: {' '.join(c.command())}")],
        remediation=[
            f"Fix the command in the pod spec: replace `{cmd}` with `{close[0]}`."
            if close
            else f"Fix the command `{cmd}` in the pod spec, or use an image that contains it."
        ],
        confidence=0.9,
    )


_PULL = re.compile(r'Failed to pull image "([^"]+)": (.*)')


def _events(ctx: Context) -> list[Finding]:
    """Pull errors with the registry message, scheduling failures, probe failures, Job backoff, volumes."""
    out: list[Finding] = []
    for rec, e in ctx.related_events():
        m = _PULL.search(e.message)
        if m:
            auth = re.search(r"(?i)denied|unauthorized|authorization|forbidden|401|403", m.group(2))
            out.append(
                Finding(
                    rule="image_pull_registry",
                    subject=e.obj_name,
                    cause=f"The image `{m.group(1)}` cannot be pulled (ErrImagePull / ImagePullBackOff): "
                    + ("the registry denies access or the repository does not exist." if auth else m.group(2)[:160]),
                    evidence=[ev(rec, e.message)],
                    remediation=[
                        f"Check that `{m.group(1)}` exists in the registry (name and tag)",
                        "if it is private, add an imagePullSecret with credentials that can read it"
                        if auth
                        else "check the registry is reachable from the nodes",
                    ],
                    confidence=0.9,
                )
            )
        elif e.reason == "FailedScheduling":
            out.append(_scheduling(rec, e, ctx))
        elif re.search(r"(?i)(liveness|readiness|startup) probe failed", e.message):
            out.append(_probe(rec, e, next((r for r in ctx.pods if r.args.get("name") == e.obj_name), None)))
        elif e.reason == "BackoffLimitExceeded" or "backoff limit" in e.message:
            out.append(
                Finding(
                    rule="job_backoff",
                    subject=e.obj_name,
                    cause=f"Job {e.obj_name} failed: it reached its backoff limit (BackoffLimitExceeded).",
                    evidence=[ev(rec, e.line)],
                    remediation=["Fix the cause of the pod failures, then delete and recreate the Job."],
                    confidence=0.7,
                    symptom=True,
                )
            )
        elif re.search(r'(?i)(configmap|secret) "[^"]+" not found|CreateContainerConfigError', e.message):
            out.append(
                Finding(
                    rule="missing_config",
                    subject=e.obj_name,
                    cause=f"{e.obj_name} cannot start: {e.message}",
                    evidence=[ev(rec, e.message)],
                    remediation=["Create the missing ConfigMap/Secret or fix its name in the pod spec."],
                    confidence=0.85,
                )
            )
        elif re.search(
            r"(?i)ProvisioningFailed|FailedMount|FailedAttachVolume|unbound immediate", e.reason + e.message
        ):
            out.append(
                Finding(
                    rule="volume",
                    subject=e.obj_name,
                    cause=f"{e.obj_name}: volume problem ({e.reason}): {e.message}",
                    evidence=[ev(rec, e.message)],
                    remediation=[
                        (
                            "Check the PersistentVolumeClaim: its StorageClass exists and can provision, or a matching "
                            "PersistentVolume is available; fix the claim or the class."
                        )
                    ],
                    confidence=0.8,
                )
            )
    return out


def _scheduling(rec: CallRecord, e: parse.Event, ctx: Context) -> Finding:
    reasons = [reason for _, reason in scheduler_reasons(e.message)]
    if "unbound immediate PersistentVolumeClaims" in e.message:
        reasons.append("unbound PersistentVolumeClaim")
    what = ", ".join(dict.fromkeys(reasons)) or "no node fits"
    fixes = []
    for r in reasons:
        if r == "unbound PersistentVolumeClaim":
            fixes.append("bind the pod's PersistentVolumeClaim (see the claim's events: StorageClass, provisioner)")
        elif r.startswith("Insufficient"):
            res = r.split(" ", 1)[1]
            fixes.append(f"lower the {res} request or add nodes with enough {res} (e.g. a node pool that has it)")
        elif r == "Too many pods":
            fixes.append("add nodes or raise the nodes' max pods")
        else:
            fixes.append(_placement_fix(r, _pod_doc(ctx, e.obj_name)))
    return Finding(
        rule="scheduling",
        subject=e.obj_name,
        cause=f"Pod {e.obj_name} cannot be scheduled (Pending, FailedScheduling): {what}.",
        evidence=[ev(rec, e.message)],
        remediation=fixes or ["Check the pod's requests, node selectors, affinity and taints against the nodes."],
        confidence=0.9,
    )


def scheduler_reasons(message: str) -> list[tuple[int, str]]:
    """The scheduler's `0/4 nodes are available: 1 node(s) had untolerated taint {a: b}, 3 Insufficient cpu.` as
    (count, reason), most nodes first; the control-plane taint (nodes that never take workloads) last."""
    body = message.split("are available:", 1)[-1].split(" preemption:", 1)[0].strip().rstrip(".")
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(body[:4000]):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:4000])
    out: list[tuple[int, str]] = []
    for part in parts:
        m = re.match(r"\s*(\d{1,6}) (.+)", part)
        if m:
            out.append((int(m.group(1)), m.group(2).strip().rstrip(".")))
    return sorted(out, key=lambda cr: ("control-plane" in cr[1] or "master" in cr[1], -cr[0]))


_PROBE_LINE = re.compile(r"^\s*(Liveness|Readiness|Startup):\s+(\S+)\s+(\S+)")


def _probe(rec: CallRecord, e: parse.Event, pod_rec: CallRecord | None) -> Finding:
    """A failing probe, read against the pod's own spec: a port nothing listens on, a path that answers 404/5xx,
    a timeout, each with its fix; the generic advice when the pod's spec was not read."""
    pod = pod_rec.output[:200_000] if pod_rec is not None else ""
    kind_m = re.search(r"(?i)(liveness|readiness|startup)", e.message)
    kind = kind_m.group(1).capitalize() if kind_m else "Liveness"
    spec = next((m for line in pod.splitlines() if (m := _PROBE_LINE.match(line)) and m.group(1) == kind), None)
    target = spec.group(3) if spec else ""  # http://:8080/healthz or :8080
    probe_port = (re.search(r":(\d{1,5})", target) or re.search(r"(\d{1,5})", target) or [None, ""])[1]
    ports = set(re.findall(r"^\s*Port:\s+(\d{1,5})/", pod, re.MULTILINE))
    status = re.search(r"statuscode: (\d{3})", e.message)
    evidence = [ev(rec, e.message)] + ([ev(pod_rec, spec.group(0).strip())] if spec and pod_rec else [])
    where = f"The {kind.lower()} probe of {e.obj_name}"
    if probe_port and ports and probe_port not in ports and re.search(r"(?i)refused|no route|reset", e.message):
        shown = ", ".join(sorted(ports))
        cause = f"{where} checks port {probe_port}, but the container listens on port {shown}: the probe fails"
        fix = f"point the {kind.lower()} probe at the port the app listens on ({shown}), not {probe_port}"
        conf = 0.85
    elif status:
        path = target.split(":", 2)[-1].partition("/")[2] if "/" in target else ""
        cause = f"{where} gets HTTP {status.group(1)} from `/{path}`: the app does not answer that path as healthy"
        fix = f"point the {kind.lower()} probe at the path the app serves its health on (not `/{path}`), or serve it"
        conf = 0.8
    elif re.search(r"(?i)timeout|deadline exceeded|timed out", e.message):
        cause = f"{where} times out: the app answers slower than the probe's timeout"
        fix = (
            "raise timeoutSeconds (and initialDelaySeconds, or add a startupProbe for slow starts), or speed up the app"
        )
        conf = 0.75
    else:
        cause = f"{where} fails: {e.message}"
        fix = (
            "check the probe's path, port and timeout against the app; raise initialDelaySeconds or timeoutSeconds if "
            "the app is slow to answer, or fix the endpoint"
        )
        conf = 0.7
    return Finding(
        rule="probe", subject=e.obj_name, cause=f"{cause} ({e.message[:160]}).", evidence=evidence, remediation=[fix],
        confidence=conf,
    )  # fmt: skip


def _pod_doc(ctx: Context, name: str) -> str:
    return next((rec.output for rec in ctx.pods if rec.args.get("name") == name), "")


def _placement_fix(reason: str, pod: str) -> str:
    """The fix for a placement constraint no node meets, with the pod's own selector or the node's taint."""
    if "affinity/selector" in reason or "node selector" in reason:
        selector = parse.field_value(pod, "Node-Selectors")
        if selector and selector != "<none>":
            return (
                f"no node has the label `{selector}` that the pod's nodeSelector requires: add the label to a node "
                f"(`kubectl label node <node> {selector}`) or remove or fix the nodeSelector (or node affinity)"
            )
        return "no node matches the pod's node selector or affinity: label a node to match, or relax the rule"
    if "taint" in reason:
        return (
            f"the nodes carry a taint the pod does not tolerate ({reason}): add a matching toleration or remove "
            "the taint"
        )
    if "anti-affinity" in reason:
        return (
            "the pod's anti-affinity rule leaves no node (more replicas than eligible nodes): add nodes, lower the "
            "replicas, or make the rule preferred instead of required"
        )
    if "persistent volumes to bind" in reason:
        return (
            "no PersistentVolume can bind the pod's claim: with a StorageClass that does not provision volumes "
            "(kubernetes.io/no-provisioner, local volumes) create a PersistentVolume for each claim, or use a "
            "class with a dynamic provisioner"
        )
    if "unschedulable" in reason:
        return "the nodes are cordoned (unschedulable): uncordon them or add nodes"
    if "control-plane" in reason:
        return f"({reason}: control-plane nodes take no workloads; expected)"
    if "volume node affinity" in reason:
        return "the pod's volume is bound to another zone or node: schedule in that zone or recreate the volume"
    return f"check taints, affinity and node selectors ({reason})"


def _throttling(ctx: Context) -> list[Finding]:
    """CPU throttling: the alert says so and the description shows the CPU limit that causes it."""
    text = f"{ctx.target.alertname} {ctx.state.alert.get('description', '')}"
    if not re.search(r"(?i)throttl", text):
        return []
    out: list[Finding] = []
    for rec in ctx.pods:
        for c in parse.containers(rec.output):
            if ctx.target.container and c.name != ctx.target.container:
                continue
            limit = c.quantity("Limits", "cpu") or _yaml_cpu_limit(rec.output)
            if not limit:
                continue
            cmd = " ".join(c.command())
            out.append(
                Finding(
                    rule="cpu_throttling",
                    subject=str(rec.args.get("name")),
                    cause=f"Container {c.name} of pod {rec.args.get('name')} is CPU throttled: its CPU limit is "
                    f"only {limit} (limits.cpu), far below what it uses" + (f" (it runs `{cmd}`)." if cmd else "."),
                    evidence=[ev(rec, f"Limits: cpu: {limit}")] + ([ev(rec, f"Command: {cmd}")] if cmd else []),
                    remediation=[
                        (
                            f"Increase the CPU limit of {c.name} above {limit} (or remove the CPU limit and keep a "
                            "realistic request), or make the workload use less CPU."
                        )
                    ],
                    confidence=0.85,
                )
            )
    return out


def _yaml_cpu_limit(text: str) -> str:
    # Possessive: the blanks before `cpu:` are taken once (`\s*\n\s+` split every run of them every way).
    m = re.search(r"limits:[^\S\n]*\n\s++cpu:\s*(\S+)", text)
    return m.group(1).strip("\"'") if m else ""


def _exit_codes(ctx: Context) -> list[Finding]:
    """A container that exits with an error code, with the last lines its logs printed."""
    out: list[Finding] = []
    for rec in ctx.pods:
        pod = str(rec.args.get("name"))
        for c in parse.containers(rec.output):
            code = c.value("Exit Code")
            if code and code not in ("0", "137"):
                logs = [lg for lg in ctx.logs if lg.args.get("name") == pod and lg.output.strip()]
                lines = logs[0].output.splitlines() if logs else []
                tail = [ln.strip() for ln in lines if ln.strip() and "has not logged any message" not in ln][-2:]
                out.append(
                    Finding(
                        rule="exit_code",
                        subject=pod,
                        cause=f"Container {c.name} of pod {pod} exits with code {code}"
                        + (f"; its last log lines: {' / '.join(tail)}" if tail else "."),
                        evidence=[ev(rec, c.line_with(r"Exit Code:"))] + [ev(logs[0], t) for t in tail if logs],
                        remediation=["Read the error above and fix the application or its configuration."],
                        confidence=0.4,
                        symptom=True,
                    )
                )
    return out


def _job_status(ctx: Context) -> list[Finding]:
    """A Job with failed pods and none succeeded."""
    out: list[Finding] = []
    for rec in ctx.gets:
        if rec.args.get("kind") != "Job":
            continue
        status = parse.field_value(rec.output, "Pods Statuses")
        m = re.search(r"(?<!\d)(\d+) Succeeded / (\d+) Failed", status)
        if m and m.group(1) == "0" and m.group(2) != "0":
            limit = parse.field_value(rec.output, "Backoff Limit")
            out.append(
                Finding(
                    rule="job_backoff",
                    subject=str(rec.args.get("name")),
                    cause=f"Job {rec.args.get('name')} failed: {m.group(2)} pods failed, none succeeded"
                    + (f" (backoff limit {limit})." if limit else "."),
                    evidence=[ev(rec, f"Pods Statuses: {status}")]
                    + ([ev(rec, f"Backoff Limit: {limit}")] if limit else []),
                    remediation=["Fix the cause of the pod failures, then delete and recreate the Job."],
                    confidence=0.7,
                    symptom=True,
                )
            )
    return out


# How a dangling reference is mended, by the kind that is missing.
_MEND = {
    "StorageClass": "create the StorageClass `{name}` (with a working provisioner) or set the claim's "
    "storageClassName to a class that exists (`kubectl get storageclass`)",
    "Service": "create the Service `{name}` or fix the name that points at it",
    "ConfigMap": "create the ConfigMap `{name}` in the namespace or fix its name in the pod spec",
    "PersistentVolumeClaim": "create the PersistentVolumeClaim `{name}` or fix claimName in the pod spec",
    "IngressClass": "install the ingress controller for class `{name}` or set ingressClassName to an installed class",
    "ServiceAccount": "create the ServiceAccount `{name}` or fix serviceAccountName",
}


def _service_selectors(ctx: Context) -> list[Finding]:
    """A Service whose selector matches no pod (no endpoints): which label differs from the pods it should select."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Service" or s.role is not Role.DESCRIBE:
            continue
        selector = parse.field_value(s.rec.output, "Selector")
        endpoints = parse.field_value(s.rec.output, "Endpoints")
        if "=" not in selector or endpoints not in ("", "<none>"):
            continue
        wanted = dict(p.split("=", 1) for p in selector.split(",") if "=" in p)
        near: list[tuple[parse.Row, dict[str, str], CallRecord]] = []
        for listing in ctx.lists:
            if listing.args.get("namespace") not in (None, s.namespace):
                continue
            for row in parse.table(listing.output):
                labels = dict(p.split("=", 1) for p in row.get("LABELS").split(",") if "=" in p)
                if labels and not all(labels.get(k) == v for k, v in wanted.items()):
                    shared = [k for k, v in wanted.items() if labels.get(k) == v]
                    if shared:
                        near.append((row, labels, listing))
        differ = sorted(
            {f"{k}={labels.get(k, '<unset>')}" for _, labels, _ in near for k in wanted if labels.get(k) != wanted[k]}
        )
        cause = f"Service {s.name} has no endpoints: its selector `{selector}` matches no pod"
        if near:
            cause += f"; the pods it should select have {', '.join(differ)} instead (e.g. pod {near[0][0].get('NAME')})"
        out.append(
            Finding(
                rule="service_selector",
                subject=s.name,
                cause=cause + ", so connections to the Service fail.",
                evidence=[ev(s.rec, f"Selector: {selector}"), ev(s.rec, f"Endpoints: {endpoints or '<none>'}")]
                + ([ev(near[0][2], near[0][0].line.strip())] if near else []),
                remediation=[
                    f"Make Service {s.name}'s selector match the pods' labels"
                    + (f" ({', '.join(differ)})" if differ else "")
                    + ", or label the pods as the selector expects; then check `kubectl get endpoints "
                    + s.name
                    + "` lists them."
                ],
                confidence=0.85,
            )
        )
    return out


_NAME_COLUMN = re.compile(r"^[ \t-]*(?:name|Name|NAME):[ \t]+['\"]?([a-z0-9][-a-z0-9.]{0,252})")


def _near_miss_names(ctx: Context) -> list[Finding]:
    """`<kind> "x" not found` where an object of almost the same name exists: a typo in a reference."""
    known: set[str] = set()
    for rec in ctx.state.calls:
        if rec.is_error:
            continue
        known |= {r.get("NAME") for r in parse.table(rec.output[:200_000]) if r.get("NAME")}
        known |= {m.group(1) for line in rec.output[:200_000].splitlines() if (m := _NAME_COLUMN.match(line))}
    out: list[Finding] = []
    seen: set[str] = set()
    for rec in ctx.state.calls:
        if rec.is_error:
            continue  # our own call's not-found is not a reference someone wrote
        for m in NOT_FOUND.finditer(rec.output[:200_000]):
            plural, missing = m.group(1), m.group(2)
            if missing in known or missing in seen or plural.split(".")[0] in ("pods", "pod", "replicasets"):
                continue
            # A pod's name extends its ReplicaSet's: a longer name that starts with the missing one is another object.
            others = sorted(n for n in known - {missing} if not n.startswith(missing + "-"))
            close = difflib.get_close_matches(missing, others, n=1, cutoff=0.85)
            if not close:
                continue
            seen.add(missing)
            line = parse.line_matching(rec.output, re.escape(missing) + r".{0,4} not found")
            out.append(
                Finding(
                    rule="name_typo",
                    subject=missing,
                    cause=f'{plural} "{missing}" is not found, but "{close[0]}" exists: the reference to {missing} '
                    f"is a typo for {close[0]}.",
                    evidence=[ev(rec, line or m.group(0))],
                    remediation=[
                        (
                            f"Fix the name: replace `{missing}` with `{close[0]}` where it is referenced "
                            "(manifest, values, pod spec), then sync or roll out again."
                        )
                    ],
                    confidence=0.85,
                )
            )
    return out


_CONTROLLERS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"})
_OWNED = frozenset({"ReplicaSet", "Pod", "Job", "Endpoints"})


def _missing_references(ctx: Context) -> list[Finding]:
    """An object that another one refers to and that does not exist: a claim's storage class, an ingress's
    service, an HPA's target, a pod's config map or claim."""
    walk = Walk(ctx.state)
    walk.explore()
    out: list[Finding] = []
    for s in walk.seen:
        child = s.obj()
        parent = walk.parents.get(child) if child is not None else None
        if child is None or parent is None or not s.rec.is_error or "not found" not in s.rec.output.lower():
            continue
        if child.kind in _OWNED or (parent.kind == "Pod" and child.kind in _CONTROLLERS):
            # A pod's controller exists while the pod does; a controller's own objects come and go (a rolled-over
            # ReplicaSet): their absence says little.
            continue
        # The parent's own output naming the child next to a failure corroborates the absence.
        parent_out = walk.described[parent].output if parent in walk.described else ""
        # Logs that fail to reach the missing object (by name) corroborate it as well as the parent's own output.
        parent_out += "\n".join(x.rec.output[-100_000:] for x in walk.seen if x.role is Role.POD_LOG)
        told = any(
            child.name in line
            and re.search(r"(?i)not found|missing|does not exist|invalid|unknown|no such host|resolve|NXDOMAIN", line)
            for line in parent_out.splitlines()
        )
        mend = _MEND.get(child.kind, "create {kind} `{name}` or fix the reference to it in {parent}")
        out.append(
            Finding(
                rule="missing_reference",
                subject=child.name,
                cause=f"{parent.kind} {parent.name} refers to {child.kind} {child.name}, which does not exist "
                f"(not found), so {parent.kind} {parent.name} cannot work.",
                evidence=[ev(s.rec, s.rec.output.strip().splitlines()[0] if s.rec.output.strip() else "not found")],
                remediation=[mend.format(kind=child.kind, name=child.name, parent=f"{parent.kind} {parent.name}")],
                confidence=0.85 if told else 0.55,
            )
        )
    return out


_DISK_FULL = re.compile(r"(?i)no space left on device|ENOSPC|disk (?:is )?full|quota exceeded for volume")
_SPACE_ALERT = re.compile(r"(?i)filling ?up|out of space|almost full|disk ?full|free space|% free|space left|inodes")


def _volume_space(ctx: Context) -> list[Finding]:
    """A volume running out of space (the alert says so): the claim's capacity and whether its class can grow."""
    alert = ctx.state.alert
    said = " ".join([str(alert.get("title") or ""), str(alert.get("description") or "")])
    said += " " + " ".join(str(v) for v in (alert.get("annotations") or {}).values())
    full_logs = [log for log in ctx.logs if _DISK_FULL.search(log.output[-100_000:])]
    if full_logs:
        said = parse.line_matching(full_logs[0].output[-100_000:], _DISK_FULL.pattern) or said
    elif not _SPACE_ALERT.search(said):
        return []
    classes = {
        s.name: s.rec for s in ctx.seen if s.kind == "StorageClass" and s.role is Role.DESCRIBE and not s.rec.is_error
    }
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "PersistentVolumeClaim" or s.role is not Role.DESCRIBE:
            continue
        capacity = parse.field_value(s.rec.output, "Capacity") or "its size"
        klass = parse.field_value(s.rec.output, "StorageClass")
        sc = classes.get(klass)
        expandable = parse.field_value(sc.output, "AllowVolumeExpansion") if sc is not None else ""
        symptom = parse.line_matching(said, r"(?i)free|full|space") or said.strip()
        evidence = [ev(s.rec, f"Capacity:     {capacity}" if capacity != "its size" else f"StorageClass:  {klass}")]
        if sc is not None and expandable:
            evidence.append(ev(sc, f"AllowVolumeExpansion:  {expandable}"))
        if expandable.lower() == "true":
            grow = (
                f"expand the claim: raise spec.resources.requests.storage of {s.name} above {capacity} "
                f"(StorageClass {klass} allows volume expansion, so the volume grows in place)"
            )
        elif expandable:
            grow = f"StorageClass {klass} does not allow volume expansion: move the data to a larger volume"
        else:
            grow = (
                f"expand the PVC: raise spec.resources.requests.storage above {capacity} (StorageClass {klass} must "
                "allow volume expansion; otherwise move the data to a larger volume)"
            )
        out.append(
            Finding(
                rule="volume_space",
                subject=s.name,
                cause=f"PersistentVolumeClaim {s.name} ({capacity}, StorageClass {klass or 'default'}) is running out "
                f"of space: {symptom[:200]}",
                evidence=evidence,
                remediation=[
                    grow,
                    "find what fills it (data growth, logs, WAL or temp files) and clean up or set retention",
                ],
                confidence=0.75,
            )
        )
    return out


def _unprovisioned_claims(ctx: Context) -> list[Finding]:
    """A Pending claim whose StorageClass provisions nothing (`kubernetes.io/no-provisioner`): it waits for a
    PersistentVolume someone has to create."""
    classes = {s.name: s.rec for s in ctx.seen if s.kind == "StorageClass" and s.role is Role.DESCRIBE}
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "PersistentVolumeClaim" or s.role is not Role.DESCRIBE:
            continue
        klass = parse.field_value(s.rec.output, "StorageClass")
        sc = classes.get(klass)
        provisioner = parse.field_value(sc.output, "Provisioner") if sc is not None else ""
        if sc is None or parse.field_value(s.rec.output, "Status") != "Pending" or "no-provisioner" not in provisioner:
            continue
        out.append(
            Finding(
                rule="claim_unprovisioned",
                subject=s.name,
                cause=f"PersistentVolumeClaim {s.name} stays Pending: its StorageClass {klass} has no provisioner "
                f"({provisioner}), so no volume is created for it, and no PersistentVolume matches it.",
                evidence=[
                    ev(s.rec, parse.line_matching(s.rec.output, r"^Status:")),
                    ev(sc, parse.line_matching(sc.output, r"^Provisioner:")),
                ],
                remediation=[
                    (
                        f"create a PersistentVolume of class {klass} for {s.name} (size and access mode of the claim, "
                        "on a node that has the disk), or use a StorageClass with a dynamic provisioner"
                    )
                ],
                confidence=0.85,
            )
        )
    return out


def _rbac_gaps(ctx: Context) -> list[Finding]:
    """A refused action next to the Role that should allow it: which verb that Role lacks on which resource."""
    roles = [s for s in ctx.seen if s.kind in ("Role", "ClusterRole") and s.role is Role.DESCRIBE]
    out: list[Finding] = []
    for log in ctx.logs:
        for d in denials(log.output[-200_000:]):
            for s in roles:
                verbs, quote = granted_verbs(s.rec.output[:200_000], d.resource)
                if d.verb in verbs or "*" in verbs:
                    continue
                has = f"only {', '.join(sorted(verbs))}" if verbs else "nothing"
                out.append(
                    Finding(
                        rule="rbac_missing_verb",
                        subject=s.name,
                        cause=f"Service account {d.account} may not {d.verb} {d.resource}: the {s.kind} {s.name} "
                        f"bound to it allows {has} on {d.resource}; the `{d.verb}` verb is missing.",
                        evidence=([ev(s.rec, quote)] if quote else []) + [ev(log, d.line)],
                        remediation=[
                            f"add `{d.verb}` to the verbs of {s.kind} {s.name}'s rule for {d.resource} "
                            f"(`kubectl edit {s.kind.lower()} {s.name}"
                            + (f" -n {s.namespace}`)" if s.namespace else "`)")
                        ],
                        confidence=0.92,
                    )
                )
    return out


# The node lifecycle controller's taints on a node it stopped hearing from.
_LOST_NODE_TAINT = re.compile(r"node\.kubernetes\.io/(unreachable|not-ready):(NoExecute|NoSchedule)")


def _lost_nodes(ctx: Context) -> list[Finding]:
    """A node the control plane marked unreachable / not-ready: what that does to its pods."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Node" or s.role is not Role.DESCRIBE:
            continue
        line = parse.line_matching(s.rec.output[:200_000], _LOST_NODE_TAINT.pattern)
        m = _LOST_NODE_TAINT.search(line)
        if not m:
            continue
        out.append(
            Finding(
                rule="node_tainted_lost",
                subject=s.name,
                cause=f"The node controller marked Node {s.name} {m.group(1)} (taint node.kubernetes.io/"
                f"{m.group(1)}:{m.group(2)}): no new pods land on it, and with NoExecute its pods are evicted "
                "(rescheduled elsewhere) once their toleration expires (300 s by default).",
                evidence=[ev(s.rec, line)],
                remediation=[
                    (
                        f"bring {s.name} back (power, network, `systemctl restart kubelet` and `journalctl -u "
                        "kubelet`) or drain and remove it so its pods run elsewhere"
                    )
                ],
                confidence=0.6,
                symptom=True,
            )
        )
    return out


def _policies_dropping(ctx: Context) -> list[Finding]:
    """A client whose connections time out or are refused, a NetworkPolicy on the target that admits only other
    pods: which label the policy wants that the client lacks."""
    rows = {r.get("NAME"): r for rec in ctx.lists for r in parse.table(rec.output) if r.get("LABELS")}
    pod_labels = {name: labels(r.get("LABELS")) or {} for name, r in rows.items()}
    failing = [
        log for log in ctx.logs if re.search(r"(?i)time ?out|timed out|refused|unreachable", log.output[-100_000:])
    ]
    out: list[Finding] = []
    for s in ctx.seen:
        policy = read_policy(s.rec.output) if s.kind == "NetworkPolicy" and s.role is Role.DESCRIBE else None
        if policy is None:
            continue
        targets = [n for n, lab in pod_labels.items() if matches(policy.selector, lab)]
        for log in failing:
            client = str(log.args.get("name") or "")
            if (
                client not in pod_labels
                or not targets
                or not blocks_ingress(policy, pod_labels[targets[0]], pod_labels[client])
            ):
                continue
            wanted = ", ".join(f"{k}={v}" for peer in policy.ingress_from if peer for k, v in peer.items())
            has = ",".join(f"{k}={v}" for k, v in pod_labels[client].items() if k != "pod-template-hash")
            out.append(
                Finding(
                    rule="network_policy_blocks",
                    subject=policy.name,
                    cause=f"NetworkPolicy {policy.name} lets into pods {_show(policy.selector)} only traffic from pods "
                    f"labelled {wanted or 'nothing'}; pod {client} ({has}) is not, so its connections are dropped.",
                    evidence=[ev(s.rec, policy.quote or "PodSelector:"), ev(log, _last_match(log.output))],
                    remediation=[
                        (
                            f"allow the client in NetworkPolicy {policy.name} (add a `from` podSelector that matches "
                            f"{client}'s labels, e.g. {has.split(',')[-1] if has else 'its app label'}), or label the "
                            f"client with {wanted or 'the label the policy expects'}"
                        )
                    ],
                    confidence=0.85,
                )
            )
            break
    return out


def _show(selector: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in selector.items()) if selector else "(all)"


def _last_match(output: str) -> str:
    return next(
        (
            ln.strip()
            for ln in reversed(output.splitlines()[-500:])
            if re.search(r"(?i)time ?out|timed out|refused", ln)
        ),
        "",
    )


_UNRESOLVED_HOST = re.compile(
    r"(?i)(?:host='|resolve '|lookup |resolve host:? |getaddrinfo \w+ )([a-z0-9][-a-z0-9.]{0,252})|"
    r"([a-z0-9][-a-z0-9.]{0,252}): (?:Name or service not known|no such host|Temporary failure)"
)


def _configured_hosts(ctx: Context) -> list[Finding]:
    """A host the logs cannot resolve, configured in a ConfigMap (or the pod's env): where to fix it."""
    bad: dict[str, tuple[CallRecord, str]] = {}
    for log in ctx.logs:
        for line in log.output[-100_000:].splitlines()[-500:]:
            if not re.search(r"(?i)resolv|NameResolution|no such host|not known|getaddrinfo", line):
                continue
            for m in _UNRESOLVED_HOST.finditer(line[:1000]):
                host = (m.group(1) or m.group(2) or "").rstrip(".")
                if host and host not in bad and not re.fullmatch(r"[\d.]+", host):
                    bad[host] = (log, line.strip())
    services = sorted(
        {
            r.get("NAME")
            for s in ctx.seen
            if s.kind == "Service" and s.role is Role.LIST
            for r in parse.table(s.rec.output)
        }
        - {""}
    )
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind not in ("ConfigMap", "Pod") or s.role not in (Role.DESCRIBE, Role.POD_GET) or s.rec.is_error:
            continue
        for host, (log, said) in bad.items():
            line = parse.line_matching(s.rec.output[:200_000], rf"(?<![-\w.]){re.escape(host)}(?![-\w])")
            if not line or line == said:
                continue
            where = f"{s.kind} {s.name}"
            hint = f" (Services in the namespace: {', '.join(services[:6])})" if services else ""
            out.append(
                Finding(
                    rule="configured_bad_host",
                    subject=s.name,
                    cause=f"The host `{host}` that the logs cannot resolve is configured in {where}: `{line[:160]}`; "
                    "no Service of that name answers.",
                    evidence=[ev(s.rec, line), ev(log, said)],
                    remediation=[
                        (
                            f"fix the host in {where} to the Service the app should call{hint}, then restart the pods "
                            "(environment from a ConfigMap is read at start)"
                        )
                    ],
                    confidence=0.85,
                )
            )
    return out


def _object_states(ctx: Context) -> list[Finding]:
    """What each object's output says (object_state): conditions, containers, limits against use, dates against
    the alert's time, Warning events. Event listings count only for the objects this investigation is about."""
    when = _alert_time(ctx.state.alert)
    out: list[Finding] = []
    for s in ctx.seen:
        if s.role in (Role.DESCRIBE, Role.POD_GET):
            out += state_findings(s.rec, when)
        elif s.role is Role.EVENTS:
            out += [f for f in state_findings(s.rec, when) if ctx.related(f.subject.split("/", 1)[-1].split(" ")[0])]
    return out


def _alert_time(alert: dict[str, object]) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(alert.get("starts_at") or ""))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _ranked_logs(ctx: Context) -> list[Finding]:
    """What each log read says, ranked by error-likeness and rarity (log_signals): the first error after a start,
    the most repeated error, connection/DNS/pool/permission failures, with the cause and fix of their category."""
    out: list[Finding] = []
    for rec in ctx.logs:
        pod = str(next((s.name for s in ctx.seen if s.rec is rec), "") or rec.args.get("name") or "the container")
        out += log_findings(rec, f"Pod {pod}")
    return out


_RULES: tuple[Callable[[Context], list[Finding]], ...] = (
    _missing_references,
    _service_selectors,
    _near_miss_names,
    _heartbeat,
    _container_states,
    _events,
    log_lines,
    network,
    _ranked_logs,
    _object_states,
    _volume_space,
    _unprovisioned_claims,
    _rbac_gaps,
    _lost_nodes,
    _policies_dropping,
    _configured_hosts,
    _throttling,
    traces,
    latency,
    http_errors,
    _job_status,
    _exit_codes,
)
