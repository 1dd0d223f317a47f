"""Evidence rules over logs and traces: causes written in logs, DNS and connection errors, latency, 5xx."""

from __future__ import annotations

import difflib
import json
import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.vocabulary import KNOWN_COMMANDS

_LOG_RULES: tuple[tuple[str, str, str, str, float], ...] = (
    # rule, regex, cause template ({q} is the quoted line), remediation, confidence
    (
        "dns_forwarding_loop",
        r"\[FATAL\] plugin/loop: Loop .{1,200} detected for zone",
        "CoreDNS forwards queries back to itself (a forwarding loop), so it exits: {q}",
        (
            "CoreDNS's upstream is the node's /etc/resolv.conf, which points at a local stub resolver "
            "(systemd-resolved 127.0.0.53): point the kubelet's --resolv-conf at the real file "
            "(/run/systemd/resolve/resolv.conf) or give CoreDNS's forward plugin real upstream DNS servers."
        ),
        0.9,
    ),
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
            "test it with `sh -n`, then recreate the workload."
        ),
        0.9,
    ),
    (
        "missing_file",
        r"(?i)no such file or directory|file not found|(?:could not|cannot|can't|failed to) open (?:file )?[`'\"]?/",
        "The container cannot open a file it needs, so it exits: {q}",
        (
            "Add the file to the image or mount it at that path (ConfigMap, Secret or volume), or fix the path "
            "in the configuration; then restart the pod."
        ),
        0.75,
    ),
    (
        "permission_denied",
        r"(?i)permission denied|\bEACCES\b|operation not permitted",
        "The container is refused access it needs: {q}",
        "Fix the file's owner or mode, or the pod's securityContext (runAsUser, fsGroup, readOnlyRootFilesystem).",
        0.7,
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
    # A name starts where its word starts: from every letter of a long word, the name rescanned the word.
    r"|(?<![A-Z0-9_])([A-Z_][A-Z0-9_]{2,}) (?:must be set|is not set|not set)"
)


# Possessive (`*+`, `++`): a word is all of its characters, so nothing is lost by not giving them back, and a
# long run of punctuation no longer splits into every pair of prefix and word (quadratic in the line).
_FATAL = re.compile(
    r"(?i)^\W*+(?:\S++\s++){0,3}?(?:FATAL|PANIC|CRITICAL)\b|^\s*panic: |^\s*fatal error: |"
    r"^(?:\w+\.)*\w*(?:Error|Exception): \S"
)


def _last_fatal(output: str) -> str:
    """The last line that says the program is dying (FATAL/PANIC/CRITICAL, a Go panic, an exception line)."""
    lines = [line.strip() for line in output.splitlines()[-200:] if _FATAL.search(line)]
    return lines[-1][:300] if lines else ""


# Lines that carry on the one before: `[1]: reason`, `Caused by: ...`, `reason: ...`, an indented detail.
_CONTINUATION = re.compile(r"^(?:\s*\[\d{1,3}\]\s*:|\s*Caused by:|\s*reason:|\s+\S)")


def _reason_after(output: str, line: str) -> str:
    """The line that explains a fatal one (`bootstrap checks failed` then `[1]: max virtual memory areas ...`)."""
    lines = output.splitlines()[-200:]
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() == line), -1)
    follow = lines[at + 1] if 0 <= at < len(lines) - 1 else ""
    return follow.strip()[:300] if follow.strip() and _CONTINUATION.match(follow) else ""


def log_lines(ctx: Context) -> list[Finding]:
    """Causes written in the logs: expired certificates, syntax errors, missing commands and variables."""
    out: list[Finding] = []
    for rec in ctx.logs:
        pod = str(rec.args.get("name"))
        for rule, pattern, cause, fix, conf in _LOG_RULES:
            line = parse.line_matching(rec.output, pattern)
            if not line:
                continue
            f = Finding(rule=rule, subject=pod, cause=f"Pod {pod}: " + cause.format(q=line), remediation=[fix],
                        evidence=[ev(rec, line)], confidence=conf)  # fmt: skip
            if rule == "command_not_found":
                cmd = re.search(pattern, line)
                word = cmd.group(1) if cmd else ""
                close = difflib.get_close_matches(word, KNOWN_COMMANDS, n=1, cutoff=0.6)
                if close and close[0] != word:
                    f.cause += f' "{word}" looks like a typo: the intended command is probably `{close[0]}`.'
                    f.remediation = [f"Replace `{word}` with `{close[0]}` in the command."]
            if rule == "cert_expired":
                extra = parse.line_matching(rec.output, r"(?i)expired on|notAfter|expir\w+ (at|on)")
                if extra and extra != line:
                    f.evidence.append(ev(rec, extra))
            out.append(f)
        fatal = _last_fatal(rec.output)
        if fatal and not any(f.subject == pod and f.evidence and f.evidence[0].quote == fatal for f in out):
            why = _reason_after(rec.output, fatal)
            out.append(
                Finding(
                    rule="fatal_log",
                    subject=pod,
                    cause=f"Pod {pod}: the application stops on an error its log names: {fatal}"
                    + (f" — {why}" if why else ""),
                    evidence=[ev(rec, fatal)] + ([ev(rec, why)] if why else []),
                    remediation=["Fix what that log line names (configuration, a dependency, the code), then restart."],
                    confidence=0.55,
                )
            )
        m = _ENV_VAR.search(rec.output)
        var = next(g for g in m.groups() if g and g.isupper()) if m else ""
        line = parse.line_matching(rec.output, re.escape(var)) if var else ""
        # "X not set, tracing disabled": an optional setting the app does without is not why it fails.
        if line and not _OPTIONAL.search(line):
            out.append(
                Finding(
                    rule="env_missing",
                    subject=pod,
                    cause=f"The environment variable {var} is undefined (missing from the pod spec), so the "
                    f"container of pod {pod} exits: {line}",
                    evidence=[ev(rec, line)],
                    remediation=[f"Set {var} in the container's env (or the ConfigMap/Secret it comes from)."],
                    confidence=0.9,
                )
            )
    return out


_OPTIONAL = re.compile(
    r"(?i)disabled|skipping|using (?:the )?default|defaulting to|falling back|fallback|optional|ignored"
)

_CONN = re.compile(
    r"(?i)(connection refused|no available connection|failed to connect|could not connect|can't connect|"
    r"unable to connect|connection timed out|connect: |ECONNREFUSED|All host\(s\) tried)"
)
_DNS = re.compile(
    r"(?i)NameResolutionError|Failed to resolve|Temporary failure in name resolution|NXDOMAIN|no such host|"
    r"could not resolve host|Name or service not known|server misbehaving"
)
_HOST = re.compile(r"(?:host='|resolve '|tried: |lookup |host )([a-z0-9][-a-z0-9.]*)(?::(\d+))?")


def network(ctx: Context) -> list[Finding]:
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
                evidence=[ev(rec, dns)],
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
                    f.evidence += [ev(pol, f"name: {pname}"), ev(pol, parse.line_matching(pol.output, "egress"))]
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
                evidence=[ev(rec, conn)],
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


def latency(ctx: Context) -> list[Finding]:
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
            evidence=[ev(rec, line)] + ([ev(rec, before)] if before else []),
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
        except (ValueError, RecursionError, AttributeError):  # a log line is anything: deep nesting, a list
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


def _callers(ctx: Context) -> dict[str, set[str]]:
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


def http_errors(ctx: Context) -> list[Finding]:
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
                    evidence=[ev(rec, h) for h in hits[:2]],
                    remediation=[
                        "Find the failing dependency or the rate limit behind the errors and fix or scale it."
                    ],
                    confidence=0.6,
                )
            )
    return out


def traces(ctx: Context) -> list[Finding]:
    """The slowest span with a database statement in fetched traces."""
    best: tuple[float, CallRecord, str, str] | None = None
    for rec in ctx.tempo:
        # One class for the indentation, and no line break in it: `\s*[├└│ ]*` split every run of blanks both ways.
        blocks = re.split(r"\n(?=[├└│ \t]*─ )", rec.output)
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
            evidence=[ev(rec, f"{service} - {ms}ms"), ev(rec, f"db.statement: {stmt}")],
            remediation=[f"Optimise the query in {service} (index, narrower SELECT, caching)."],
            confidence=0.85,
        )
    ]
