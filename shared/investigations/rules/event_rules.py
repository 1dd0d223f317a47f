"""What the events say of the objects under investigation: an image the registry refuses, a pod no node takes, a
failing probe read against the pod's spec, a Job out of retries, missing config, a volume that does not mount."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.scheduling_rules import scheduling
from shared.investigations.rules.state import CallRecord, Finding

_PULL = re.compile(r'Failed to pull image "([^"]+)": (.*)')


def event_findings(ctx: Context) -> list[Finding]:
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
            out.append(scheduling(rec, e, ctx))
        elif re.search(r"(?i)(liveness|readiness|startup) probe failed", e.message):
            out.append(probe(rec, e, next((r for r in ctx.pods if r.args.get("name") == e.obj_name), None)))
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
            meaning, fix = _volume_meaning(e.message)
            said = _telling_part(e.message) if meaning else e.message
            cause = (
                f"{e.obj_name}: {meaning} ({e.reason}: `{said}`)" + _bound_claims(ctx, e.message)
                if meaning
                else f"{e.obj_name}: volume problem ({e.reason}): {e.message}"
            )
            out.append(
                Finding(
                    rule="volume",
                    subject=e.obj_name,
                    cause=cause,
                    evidence=[ev(rec, e.message)],
                    remediation=[fix],
                    confidence=0.85 if meaning else 0.8,
                )
            )
    return out


def _telling_part(message: str) -> str:
    """The part of a long mount error that says why (its last sentence with `mount`, `bad option` or `helper`)."""
    parts = [p.strip() for p in re.split(r"(?<=[.;])\s+(?=[A-Z])", message[:4000]) if p.strip()]
    telling = [p for p in parts if re.search(r"(?i)helper|bad option|wrong fs|multi-attach|not found|denied", p)]
    part = telling[-1] if telling else message
    return part if len(part) <= 240 else "…" + part[-239:]  # the reason is at the end of a mount error


def _bound_claims(ctx: Context, message: str) -> str:
    """A mount that fails for a claim that is Bound: provisioning worked, the node's mount does not."""
    if not re.search(r"(?i)MountVolume|mount failed", message):
        return ""
    for s in ctx.seen:
        if (
            s.kind == "PersistentVolumeClaim"
            and not s.rec.is_error
            and re.search(r"(?m)^Status:\s+Bound|^[ \t]*phase:\s*Bound", s.rec.output[:50_000])
        ):
            return f"; its claim {s.name} is Bound (provisioning worked): the mount on the node is what fails"
    return ""


def _volume_meaning(message: str) -> tuple[str, str]:
    """What a volume event's wording means, and its fix; ("", the generic fix) when the wording is not known."""
    if "Multi-Attach error" in message:
        return (
            (
                "the volume is ReadWriteOnce (one node at a time) and still attached to another pod's node: a rolling "
                "update starts the new pod before the old one lets go"
            ),
            (
                "for a Deployment with a ReadWriteOnce volume use strategy Recreate (or maxSurge: 0), or move to a "
                "ReadWriteMany volume; delete the old pod if it is stuck"
            ),
        )
    if re.search(r"mount\.<type> helper program|mount\.nfs|mount\.cifs|wrong fs type, bad option", message):
        return (
            "the node cannot mount this filesystem type: its mount helper (the NFS/CIFS client) is not installed",
            (
                "install the filesystem's client on the nodes (nfs-common / nfs-utils for NFS, cifs-utils for CIFS) or "
                "use nodes whose image has it"
            ),
        )
    return "", (
        "Check the PersistentVolumeClaim: its StorageClass exists and can provision, or a matching "
        "PersistentVolume is available; fix the claim or the class."
    )


_PROBE_LINE = re.compile(r"^\s*(Liveness|Readiness|Startup):\s+(\S+)\s+(\S+)")
_EXEC = re.compile(r"exec \[([^\]]{1,300})\]")
# A probe command that exits non-zero whatever the app does.
_ALWAYS_FAILS = re.compile(r"(?:^|[\s;&|])(?:exit [1-9]\d{0,2}|false)(?:$|[\s;&|])")


def probe(rec: CallRecord, e: parse.Event, pod_rec: CallRecord | None) -> Finding:
    """A failing probe, read against the pod's own spec: a port nothing listens on, a path that answers 404/5xx,
    a timeout, each with its fix; the generic advice when the pod's spec was not read."""
    pod = pod_rec.output[:200_000] if pod_rec is not None else ""
    kind_m = re.search(r"(?i)(liveness|readiness|startup)", e.message)
    kind = kind_m.group(1).capitalize() if kind_m else "Liveness"
    spec = next((m for line in pod.splitlines() if (m := _PROBE_LINE.match(line)) and m.group(1) == kind), None)
    target = spec.group(3) if spec else ""  # http://:8080/healthz or :8080
    probe_port = (re.search(r":(\d{1,5})", target) or re.search(r"(\d{1,5})", target) or [None, ""])[1]
    ports = set(re.findall(r"^[ \t]*Port:\s+(\d{1,5})/", pod, re.MULTILINE))
    status = re.search(r"statuscode: (\d{3})", e.message)
    line = next((ln.strip() for ln in pod.splitlines() if spec and ln.strip().startswith(kind + ":")), "")
    evidence = [ev(rec, e.message)] + ([ev(pod_rec, line or spec.group(0).strip())] if spec and pod_rec else [])
    where = f"The {kind.lower()} probe of {e.obj_name}"
    exec_cmd = _EXEC.search(line) if spec and spec.group(2) == "exec" else None
    if exec_cmd is not None:
        command = exec_cmd.group(1)
        never = bool(_ALWAYS_FAILS.search(command))
        cause = f"{where} runs `{command}` in the container and it exits non-zero" + (
            ": that command can never succeed, so the pod never becomes ready" if never
            else " (the command's own check fails; an empty message means it printed nothing)"
        )  # fmt: skip
        fix = (
            f"replace the {kind.lower()} probe's command with a real health check (one that exits 0 when the app is "
            f"healthy), or remove the probe"
            if never
            else f"run `{command}` in the container (kubectl exec) to see why it fails, then fix the check or the app"
        )
        conf = 0.85 if never else 0.7
    elif probe_port and ports and probe_port not in ports and re.search(r"(?i)refused|no route|reset", e.message):
        shown = ", ".join(sorted(ports))
        cause = f"{where} checks port {probe_port}, but the container listens on port {shown}: the probe fails"
        fix = f"point the {kind.lower()} probe at the port the app listens on ({shown}), not {probe_port}"
        conf = 0.85
    elif re.search(r"(?i)connection refused", e.message):
        cause = (
            f"{where} finds nothing listening on port {probe_port or 'its port'} yet: the app is still starting "
            "(slow start) or has stopped when the probe runs"
        )
        fix = (
            f"if the app is slow to start, add a startupProbe (or raise initialDelaySeconds / failureThreshold) so "
            f"the {kind.lower()} probe waits for it; if it stopped, read its logs"
        )
        conf = 0.7
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
