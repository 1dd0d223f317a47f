"""What a pod's description says of its containers: OOMKilled, a command not found, a crash loop, an image that
cannot be pulled, an exit code with the last log lines, a CPU limit that throttles; and a Job whose pods all failed."""

from __future__ import annotations

import difflib
import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.vocabulary import KNOWN_COMMANDS


def container_states(ctx: Context) -> list[Finding]:
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


def throttling(ctx: Context) -> list[Finding]:
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


def exit_codes(ctx: Context) -> list[Finding]:
    """A container that exits with an error code, with the last lines its logs printed."""
    out: list[Finding] = []
    for rec in ctx.pods:
        pod = str(rec.args.get("name"))
        for c in parse.containers(rec.output):
            code = c.value("Exit Code")
            if code and code not in ("0", "137"):
                logs = [lg for lg in ctx.logs if lg.args.get("name") == pod and lg.output.strip()]
                lines = logs[0].output.splitlines() if logs else []
                tail = [ln.strip() for ln in lines[-200:] if ln.strip() and "has not logged any message" not in ln][-4:]
                # What a program prints just before it exits with an error is its own account of why: a cause
                # candidate, below anything a rule recognises.
                out.append(
                    Finding(
                        rule="exit_code",
                        subject=pod,
                        cause=f"Container {c.name} of pod {pod} exits with code {code}"
                        + (f"; what it printed last says why: {' / '.join(t[:200] for t in tail)}" if tail else "."),
                        evidence=[ev(rec, c.line_with(r"Exit Code:"))] + [ev(logs[0], t) for t in tail if logs],
                        remediation=[
                            (
                                "Fix what those last lines say (configuration, the contents of a mounted volume, a "
                                "dependency, the code), then let the pod restart."
                            )
                        ],
                        confidence=0.5 if tail else 0.4,
                        symptom=not tail,
                    )
                )
    return out


def job_status(ctx: Context) -> list[Finding]:
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


_NO_LOGS = re.compile(r"(?i)has not logged any message|no logs? (?:found|available|yet)|^\s*$")


def silent_exits(ctx: Context) -> list[Finding]:
    """A container that exits with an error and prints nothing: its logs cannot say why, its command can."""
    out: list[Finding] = []
    for rec in ctx.pods:
        pod = str(rec.args.get("name"))
        logs = [x for x in ctx.logs if x.args.get("name") == pod]
        if not logs or not all(_NO_LOGS.search(x.output[:2_000]) and len(x.output) < 2_000 for x in logs):
            continue
        for c in parse.containers(rec.output[:200_000]):
            code = c.value("Exit Code", after="Last State:") or c.value("Exit Code")
            if c.init or code in ("", "0", "137") or c.last_reason() == "OOMKilled":
                continue
            command = " ".join(c.command())
            out.append(
                Finding(
                    rule="silent_exit",
                    subject=pod,
                    cause=f"Container {c.name} of pod {pod} exits with code {code} and writes no log output at all "
                    "(its current and previous logs are empty), so the logs cannot say why: the failure is in what "
                    "it runs" + (f" (`{command[:120]}`)" if command else "") + ", before it logs anything.",
                    evidence=[
                        ev(rec, c.line_with(r"Exit Code:")),
                        ev(logs[0], logs[0].output.strip()[:200] or "(empty)"),
                    ]
                    + ([ev(rec, f"Command: {command[:200]}")] if command else []),
                    remediation=[
                        (
                            "Run the container's command by hand to see its error (`kubectl debug` with a copy of the "
                            "pod, or the image with a shell), and make it log why it exits; then fix the script or "
                            "the configuration it reads."
                        )
                    ],
                    confidence=0.7,
                )
            )
    return out
