"""Two revisions of one workload side by side: a rollout whose new pods fail while the old ones run is explained
by what the new pod template changed (an image, a request or limit, a probe, a command). The planner describes
one healthy pod of another revision; `template_changes` compares it with the failing pod."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_state import read_object
from shared.investigations.rules.state import CallRecord, Finding

_REVISION_LABELS = ("controller-revision-hash", "pod-template-hash")
# A Deployment's pod: `<deployment>-<pod-template-hash>-<5 characters>`.
_RS_POD = re.compile(r"^(.+)-([a-z0-9]{6,10})-[a-z0-9]{5}$")
_MAX_DESCRIBED = 50_000


def row_revision(row: parse.Row) -> str:
    """A listed pod's revision: its revision label (listings with LABELS), else the hash in its name."""
    for pair in row.get("LABELS").split(","):
        key, _, value = pair.partition("=")
        if key in _REVISION_LABELS and value:
            return value
    m = _RS_POD.match(row.get("NAME"))
    return m.group(2) if m else ""


def healthy_row(row: parse.Row) -> bool:
    """Running, every container ready, never restarted."""
    ready = row.get("READY")
    have, _, want = ready.partition("/")
    restarts = row.get("RESTARTS").split(" ")[0]
    return row.get("STATUS") == "Running" and bool(want) and have == want and restarts in ("", "0")


def _revision(output: str) -> str:
    """A described pod's revision label (`controller-revision-hash=...` or `pod-template-hash=...`)."""
    m = re.search(r"(?:controller-revision-hash|pod-template-hash)[=:] ?['\"]?([a-z0-9]{4,20})", output[:20_000])
    return m.group(1) if m else ""


def _owner(output: str) -> str:
    """The workload a pod belongs to: its controller, a ReplicaSet read as its Deployment."""
    m = re.search(r"(?m)^Controlled By:\s+(\w+)/(\S+)", output[:20_000])
    if not m:
        return ""
    kind, name = m.groups()
    if kind == "ReplicaSet":
        rs = re.match(r"^(.+)-[a-z0-9]{6,10}$", name)
        return f"Deployment/{rs.group(1)}" if rs else f"ReplicaSet/{name}"
    return f"{kind}/{name}"


def _template(output: str) -> dict[str, dict[str, str]]:
    """Per container: what a pod template sets (image, requests, limits, probes, command, args)."""
    out: dict[str, dict[str, str]] = {}
    for c in parse.containers(output[:_MAX_DESCRIBED]):
        fields = {"image": c.value("Image")}
        for section in ("Requests", "Limits"):
            for res in ("cpu", "memory", "ephemeral-storage"):
                q = c.quantity(section, res)
                if q:
                    fields[f"{res} {section[:-1].lower()}"] = q
        for probe in ("Liveness", "Readiness", "Startup"):
            fields[f"{probe.lower()} probe"] = c.value(probe)
        fields["port"] = c.value("Port")
        out[c.name] = {k: v for k, v in fields.items() if v}
    return out


def _failing(output: str) -> bool:
    view = read_object(output[:_MAX_DESCRIBED], "Pod")
    if view.phase == "Pending":
        return True
    if any(c.type == "Ready" and c.status != "True" for c in view.conditions):
        return True
    return any(c.state == "Waiting" or c.last_reason or (c.restart_count or 0) > 0 for c in view.containers)


def template_changes(ctx: Context) -> list[Finding]:
    """A failing pod and a healthy pod of the same workload at different revisions: what differs."""
    pods = [(rec, str(rec.args.get("name"))) for rec in ctx.pods if not rec.is_error]
    out: list[Finding] = []
    for bad, bad_name in pods:
        if not _failing(bad.output):
            continue
        owner, revision = _owner(bad.output), _revision(bad.output)
        for good, good_name in pods:
            if good is bad or _failing(good.output) or not owner or _owner(good.output) != owner:
                continue
            if revision and _revision(good.output) == revision:
                continue
            diffs = _by_relevance(_differences(_template(good.output), _template(bad.output)), bad.output)
            if not diffs:
                continue
            out.append(_finding(owner, bad, bad_name, good, good_name, diffs))
            break
    return out


def _differences(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[tuple[str, str, str]]:
    """(what, healthy pod's value, failing pod's value) for each field that differs, per container."""
    diffs: list[tuple[str, str, str]] = []
    for name, fields in new.items():
        before = old.get(name)
        if before is None:
            continue
        diffs += [
            (f"{name} {key}", before.get(key) or "unset", fields.get(key) or "unset")
            for key in dict.fromkeys([*before, *fields])
            if before.get(key, "") != fields.get(key, "")
        ]
    return diffs


def _by_relevance(diffs: list[tuple[str, str, str]], failing: str) -> list[tuple[str, str, str]]:
    """The differences that bear on how the pod fails first: requests for a pod no node takes, the memory limit
    for one killed out of memory, probes and ports for one never ready, else the image."""
    view = read_object(failing[:_MAX_DESCRIBED], "Pod")
    first: tuple[str, ...]
    if view.phase == "Pending":
        first = ("request", "limit")
    elif any("OOMKilled" in (c.reason, c.last_reason) for c in view.containers):
        first = ("memory limit", "memory request")
    elif any(c.ready is False and c.state == "Running" for c in view.containers):
        first = ("probe", "port")
    else:
        first = ("image",)

    def rank(d: tuple[str, str, str]) -> int:
        return next((i for i, word in enumerate(first) if word in d[0]), len(first))

    return sorted(diffs, key=rank)


def _finding(
    owner: str, bad: CallRecord, bad_name: str, good: CallRecord, good_name: str, diffs: list[tuple[str, str, str]]
) -> Finding:
    said = "; ".join(f"{what}: {was} → {now}" for what, was, now in diffs[:4])
    quotes = [ev(bad, _line(bad.output, now)) for _, _, now in diffs[:1]]
    quotes += [ev(good, _line(good.output, was)) for _, was, _ in diffs[:1]]
    return Finding(
        rule="template_change",
        subject=owner,
        cause=f"{owner} runs two pod templates: the failing pod {bad_name} differs from the healthy pod "
        f"{good_name} in {said} (healthy → failing). The change came with the newer revision.",
        evidence=[q for q in quotes if q.quote],
        remediation=[
            (
                f"Undo or correct that change in {owner}'s pod template ({diffs[0][0]}: back to {diffs[0][1]}), "
                "or roll back (`kubectl rollout undo`), then roll out again."
            )
        ],
        confidence=0.7,
    )


def _line(output: str, value: str) -> str:
    return parse.line_matching(output[:_MAX_DESCRIBED], re.escape(value)) if value != "unset" else ""
