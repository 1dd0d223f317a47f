"""How an object signal becomes a Finding: the object's label, a subject to tell findings apart, verbatim quotes."""

from __future__ import annotations

from shared.investigations.rules.context import ev
from shared.investigations.rules.object_view.view import ObjectView
from shared.investigations.rules.state import CallRecord, Finding


def label(view: ObjectView) -> str:
    """How a report names the object: "Deployment web" (kind and name, either may be unknown)."""
    return " ".join(p for p in (view.kind, view.name) if p) or "The object"


def subject(view: ObjectView, detail: str = "") -> str:
    """`Kind/name` plus what the finding is about (a condition, a container): findings of one rule stay apart."""
    base = "/".join(p for p in (view.kind, view.name) if p)
    return f"{base} {detail}".strip()


def make(
    rec: CallRecord,
    rule: str,
    subject: str,
    cause: str,
    quotes: list[str],
    fixes: list[str],
    confidence: float,
    symptom: bool = False,
) -> Finding:
    """A finding whose evidence is the given lines of the call's output (empty ones and repeats dropped)."""
    output = rec.output
    evidence = [ev(rec, q) for q in dict.fromkeys(q for q in quotes if q and q in output)]
    return Finding(
        rule=rule,
        subject=subject,
        cause=cause,
        evidence=evidence,
        remediation=list(dict.fromkeys(fixes)),
        confidence=confidence,
        symptom=symptom,
    )
