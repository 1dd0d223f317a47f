"""Container states: waiting and terminated reasons, exit codes with their meaning, restarts, the pod's own status."""

from __future__ import annotations

from shared.investigations.rules.object_view.events import explained
from shared.investigations.rules.object_view.messages import About, Meaning, meaning
from shared.investigations.rules.object_view.signal import label, make, subject
from shared.investigations.rules.object_view.view import ContainerView, ObjectView
from shared.investigations.rules.state import CallRecord, Finding

_STARTING = {"ContainerCreating", "PodInitializing", ""}
_PULL = {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"}
_CONFIG = {
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ContainerCannotRun",
    "StartError",
    "PreStartHookError",
    "PostStartHookError",
}
_RESTARTS = 3  # restarts at which a running container's restarts are worth reporting


def exit_meaning(code: int) -> str:
    """What an exit code usually means (128+n: killed by signal n)."""
    known = {
        0: "a normal exit",
        1: "an application error (the process reported a failure)",
        2: "misuse of a shell builtin or invalid arguments",
        126: "command found but not executable",
        127: "command not found",
        134: "SIGABRT: the process aborted",
        128: "the container runtime could not start the process",
        137: "SIGKILL: killed, by the OOM killer or by the kubelet",
        139: "SIGSEGV: a segmentation fault",
        143: "SIGTERM: asked to stop (a failed liveness probe, an eviction, a rollout or a node shutdown)",
        255: "a fatal error (exit status -1 / out of range)",
    }
    if code in known:
        return known[code]
    return f"killed by signal {code - 128}" if 128 < code < 160 else "an application-defined failure"


def _exit_fixes(c: ContainerView, code: int | None, reason: str) -> list[str]:
    limit = c.limits.get("memory", "")
    if reason == "OOMKilled":
        return [
            f"Raise the memory limit of {c.name}" + (f" above {limit}" if limit else "") + " (and its request) "
            "to what the process needs, or reduce its memory use (a leak, a cache, a batch size)."
        ]
    fixes = {
        0: f"{c.name}'s main process ends by itself and is restarted: make it run in the foreground (or run it as "
        "a Job if it is meant to finish).",
        1: f"Read the previous logs of {c.name} (the error it printed before exiting) and fix the application or "
        "its configuration.",
        2: f"Check the command and args of {c.name}: the shell or program rejected them.",
        126: f"Make the entrypoint of {c.name} executable (chmod +x) or fix its command.",
        127: f"Fix the command of {c.name}: a typo, or a binary the image does not contain.",
        137: f"{c.name} was killed (SIGKILL): if memory was short, raise its memory limit; otherwise check its "
        "liveness probe events and terminationGracePeriodSeconds.",
        139: f"{c.name} crashed in native code: check the image's architecture and its native libraries, and its "
        "previous logs.",
        143: f"{c.name} was asked to stop: check its liveness probe events (a failing probe restarts it), and that it "
        "handles SIGTERM.",
    }
    if code is None:
        return [f"Read the previous logs and the last state of {c.name}."]
    return [fixes.get(code, f"Read the previous logs of {c.name}: it exits with code {code} ({exit_meaning(code)}).")]


def findings(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """Findings from each container's state and from the pod's own status reason."""
    out: list[Finding] = []
    about = About(view.kind, view.name, view.namespace)
    for c in view.containers:
        out += _container(rec, view, c, about)
    out += _pod_status(rec, view, about)
    return out


def _where(view: ObjectView, c: ContainerView) -> str:
    return f"{'Init container' if c.init else 'Container'} {c.name} of {label(view)}"


def _container(rec: CallRecord, view: ObjectView, c: ContainerView, about: About) -> list[Finding]:
    out: list[Finding] = []
    where = _where(view, c)
    said = meaning(c.message or c.last_message, about) if (c.message or c.last_message) else None
    q = dict(c.quotes)
    if said is None and c.state == "Waiting" and c.reason not in _STARTING and c.reason != "CrashLoopBackOff":
        # A description prints no waiting message: the kubelet's Warning event says what failed.
        found = explained(view, about, prefer=(c.image, c.name))
        if found:
            said, q["event"] = found[0], found[1].quote
    if c.state == "Waiting" and c.reason == "CrashLoopBackOff":
        out.append(_crashloop(rec, view, c, where, said))
    elif c.state == "Waiting" and c.reason in _PULL:
        why = said.why if said else f"the image `{c.image}` cannot be pulled"
        fixes = (
            said.fixes
            if said
            else [
                f"Check that the image `{c.image}` exists (name and tag) and that the node may pull it (an "
                "imagePullSecret for a private registry)."
                if c.reason != "InvalidImageName"
                else f"Fix the image reference `{c.image}`: it is not a valid name."
            ]
        )
        out.append(
            make(
                rec,
                "container_image",
                subject(view, c.name),
                f"{where} is in {c.reason}: {why}.",
                [q.get("reason", ""), q.get("image", ""), q.get("message", ""), q.get("event", "")],
                fixes,
                0.85,
            )
        )
    elif c.reason in _CONFIG or (c.state == "Waiting" and c.reason not in _STARTING):
        out.append(_cannot_start(rec, view, c, where, said, q))
    terminated = _terminated(c)
    if terminated:
        out.append(_exit(rec, view, c, where, *terminated, said))
    elif (c.restart_count or 0) >= _RESTARTS and c.reason != "CrashLoopBackOff":
        out.append(
            make(
                rec,
                "container_restarts",
                subject(view, c.name),
                f"{where} has restarted {c.restart_count} times.",
                [q.get("restart_count", "")],
                [f"Find why {c.name} restarts: its last state, its previous logs and probe events."],
                0.4,
                symptom=True,
            )
        )
    return out


def _crashloop(rec: CallRecord, view: ObjectView, c: ContainerView, where: str, said: Meaning | None) -> Finding:
    q = c.quotes
    code = c.last_exit_code
    parts = [c.last_reason, f"with exit code {code} ({exit_meaning(code)})" if code is not None else ""]
    last = "; it last terminated " + " ".join(p for p in parts if p) if any(parts) else ""
    restarts = f" after {c.restart_count} restarts" if c.restart_count else ""
    return make(
        rec,
        "container_crashloop",
        subject(view, c.name),
        f"{where} is in CrashLoopBackOff (crash loop){restarts}{last}.",
        [q.get("reason", ""), q.get("restart_count", ""), q.get("last_reason", ""), q.get("last_exit_code", "")],
        said.fixes if said and said.cause else _exit_fixes(c, c.last_exit_code, c.last_reason),
        0.55,
        symptom=True,
    )


def _cannot_start(
    rec: CallRecord, view: ObjectView, c: ContainerView, where: str, said: Meaning | None, q: dict[str, str]
) -> Finding:
    message = c.message or c.last_message
    why = said.why if said else (message[:300] or c.reason)
    fixes = said.fixes if said else [f"Resolve what the runtime reports for {c.name}: {message[:200] or c.reason}."]
    return make(
        rec,
        "container_cannot_start",
        subject(view, c.name),
        f"{where} cannot start ({c.reason}): {why}.",
        [q.get("reason", ""), q.get("message", ""), q.get("last_message", ""), q.get("event", "")],
        fixes,
        said.confidence if said else 0.6,
    )


def _terminated(c: ContainerView) -> tuple[str, int | None, str] | None:
    """(reason, exit code, which) of the current or last termination worth reporting, or None."""
    if c.state == "Terminated" and (c.reason not in ("Completed", "") or (c.exit_code or 0) != 0):
        return c.reason, c.exit_code, ""
    if c.last_state == "Terminated" and (c.last_reason not in ("Completed", "") or (c.last_exit_code or 0) != 0):
        return c.last_reason, c.last_exit_code, "last_"
    if c.reason == "CrashLoopBackOff" and c.last_exit_code == 0:
        return c.last_reason or "Completed", 0, "last_"
    return None


def _exit(
    rec: CallRecord,
    view: ObjectView,
    c: ContainerView,
    where: str,
    reason: str,
    code: int | None,
    which: str,
    said: Meaning | None,
) -> Finding:
    q = c.quotes
    quotes = [q.get(f"{which}reason", ""), q.get(f"{which}exit_code", ""), q.get(f"{which}message", "")]
    when = "last terminated" if which else "terminated"
    meant = f" (exit code {code}: {exit_meaning(code)})" if code is not None else ""
    if reason == "OOMKilled":
        limit = c.limits.get("memory", "")
        quotes.append(q.get("limits.memory", ""))
        cause = (
            f"{where} was OOMKilled (out of memory{', exit code 137' if code == 137 else ''}): it used more than "
            + (f"its {limit} memory limit." if limit else "the memory it was allowed.")
        )
        return make(rec, "container_oom", subject(view, c.name), cause, quotes, _exit_fixes(c, code, reason), 0.9)
    if said and said.cause:
        return make(
            rec,
            "container_exit",
            subject(view, c.name),
            f"{where} {when} {reason}{meant}: {said.why}.",
            quotes,
            said.fixes,
            said.confidence,
        )
    # 126/127 name the command problem; 1, 137, 143 say it failed and the logs or the events say why.
    cause_codes = {2, 126, 127, 139}
    message = c.last_message if which else c.message
    detail = f": {message[:200]}" if message else ""
    return make(
        rec,
        "container_exit",
        subject(view, c.name),
        f"{where} {when} {reason or 'with an error'}{meant}{detail}.",
        quotes,
        _exit_fixes(c, code, reason),
        0.7 if code in cause_codes else 0.45,
        symptom=code not in cause_codes,
    )


def _pod_status(rec: CallRecord, view: ObjectView, about: About) -> list[Finding]:
    """A pod's own status reason: Evicted, DeadlineExceeded, NodeLost, OutOfcpu..."""
    if view.kind != "Pod" or not view.reason:
        return []
    said = meaning(view.message, about) if view.message else None
    why = said.why if said else (view.message[:300] or view.reason)
    fixes = said.fixes if said else [f"Resolve what the pod's status reports: {view.message[:200] or view.reason}."]
    quotes = [ln.strip() for ln in rec.output.splitlines()[:400] if view.reason in ln and "eason" in ln][:1]
    quotes += [ln.strip() for ln in rec.output.splitlines()[:400] if view.message and view.message[:40] in ln][:1]
    return [
        make(
            rec,
            "pod_status",
            subject(view, view.reason),
            f"{label(view)} is {view.phase or 'stopped'} ({view.reason}): {why}.",
            quotes,
            fixes,
            said.confidence if said else 0.6,
        )
    ]
