"""What the rules see, written for the model: the objects found, the signals read from the outputs, and the calls
the rules would make next. The LLM path gets the same discovered objects and extracted signals as the rule path,
so a model starts from the evidence rather than from the raw outputs alone."""

from __future__ import annotations

from shared.investigations.rules.evidence import findings
from shared.investigations.rules.memo import evaluation
from shared.investigations.rules.planner import Walk, next_calls
from shared.investigations.rules.state import InvestigationState

_MAX_CHARS = 4_000


@evaluation
def brief(state: InvestigationState) -> str:
    """A bounded Markdown summary: objects (alert's and followed), signals (cause + quoted line), next calls."""
    walk = Walk.of(state)
    walk.explore()
    lines = ["Objects the alert names: " + (", ".join(o.label() for o in walk.target.objects) or "none")]
    if walk.target.apps or walk.target.hosts:
        lines.append("App labels: " + ", ".join(walk.target.apps) + "; probed hosts: " + ", ".join(walk.target.hosts))
    followed = [f"{o.label()} (via {walk.parents[o].kind} {walk.parents[o].name})" for o in walk.parents]
    if followed:
        lines.append("Objects their outputs reference: " + ", ".join(followed[:12]))
    if walk.failed:
        lines.append("Could not be read (not found or failed): " + ", ".join(o.label() for o in list(walk.failed)[:8]))
    found = findings(state)
    if found:
        lines.append("Signals in the outputs (strongest first):")
        for f in found[:8]:
            quote = f.evidence[0].quote[:200] if f.evidence else ""
            kind = "symptom" if f.symptom else "cause"
            lines.append(f"- [{kind}, {f.confidence:.2f}] {f.cause[:300]}" + (f' — quoted: "{quote}"' if quote else ""))
    else:
        lines.append("Signals in the outputs: none recognised yet.")
    suggested = next_calls(state) if state.tools else []
    if suggested:
        lines.append("Calls the rules would make next (use them or better ones):")
        lines += [f"- {c.tool} {c.args} ({c.reason[:120]})" for c in suggested]
    text = "\n".join(lines)
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 1] + "…"
