"""Evidence rules: what the tool outputs say (OOMKilled, exit codes, pull errors, scheduling, DNS, latency...)."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable

from shared.investigations.rules import parse
from shared.investigations.rules.planner import is_heartbeat
from shared.investigations.rules.state import CallRecord, Evidence, Finding, InvestigationState, Target, target_of

# Commands a container commonly runs; a "not found" command close to one of them is a typo.
_KNOWN_COMMANDS = (
    "wget", "curl", "bash", "sh", "python", "python3", "node", "npm", "java", "nginx", "echo", "sleep", "cat",
    "ls", "cp", "mv", "tar", "gzip", "grep", "sed", "awk", "apt-get", "apk", "pip", "sh", "env", "printf",
    "mkdir", "chmod", "chown", "nc", "ping", "nslookup", "dig", "psql", "mysql", "redis-cli", "kubectl",
)  # fmt: skip


def _ev(rec: CallRecord, quote: str) -> Evidence:
    return Evidence(tool=rec.tool, args=rec.args, quote=quote[:300])


def _is_pod_doc(rec: CallRecord) -> bool:
    return rec.tool == "pods_get" or (rec.tool == "resources_get" and rec.args.get("kind") == "Pod")


class _Ctx:
    """The calls grouped by what they hold, and the names of the objects this investigation is about."""

    def __init__(self, state: InvestigationState) -> None:
        self.state = state
        self.target: Target = target_of(state.alert)
        ok = [c for c in state.calls if not c.is_error]
        self.pods = [c for c in ok if _is_pod_doc(c)]
        self.logs = [c for c in ok if c.tool == "pods_log"]
        self.events = [c for c in ok if c.tool == "events_list"]
        self.gets = [c for c in ok if c.tool == "resources_get"]
        self.lists = [c for c in ok if c.tool in ("resources_list", "pods_list_in_namespace", "pods_list")]
        self.tempo = [c for c in ok if c.tool.startswith("tempo_")]
        t = self.target
        self.names = {n for n in (t.pod, t.deployment, t.statefulset, t.daemonset, t.job, t.node, t.pvc) if n}
        self.prefixes = {n + "-" for n in (t.deployment, t.statefulset, t.daemonset, t.job) if n}
        for c in self.pods + self.logs:
            self.names.add(str(c.args.get("name")))
        for c in self.lists:
            if c.args.get("labelSelector"):
                self.names |= {r.get("NAME") for r in parse.table(c.output)}

    def related(self, obj_name: str) -> bool:
        """Is this object one of the alerted objects (or a pod of the alerted workload)?"""
        return obj_name in self.names or any(obj_name.startswith(p) for p in self.prefixes)

    def related_events(self) -> list[tuple[CallRecord, parse.Event]]:
        """Events of the alerted objects, from event listings and from the descriptions' Events sections."""
        out = [(c, e) for c in self.events for e in parse.events(c.output) if self.related(e.obj_name)]
        for c in self.pods + self.gets:
            out += [(c, e) for e in parse.events(c.output, f"{c.args.get('kind', 'Pod')}/{c.args.get('name')}")]
        return out


def findings(state: InvestigationState) -> list[Finding]:
    """Every finding the evidence rules draw from the calls made, strongest first (deterministic order)."""
    ctx = _Ctx(state)
    found: list[Finding] = []
    for rule in _RULES:
        found += rule(ctx)
    seen: set[tuple[str, str]] = set()
    unique: list[Finding] = []
    for f in found:
        if (f.rule, f.subject) not in seen:
            seen.add((f.rule, f.subject))
            unique.append(f)
    return sorted(unique, key=lambda f: (f.symptom, -f.confidence))


def _heartbeat(ctx: _Ctx) -> list[Finding]:
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
            evidence=_alert_lines(ctx, r"(?i)always (be )?firing|alerting pipeline"),
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


def _alert_lines(ctx: _Ctx, pattern: str) -> list[Evidence]:
    """Lines of the alert's annotations (and runbook) that say something, quoted as evidence."""
    text = "\n".join(str(v) for v in (ctx.state.alert.get("annotations") or {}).values())
    lines = parse.lines_matching(text, pattern)[:1] + parse.lines_matching(ctx.state.runbook or "", pattern)[:1]
    return [Evidence(tool="alert" if i == 0 else "runbook", quote=q) for i, q in enumerate(lines)]


def _container_states(ctx: _Ctx) -> list[Finding]:
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
                evidence=[_ev(rec, c.line_with(r"Image:")), _ev(rec, c.line_with(r"Reason:"))],
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
                evidence=[_ev(rec, c.line_with(r"Reason:\s+CrashLoopBackOff"))]
                + ([_ev(rec, c.line_with(r"Exit Code:"))] if exit_code else []),
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
                    evidence=[_ev(rec, c.line_with(r"Reason:\s+Completed")), _ev(rec, c.line_with(r"Exit Code:"))],
                    remediation=["Make the command run in the foreground, or check why it decides to stop."],
                    confidence=0.45,
                    symptom=True,
                )
            )
    return out


def _oom(rec: CallRecord, pod: str, c: parse.Container | None) -> Finding:
    limit = c.quantity("Limits", "memory") if c else ""
    name = f"container {c.name} of " if c else ""
    evidence = [_ev(rec, c.line_with(r"Reason:\s+OOMKilled") if c else "OOMKilled")]
    if c and c.value("Exit Code") == "137":
        evidence.append(_ev(rec, c.line_with(r"Exit Code:\s+137")))
    if limit:
        evidence.append(_ev(rec, f"Limits: memory: {limit}"))
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
    close = difflib.get_close_matches(cmd, _KNOWN_COMMANDS, n=1, cutoff=0.6)
    typo = f" `{cmd}` looks like a typo: the intended command is probably `{close[0]}`." if close else ""
    kind = "init container" if c.init else "container"
    return Finding(
        rule="command_not_found",
        subject=pod,
        cause=f'The {kind} {c.name} of pod {pod} runs the command "{cmd}", which is not found '
        f"(executable file not found in $PATH).{typo}",
        evidence=[_ev(rec, quote), _ev(rec, f"Command: {' '.join(c.command())}")],
        remediation=[
            f"Fix the command in the pod spec: replace `{cmd}` with `{close[0]}`."
            if close
            else f"Fix the command `{cmd}` in the pod spec, or use an image that contains it."
        ],
        confidence=0.9,
    )


_PULL = re.compile(r'Failed to pull image "([^"]+)": (.*)')


def _events(ctx: _Ctx) -> list[Finding]:
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
                    evidence=[_ev(rec, e.message)],
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
            probe = re.search(r"(?i)(liveness|readiness|startup)", e.message)
            out.append(
                Finding(
                    rule="probe",
                    subject=e.obj_name,
                    cause=f"The {probe.group(1).lower() if probe else ''} probe of {e.obj_name} fails: {e.message}",
                    evidence=[_ev(rec, e.message)],
                    remediation=[
                        (
                            "Check the probe's path, port and timeout against the app; raise initialDelaySeconds or "
                            "timeoutSeconds if the app is slow to answer, or fix the endpoint."
                        )
                    ],
                    confidence=0.75,
                )
            )
        elif e.reason == "BackoffLimitExceeded" or "backoff limit" in e.message:
            out.append(
                Finding(
                    rule="job_backoff",
                    subject=e.obj_name,
                    cause=f"Job {e.obj_name} failed: it reached its backoff limit (BackoffLimitExceeded).",
                    evidence=[_ev(rec, e.line)],
                    remediation=["Fix the cause of the pod failures, then delete and re-create the Job."],
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
                    evidence=[_ev(rec, e.message)],
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
                    evidence=[_ev(rec, e.message)],
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


def _scheduling(rec: CallRecord, e: parse.Event, ctx: _Ctx) -> Finding:
    found = re.findall(r"\d+ (Insufficient [\w./-]+|Too many pods|node\(s\) [^,.]+)", e.message)
    reasons = [r.rstrip(".") for r in found]
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
            fixes.append(f"check taints, affinity and node selectors ({r})")
    return Finding(
        rule="scheduling",
        subject=e.obj_name,
        cause=f"Pod {e.obj_name} cannot be scheduled (Pending, FailedScheduling): {what}.",
        evidence=[_ev(rec, e.message)],
        remediation=fixes or ["Check the pod's requests, node selectors, affinity and taints against the nodes."],
        confidence=0.9,
    )


def _nodes(ctx: _Ctx) -> list[Finding]:
    """Node conditions and pod capacity, from node descriptions."""
    out: list[Finding] = []
    for rec in ctx.gets:
        if rec.args.get("kind") != "Node":
            continue
        node = str(rec.args.get("name"))
        running = re.search(r"Non-terminated Pods:\s+\((\d+) in total\)", rec.output)
        alloc = re.search(r"Allocatable:(?:\n\s+.*)*?\n\s+pods:\s+(\d+)", rec.output)
        if running and alloc and int(running.group(1)) >= int(alloc.group(1)):
            n, cap = running.group(1), alloc.group(1)
            out.append(
                Finding(
                    rule="node_pods",
                    subject=node,
                    cause=f"Node {node} runs {n}/{cap} pods: it is at its pod capacity (max pods {cap}).",
                    evidence=[_ev(rec, running.group(0)), _ev(rec, f"Allocatable: pods: {cap}")],
                    remediation=[
                        "Add nodes (or a larger instance type, whose max pods is higher) so pods spread out",
                        "raise the kubelet's maxPods if the CNI allows it; remove unneeded pods.",
                    ],
                    confidence=0.85,
                )
            )
        pressure = parse.lines_matching(rec.output, r"^\s*(MemoryPressure|DiskPressure|PIDPressure)\s+True\b")
        out += [_node_condition(rec, node, line, "under " + line.split()[0]) for line in pressure]
        not_ready = parse.lines_matching(rec.output, r"^\s*Ready\s+(False|Unknown)\b")
        out += [_node_condition(rec, node, line, "not Ready") for line in not_ready]
    return out


def _node_condition(rec: CallRecord, node: str, line: str, what: str) -> Finding:
    return Finding(
        rule="node_condition",
        subject=node + what,
        cause=f"Node {node} is {what}.",
        evidence=[_ev(rec, line)],
        remediation=["Check the kubelet and the node's resources; drain and repair or replace the node."],
        confidence=0.8,
    )


def _throttling(ctx: _Ctx) -> list[Finding]:
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
                    evidence=[_ev(rec, f"Limits: cpu: {limit}")] + ([_ev(rec, f"Command: {cmd}")] if cmd else []),
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
    m = re.search(r"limits:\s*\n\s+cpu:\s*(\S+)", text)
    return m.group(1).strip("\"'") if m else ""


_LOG_RULES: tuple[tuple[str, str, str, str, float], ...] = (
    # rule, regex, cause template ({q} is the quoted line), remediation, confidence
    (
        "cert_expired",
        r"(?i)certificate (has )?expired|x509: certificate has expired|ExpiredCert|cert(ificate)? expired",
        "The TLS/SSL certificate has expired (certificate expired): {q}",
        (
            "Renew the certificate and update the Secret/ConfigMap that holds it, then restart the pod; "
            "monitor certificate expiry (e.g. cert-manager)."
        ),
        0.9,
    ),
    (
        "syntax_error",
        r"(?i)syntax error",
        "The container's shell script has a syntax error: {q}",
        (
            "Fix the script in the command/args (an unmatched keyword such as a stray `fi` or a missing `if`/`then`), "
            "test it with `sh -n`, then re-create the workload."
        ),
        0.9,
    ),
    (
        "command_not_found",
        r"(?i)(?::|^) ?([\w.-]+): (command )?not found\b",
        "A command the container runs is not found: {q}",
        "Fix the command name in the pod spec or install it in the image.",
        0.85,
    ),
)

_ENV_VAR = re.compile(
    r"(?i)(?:environment variable|env var(?:iable)?|variable)\s+[`'\"]?([A-Z_][A-Z0-9_]*)[`'\"]?\s+"
    r"(?:is\s+)?(undefined|not set|missing|unset|not defined|is required|required)"
    r"|KeyError: '([A-Z_][A-Z0-9_]*)'"
    r"|([A-Z_][A-Z0-9_]{2,}) (?:must be set|is not set|not set)"
)


def _log_lines(ctx: _Ctx) -> list[Finding]:
    """Causes written in the logs: expired certificates, syntax errors, missing commands and variables."""
    out: list[Finding] = []
    for rec in ctx.logs:
        pod = str(rec.args.get("name"))
        for rule, pattern, cause, fix, conf in _LOG_RULES:
            line = parse.line_matching(rec.output, pattern)
            if not line:
                continue
            f = Finding(rule=rule, subject=pod, cause=f"Pod {pod}: " + cause.format(q=line), remediation=[fix],
                        evidence=[_ev(rec, line)], confidence=conf)  # fmt: skip
            if rule == "command_not_found":
                cmd = re.search(pattern, line)
                word = cmd.group(1) if cmd else ""
                close = difflib.get_close_matches(word, _KNOWN_COMMANDS, n=1, cutoff=0.6)
                if close and close[0] != word:
                    f.cause += f' "{word}" looks like a typo: the intended command is probably `{close[0]}`.'
                    f.remediation = [f"Replace `{word}` with `{close[0]}` in the command."]
            if rule == "cert_expired":
                extra = parse.line_matching(rec.output, r"(?i)expired on|notAfter|expir\w+ (at|on)")
                if extra and extra != line:
                    f.evidence.append(_ev(rec, extra))
            out.append(f)
        m = _ENV_VAR.search(rec.output)
        if m:
            var = next(g for g in m.groups() if g and g.isupper())
            line = parse.line_matching(rec.output, re.escape(var))
            out.append(
                Finding(
                    rule="env_missing",
                    subject=pod,
                    cause=f"The environment variable {var} is undefined (missing from the pod spec), so the "
                    f"container of pod {pod} exits: {line}",
                    evidence=[_ev(rec, line)],
                    remediation=[f"Set {var} in the container's env (or the ConfigMap/Secret it comes from)."],
                    confidence=0.9,
                )
            )
    return out


_CONN = re.compile(
    r"(?i)(connection refused|no available connection|failed to connect|could not connect|can't connect|"
    r"unable to connect|connection timed out|connect: |ECONNREFUSED|All host\(s\) tried)"
)
_DNS = re.compile(
    r"(?i)NameResolutionError|Failed to resolve|Temporary failure in name resolution|NXDOMAIN|no such host|"
    r"could not resolve host|Name or service not known|server misbehaving"
)
_HOST = re.compile(r"(?:host='|resolve '|tried: |lookup |host )([a-z0-9][-a-z0-9.]*)(?::(\d+))?")


def _network(ctx: _Ctx) -> list[Finding]:
    """DNS failures (and the NetworkPolicy that explains them), connection errors to host:port."""
    out: list[Finding] = []
    policies = [c for c in ctx.gets if c.args.get("kind") == "NetworkPolicy"]
    services = [c for c in ctx.lists if c.args.get("kind") == "Service"]
    for rec in ctx.logs:
        pod = str(rec.args.get("name"))
        dns = parse.line_matching(rec.output, _DNS.pattern)
        if dns:
            host = _HOST.search(dns)
            name = host.group(1) if host else "its dependencies"
            f = Finding(
                rule="dns",
                subject=pod,
                cause=f"Pod {pod} cannot resolve {name} (DNS lookup fails).",
                evidence=[_ev(rec, dns)],
                remediation=["Check CoreDNS/kube-dns pods and service, the pod's resolv.conf and the name itself."],
                confidence=0.7,
            )
            for pol in policies:
                # policyTypes names Egress and no rule allows any: everything, DNS included, is denied.
                denies_all = re.search(r"egress:\s*\[\]|^(?!.*egress:)", pol.output, re.DOTALL)
                if re.search(r"Egress", pol.output) and denies_all:
                    pname = pol.args.get("name")
                    f.cause = (
                        f"NetworkPolicy {pname} denies all egress from the pods it selects in namespace "
                        f"{pol.args.get('namespace')}, including DNS (port 53), so pod {pod} cannot resolve {name}."
                    )
                    f.evidence += [_ev(pol, f"name: {pname}"), _ev(pol, parse.line_matching(pol.output, "egress"))]
                    f.remediation = [
                        (
                            f"Add an egress rule to NetworkPolicy {pname} (or a new policy) allowing UDP/TCP 53 to "
                            "kube-dns in kube-system and traffic to the services the pod calls."
                        ),
                    ]
                    f.confidence = 0.9
            out.append(f)
            continue
        conn = parse.line_matching(rec.output, _CONN.pattern)
        if conn:
            host = _HOST.search(conn)
            target = f"{host.group(1)}:{host.group(2)}" if host and host.group(2) else (host.group(1) if host else "")
            f = Finding(
                rule="connection",
                subject=pod,
                cause=f"Pod {pod} cannot connect to {target or 'a dependency'}: {conn[:200].rstrip('.')}.",
                evidence=[_ev(rec, conn)],
                remediation=[
                    (
                        f"Check that {target or 'the dependency'} is up, reachable and correctly named (Service, "
                        "port, NetworkPolicy), and that its connection pool is not exhausted."
                    )
                ],
                confidence=0.8,
            )
            if host:
                for svc in services:
                    names = {r.get("NAME") for r in parse.table(svc.output)}
                    short = host.group(1).split(".")[0]
                    if names and short not in names:
                        # An absence cannot be quoted: the cause says how many services were listed instead.
                        f.cause += f" No Service named {short} is among the {len(names)} services of the namespace."
            out.append(f)
    return out


_SLOW_TEXT = re.compile(
    r"(?i)(?:completed|rendered|took|finished|done|duration)\D{0,20}?(\d+(?:\.\d+)?)\s*(s|sec|seconds|ms)\b"
)


def _latency(ctx: _Ctx) -> list[Finding]:
    """Slow requests or queries in logs; with several services, the slow one deepest in the call chain."""
    slow: dict[str, tuple[float, CallRecord, str]] = {}
    for rec in ctx.logs:
        pod = str(rec.args.get("name"))
        for line in rec.output.splitlines():
            secs = _duration(line)
            if secs is not None and secs >= 1.0 and (pod not in slow or secs > slow[pod][0]):
                slow[pod] = (secs, rec, line.strip())
    if not slow:
        return []
    calls = _callers(ctx)
    called = {callee for callees in calls.values() for callee in callees}
    # The time goes where a slow service calls no other slow service; one known to be called by another
    # service is deeper in the chain than one whose callers are unknown.
    leaves = [p for p in slow if not (calls.get(p, set()) & set(slow))] or list(slow)
    pod = max(leaves, key=lambda p: (p in called, slow[p][0], p))
    secs, rec, line = slow[pod]
    before = _context_line(rec.output, line)
    service = re.sub(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$", "", pod)
    return [
        Finding(
            rule="latency",
            subject=pod,
            cause=f"Requests are slow in {service} (pod {pod}): up to {secs:.1f} seconds per request"
            + (f"; the slow step: {before}" if before else "")
            + ("." if len(slow) == 1 else f" (the deepest slow service among {len(slow)} with slow requests)."),
            evidence=[_ev(rec, line)] + ([_ev(rec, before)] if before else []),
            remediation=[
                (
                    f"Find what {service} waits on in the slow requests (a database query or stored procedure, a lock, "
                    "an external call): trace or time it, then optimise, index or cache it."
                ),
                "Add a latency SLO alert per dependency so the slow hop is named directly.",
            ],
            confidence=0.7,
        )
    ]


def _duration(line: str) -> float | None:
    if '"responseTime"' in line:
        try:
            ms = json.loads(line).get("responseTime")
        except ValueError:
            return None
        return float(ms) / 1000 if isinstance(ms, int | float) else None
    m = _SLOW_TEXT.search(line)
    if not m:
        return None
    value = float(m.group(1))
    return value / 1000 if m.group(2).lower() == "ms" else value


def _context_line(output: str, line: str) -> str:
    """The log line before the slow one that names an operation (query, procedure, call)."""
    lines = [ln.strip() for ln in output.splitlines()]
    idx = lines.index(line) if line in lines else -1
    for prev in reversed(lines[max(0, idx - 4) : idx]):
        if re.search(r"(?i)query|procedure|select|calling|fetching|database|sql", prev):
            return prev
    return ""


def _callers(ctx: _Ctx) -> dict[str, set[str]]:
    """caller pod -> callee pods, from JSON access logs' remote addresses and the pod listings' IPs."""
    by_ip = {r.get("IP"): r.get("NAME") for c in ctx.lists for r in parse.table(c.output) if r.get("IP")}
    for c in ctx.pods:
        ip = parse.field_value(c.output, "IP")
        if ip:
            by_ip[ip] = str(c.args.get("name"))
    edges: dict[str, set[str]] = {}
    for rec in ctx.logs:
        for ip in sorted(set(re.findall(r'"remoteAddress":"([\d.]+)"', rec.output))):
            if ip in by_ip and by_ip[ip] != rec.args.get("name"):
                edges.setdefault(by_ip[ip], set()).add(str(rec.args.get("name")))
    return edges


def _http_errors(ctx: _Ctx) -> list[Finding]:
    """Bursts of 429 or 5xx answers in access logs."""
    out: list[Finding] = []
    for rec in ctx.logs:
        hits = parse.lines_matching(
            rec.output, r'" (429|5\d\d) |"statusCode":(429|5\d\d)|\bHTTP/\d(\.\d)? (429|5\d\d)\b'
        )
        if len(hits) >= 3:
            code = "429 (rate limited)" if any("429" in h for h in hits) else "5xx"
            out.append(
                Finding(
                    rule="http_errors",
                    subject=str(rec.args.get("name")),
                    cause=f"Pod {rec.args.get('name')} answers many {code} responses ({len(hits)} in the log tail).",
                    evidence=[_ev(rec, h) for h in hits[:2]],
                    remediation=[
                        "Find the failing dependency or the rate limit behind the errors and fix or scale it."
                    ],
                    confidence=0.6,
                )
            )
    return out


def _traces(ctx: _Ctx) -> list[Finding]:
    """The slowest span with a database statement in fetched traces."""
    best: tuple[float, CallRecord, str, str] | None = None
    for rec in ctx.tempo:
        blocks = re.split(r"\n(?=\s*[├└│ ]*─ )", rec.output)
        for block in blocks:
            head = re.search(r"─ (\S+) \(([^)]+)\) - ([\d.]+)ms", block)
            statement = re.search(r"db\.statement: (.*)", block)
            if head and statement and (best is None or float(head.group(3)) > best[0]):
                best = (float(head.group(3)), rec, head.group(2), statement.group(1).strip())
    if best is None:
        return []
    ms, rec, service, stmt = best
    return [
        Finding(
            rule="slow_query",
            subject=service,
            cause=f"{service} is slow because of a database query taking {ms / 1000:.1f} s: `{stmt}`.",
            evidence=[_ev(rec, f"{service} - {ms}ms"), _ev(rec, f"db.statement: {stmt}")],
            remediation=[f"Optimise the query in {service} (index, narrower SELECT, caching)."],
            confidence=0.85,
        )
    ]


def _exit_codes(ctx: _Ctx) -> list[Finding]:
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
                        evidence=[_ev(rec, c.line_with(r"Exit Code:"))] + [_ev(logs[0], t) for t in tail if logs],
                        remediation=["Read the error above and fix the application or its configuration."],
                        confidence=0.4,
                        symptom=True,
                    )
                )
    return out


def _job_status(ctx: _Ctx) -> list[Finding]:
    """A Job with failed pods and none succeeded."""
    out: list[Finding] = []
    for rec in ctx.gets:
        if rec.args.get("kind") != "Job":
            continue
        status = parse.field_value(rec.output, "Pods Statuses")
        m = re.search(r"(\d+) Succeeded / (\d+) Failed", status)
        if m and m.group(1) == "0" and m.group(2) != "0":
            limit = parse.field_value(rec.output, "Backoff Limit")
            out.append(
                Finding(
                    rule="job_backoff",
                    subject=str(rec.args.get("name")),
                    cause=f"Job {rec.args.get('name')} failed: {m.group(2)} pods failed, none succeeded"
                    + (f" (backoff limit {limit})." if limit else "."),
                    evidence=[_ev(rec, f"Pods Statuses: {status}")]
                    + ([_ev(rec, f"Backoff Limit: {limit}")] if limit else []),
                    remediation=["Fix the cause of the pod failures, then delete and re-create the Job."],
                    confidence=0.7,
                    symptom=True,
                )
            )
    return out


_RULES: tuple[Callable[[_Ctx], list[Finding]], ...] = (
    _heartbeat,
    _container_states,
    _events,
    _log_lines,
    _network,
    _nodes,
    _throttling,
    _traces,
    _latency,
    _http_errors,
    _job_status,
    _exit_codes,
)
