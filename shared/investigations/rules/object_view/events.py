"""Warning events: one finding per object and reason, with the message quoted and what it means."""

from __future__ import annotations

from shared.investigations.rules.object_view.messages import About, Meaning, meaning
from shared.investigations.rules.object_view.signal import label, make, subject
from shared.investigations.rules.object_view.view import ObjectEvent, ObjectView
from shared.investigations.rules.state import CallRecord, Finding

# Reasons that say what happens (the why is elsewhere: the container's last state, the node's conditions).
_SYMPTOM_REASONS = {"BackOff", "NodeNotReady", "Killing", "FailedKillPod", "Unhealthy", "NodeNotSchedulable"}


def findings(rec: CallRecord, view: ObjectView) -> list[Finding]:
    """The Warning events of the object (or, for an event listing, of each object it lists)."""
    groups: dict[tuple[str, str], list[ObjectEvent]] = {}
    for e in view.events:
        if e.type == "Warning" and e.reason:
            groups.setdefault((e.object, e.reason), []).append(e)
    return [_finding(rec, view, obj, reason, events) for (obj, reason), events in groups.items()]


def _finding(rec: CallRecord, view: ObjectView, obj: str, reason: str, events: list[ObjectEvent]) -> Finding:
    kind, _, name = obj.partition("/") if obj else (view.kind, "", view.name)
    about = About(kind, name or view.name, view.namespace)
    first = events[0]
    said = meaning(first.message, about)
    count = sum(e.count or 1 for e in events)
    who = f"{kind} {name}".strip() if obj else label(view)
    times = f" ({count} times)" if count > 1 else ""
    cause = f"{who}: Warning {reason}{times}: {first.message[:300]}"
    cause += f"; because {said.why}." if said else "."
    if said:
        fixes, confidence, symptom = said.fixes, said.confidence, not said.cause
    else:
        fixes = [f"Resolve what the {reason} event of {who} reports: {first.message[:200]}"]
        confidence, symptom = 0.5, reason in _SYMPTOM_REASONS
    key = f"{obj} {reason}" if obj else reason
    return make(
        rec,
        "warning_event",
        subject(view, key) if not obj else key,
        cause,
        [e.quote for e in events[:2]],
        fixes,
        confidence,
        symptom,
    )


def explained(
    view: ObjectView, about: About, reasons: set[str] | None = None, prefer: tuple[str, ...] = ()
) -> tuple[Meaning, ObjectEvent] | None:
    """The first Warning event of the object (of one of `reasons`, when given) whose message names a cause, those
    mentioning one of `prefer` (a container's name or image) first; None when none does."""
    warnings = [e for e in view.events if e.type == "Warning" and (not reasons or e.reason in reasons)]
    warnings.sort(key=lambda e: not any(p and p in e.message for p in prefer))
    for e in warnings:
        said = meaning(e.message, about)
        if said and said.cause:
            return said, e
    return None
