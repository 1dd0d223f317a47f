"""The final report: a short Markdown analysis a person reads first, and the structured JSON behind it."""

from __future__ import annotations

import re
from typing import Any

from shared.investigations.rules import parse
from shared.investigations.rules.evidence import findings
from shared.investigations.rules.log_signals import rank_log_lines
from shared.investigations.rules.memo import evaluation
from shared.investigations.rules.object_state import read_object
from shared.investigations.rules.objects import alert_objects
from shared.investigations.rules.planner import Walk
from shared.investigations.rules.state import Finding, InvestigationState, target_of
from shared.investigations.rules.toolshape import Role, toolbox_of

_MAX_ANALYSIS = 2000


@evaluation
def report(state: InvestigationState) -> dict[str, Any]:
    """The report of the rule path: `analysis` (Markdown, <= 2,000 characters) plus the structured fields."""
    found = findings(state)
    causes = [f for f in found if not f.symptom]
    symptoms = [f for f in found if f.symptom]
    lead = _deepest(state, causes) if causes else (symptoms[0] if symptoms else None)
    t = target_of(state.alert)
    when = str(state.alert.get("starts_at") or "")
    named = next((o.name for o in alert_objects(state.alert).objects if o.kind != "Namespace"), "")
    subject = t.pod or t.deployment or t.job or t.statefulset or t.daemonset or t.node or named or t.namespace or ""
    ordered = _ordered(lead, causes, symptoms)
    structured: dict[str, Any] = {
        "root_cause": lead.cause if lead else None,
        "evidence": [e.model_dump() for f in ordered for e in f.evidence if e.quote],
        "impact": _impact(state, subject),
        "remediation": list(dict.fromkeys(r for f in ordered for r in f.remediation)),
        "prevention": _prevention(ordered),
        "confidence": round(lead.confidence, 2) if lead else 0.1,
        "iteration_summary": _iterations(state),
        "findings": [f.model_dump() for f in ordered],
        "alert_started_at": when,
    }
    if not state.tools:
        structured["tools_unavailable"] = (
            "No tools were available: no MCP server offered any tool, so nothing in the cluster could be checked."
        )
    structured["analysis"] = _analysis(state, t.alertname, subject, when, lead, ordered)
    return structured


def _analysis(
    state: InvestigationState, alertname: str, subject: str, when: str, lead: Finding | None, ordered: list[Finding]
) -> str:
    ns = target_of(state.alert).namespace
    where = f" on `{subject}`" + (f" (namespace `{ns}`)" if ns and ns != subject else "") if subject else ""
    head = f"**{alertname or 'Alert'}**{where}, firing since {_date(when)}.\n\n" + _windows(state)
    if not state.tools:
        return _fit(
            head + "**Could not investigate: no tools are available.** No MCP server offered any tool (none is "
            "configured or it is unreachable), so no cluster data could be read and no cause can be named.\n\n"
            "**Next:** connect or enable a Kubernetes MCP server (e.g. kubernetes-mcp-server) for this cluster "
            "and run the investigation again" + (", or follow the runbook's steps by hand." if state.runbook else ".")
        )
    if lead is None:
        checked = ", ".join(dict.fromkeys(c.tool for c in state.calls)) or "nothing"
        errors = sum(c.is_error for c in state.calls)
        walk = Walk.of(state)
        healthy = _healthy(walk, [])
        notable = _notable(walk, set())
        lines = "".join(f"- {n}\n" for n in notable)
        now = (
            f"\n\n**What was checked looks healthy now:** {', '.join(healthy)}: no failing condition, "
            "waiting container or warning event. The condition may have cleared (a rollout that finished, a "
            "transient failure); compare with the alert's metric over the firing window."
            if healthy
            else ""
        )
        return _fit(
            head + f"**No cause found.** {len(state.calls)} tool calls ({checked}; {errors} failed) showed no "
            f"known failure pattern.{now}\n\n"
            + (
                f"**Lines worth reading** (the most error-like and unusual in the logs and events):\n{lines}\n"
                if lines
                else ""
            )
            + "**Next:** "
            + (
                "follow the runbook's diagnosis steps; "
                if state.runbook
                else "check the alert's metric over the firing window, "
            )
            + "look at recent changes (deployments, config) and the logs of the affected workload."
        )
    walk = Walk.of(state)
    parts = [head, f"**Root cause:** {lead.cause}\n"]
    chain = walk.chain_to(lead.subject) if lead.subject else []
    if len(chain) > 1:
        parts.append("**How it connects:** " + " → ".join(f"{o.kind} `{o.name}`" for o in chain) + "\n")
    parts.append("\n**Evidence:**\n")
    quoted: set[str] = set()
    for f in ordered[:4]:
        for e in f.evidence[:2]:
            if e.quote and e.quote not in quoted:
                quoted.add(e.quote)
                parts.append(f"- `{e.tool}` {_args(e.args)}: `{e.quote[:220]}`\n")
    others = [f.cause for f in ordered[1:4]]
    if others:
        parts.append("\n**Also seen:** " + " ".join(others) + "\n")
    notable = _notable(walk, quoted) if sum(len(p) for p in parts) < 1_200 else []
    if notable:
        parts.append("\n**Other lines worth reading:**\n" + "".join(f"- {n}\n" for n in notable))
    healthy = _healthy(walk, ordered)
    if healthy:
        parts.append("\n**Checked, nothing wrong found:** " + ", ".join(healthy) + ".\n")
    fixes: list[str] = []
    for fix in dict.fromkeys(r for f in ordered[:3] for r in f.remediation):
        # The first fix, then the others that fit: the paragraph must survive the cut, and a command is never
        # cut short (a person would paste it).
        if fixes and (sum(len(x) for x in fixes) + len(fix) > 700 or len(fixes) >= 4):
            continue
        fixes.append(fix)
    parts.append("\n**Fix:** " + "; ".join(f.rstrip(". ") for f in fixes) + ".\n")
    parts.append(f"\n**Confidence:** {_confidence(lead, ordered)}\n")
    return _fit("".join(parts))


def _ordered(lead: Finding | None, causes: list[Finding], symptoms: list[Finding]) -> list[Finding]:
    """The lead, then the causes that tell the same story (they name its subject, or it names theirs: the
    ConfigMap that configures the missing Service's name, the log line that fails to resolve it), then the
    symptoms, then the other causes."""
    if lead is None:
        return symptoms + causes
    story = [f for f in causes if f is not lead and _same_story(lead, f)]
    rest = [f for f in causes if f is not lead and f not in story]
    return [lead, *story, *symptoms, *rest]


def _same_story(lead: Finding, other: Finding) -> bool:
    """Another object's finding, nearly as sure, that names the lead's subject: a link in the same chain (not one
    more event about the same pod, which backs the lead but adds nothing)."""
    subject, theirs = lead.subject.lower(), other.subject.lower()
    if len(subject) < 4 or subject in theirs or (theirs and theirs in subject):
        return False
    return other.confidence >= min(0.6, lead.confidence - 0.2) and subject in other.cause.lower()


def _deepest(state: InvestigationState, causes: list[Finding]) -> Finding:
    """The cause to lead with: among those nearly as sure as the surest (within 0.1), the one furthest along the
    chain of objects (a claim's storage class explains the pod that waits for the claim, not the other way)."""
    top = causes[0].confidence
    near = [f for f in causes if f.confidence >= top - 0.1]
    if len(near) == 1:
        return near[0]
    walk = Walk.of(state)
    # A log finding's subject is "Pod <name>": its depth is its pod's.
    depth = {f.subject: len(walk.chain_to(f.subject.removeprefix("Pod "))) for f in near if f.subject}

    def explains(f: Finding) -> int:
        # A finding that quotes, behind its own evidence, the line another one rests on reads further into it
        # (the volume's zone behind the scheduler's "volume node affinity conflict").
        behind = {_said(e.quote) for e in f.evidence[1:]}
        return sum(1 for g in near if g is not f and g.evidence and _said(g.evidence[0].quote) in behind)

    return max(near, key=lambda f: (explains(f) > 0, depth.get(f.subject, 0), f.confidence))


def _said(quote: str) -> str:
    """A quote as a message, whatever the output it came from (a table row or a description's Events line)."""
    q = quote.strip().removeprefix("Message:").strip().strip("\"'")
    return re.sub(r"\s+", " ", q).lower()


def _notable(walk: Walk, quoted: set[str]) -> list[str]:
    """The logs' most error-like or unusual lines and the Warning events no finding quoted (at most 3): what a
    person would read next when the rules name no cause, or name one and these may qualify it."""
    ranked: list[tuple[float, str]] = []
    for s in walk.seen:
        if s.role is Role.POD_LOG and not s.rec.is_error:
            ranked += [
                (sig.score, f"`{s.name}` log: `{sig.line[:200]}`" + (f" (x{sig.count})" if sig.count > 1 else ""))
                for sig in rank_log_lines(s.rec.output, limit=3)
                if sig.line not in quoted and (sig.level in ("error", "fatal", "warning") or sig.category != "rare")
            ]
        elif s.role is Role.EVENTS and not s.rec.is_error:
            ranked += [
                (1.0, f"event {e.reason} on {e.obj}: `{e.message[:200]}`")
                for e in parse.events(s.rec.output[:200_000])
                if e.type == "Warning" and e.message not in quoted
            ]
    ranked.sort(key=lambda sr: -sr[0])
    return list(dict.fromkeys(text for _, text in ranked))[:3]


def _healthy(walk: Walk, found: list[Finding]) -> list[str]:
    """Objects that were described and that no finding is about: what was ruled out."""
    about = " ".join([f.subject + " " + f.cause for f in found] + [str(e.args) for f in found for e in f.evidence])
    ruled_out = [o for o in list(walk.described)[:12] if o.name not in about and o.kind != "Namespace"]
    return [f"{o.kind} `{o.name}`{_health_note(walk.described[o].output, o.kind)}" for o in ruled_out[:5]]


def _health_note(output: str, kind: str) -> str:
    """What shows an object is healthy (` (2/2 replicas available)`, ` (Ready)`, ` (Bound)`), or ""."""
    view = read_object(output, kind)
    desired = view.fact("replicas_desired")
    have = view.fact("replicas_available") or view.fact("replicas_ready")
    if desired and have:
        return f" ({have}/{desired} replicas available)"
    ready = next((c for c in view.conditions if c.type == "Ready"), None)
    if ready is not None and ready.status == "True":
        return " (Ready)"
    if view.phase in ("Bound", "Running", "Active", "Succeeded"):
        return f" ({view.phase})"
    return ""


def _confidence(lead: Finding, found: list[Finding]) -> str:
    """High/medium/low with the reason: a cause quoted from the outputs and backed by other findings is high."""
    score = lead.confidence
    backing = sum(1 for f in found if f is not lead and f.subject == lead.subject)
    word = "high" if score >= 0.8 else "medium" if score >= 0.55 else "low"
    why = "the cause is quoted from the tool outputs above"
    if lead.symptom:
        why = "the outputs show what fails but not why"
    if backing:
        why += f"; {backing} other finding(s) about the same object agree"
    return f"{word} ({score:.2f}): {why}."


def _args(args: dict[str, Any]) -> str:
    keep = [str(args[k]) for k in ("kind", "name", "container") if args.get(k)]
    if args.get("previous"):
        keep.append("previous")
    return "(" + " ".join(keep) + ")" if keep else ""


def _fit(text: str) -> str:
    """Trim to the limit at a line boundary, keeping the Fix paragraph (the last one) whole when possible."""
    if len(text) <= _MAX_ANALYSIS:
        return text
    head, sep, fix = text.rpartition("\n**Fix:**")
    if sep and len(fix) < _MAX_ANALYSIS // 2:
        room = _MAX_ANALYSIS - len(sep) - len(fix) - 2
        cut = head[:room]
        cut = cut[: cut.rfind("\n")] if "\n" in cut else cut
        return cut + "\n…" + sep + fix
    return text[: _MAX_ANALYSIS - 1] + "…"


def _date(when: str) -> str:
    """`2024-11-29T08:40:57.669Z` as `2024-11-29 08:40:57 UTC` (fractions of a second say nothing to a reader)."""
    if not when:
        return "an unknown time"
    return (
        re.sub(r"\.\d+(?=Z|[+-]\d\d:?\d\d$|$)", "", when)
        .replace("T", " ")
        .replace("Z", " UTC")
        .replace("+00:00", " UTC")
    )


def _impact(state: InvestigationState, subject: str) -> str:
    severity = str(state.alert.get("severity") or (state.alert.get("labels") or {}).get("severity") or "unknown")
    return f"{subject or 'The alerted service'} is affected (severity {severity})."


def _prevention(found: list[Finding]) -> list[str]:
    rules = {f.rule for f in found}
    tips = {
        "oom": "Set memory requests/limits from measured usage and alert on usage near the limit.",
        "cpu_throttling": "Size CPU limits from measured usage; alert on throttling before it hurts latency.",
        "image_pull": "Check images exist and are pullable in CI before deploying.",
        "command_not_found": "Test container commands in CI (run the image once) before deploying.",
        "syntax_error": "Lint shell scripts (shellcheck, sh -n) in CI.",
        "env_missing": "Validate required environment variables at deploy time (admission policy or CI).",
        "cert_expired": "Automate certificate renewal and alert weeks before expiry.",
        "scheduling": "Plan capacity for special resources; alert on Pending pods.",
        "dns": "Test NetworkPolicies in staging; always allow DNS egress in a baseline policy.",
    }
    return [tip for rule, tip in tips.items() if rule in rules] or ["Add an alert or a check for this failure mode."]


def _iterations(state: InvestigationState) -> list[dict[str, Any]]:
    by_iter: dict[int, list[str]] = {}
    for c in state.calls:
        by_iter.setdefault(c.iteration, []).append(f"{c.tool}{' (error)' if c.is_error else ''}")
    return [{"iteration": i, "calls": calls} for i, calls in sorted(by_iter.items())]


_WINDOW = re.compile(r'"start":\s*"([^"]+)",\s*"end":\s*"([^"]+)"')


def _windows(state: InvestigationState) -> str:
    """The time windows of the metric queries made, so a reader knows which period the data covers."""
    box = toolbox_of(state.tools)
    spans = {
        m.groups() for c in state.calls if box.role_of(c.tool) is Role.METRICS_QUERY for m in _WINDOW.finditer(c.output)
    }
    if not spans:
        return ""
    return "**Metrics queried for:** " + "; ".join(f"{_date(a)} to {_date(b)}" for a, b in sorted(spans)) + ".\n\n"
