"""What a Kubernetes object's state says, whatever scenario is running: read one tool output, draw its findings.

`read_object(text)` reads one object's output (`kubectl describe` text, YAML or JSON, or an event listing) into an
ObjectView: kind, name, conditions, containers, events, owner, node, and `refs`, the objects it points at for the
planner to follow. `state_findings(rec, alert_time)` turns what the view shows into findings that do not depend on
the alert's name: conditions, container states and exit codes, autoscaler/replica/quota/node/claim/job limits,
expiry dates against the alert's time, and Warning events, each with its cause chain, verbatim quotes and a fix
derived from the signal.
"""

from __future__ import annotations

from datetime import datetime

from shared.investigations.rules.object_view import capacity, conditions, containers, dates, events
from shared.investigations.rules.object_view.read import MAX_CHARS, read_object
from shared.investigations.rules.object_view.view import (
    API_VERSIONS,
    Backend,
    Condition,
    ContainerView,
    Fact,
    Metric,
    ObjectEvent,
    ObjectView,
    QuotaItem,
    Ref,
)
from shared.investigations.rules.state import CallRecord, Finding

__all__ = [
    "API_VERSIONS",
    "MAX_CHARS",
    "Backend",
    "Condition",
    "ContainerView",
    "Fact",
    "Metric",
    "ObjectEvent",
    "ObjectView",
    "QuotaItem",
    "Ref",
    "read_object",
    "state_findings",
    "view_of",
]


def view_of(rec: CallRecord) -> ObjectView:
    """The view of a call's output; the call's `kind` argument is the kind when the output does not say it."""
    return read_object(rec.output, str(rec.args.get("kind") or ""))


def state_findings(rec: CallRecord, alert_time: datetime | None, view: ObjectView | None = None) -> list[Finding]:
    """Findings from one call's output (an object's description/YAML/JSON, or an event listing), strongest first.

    `alert_time` (aware, UTC) dates the expiry and schedule checks; without it they are skipped. Pass `view` when
    the output was already read. A failed call (`is_error`) gives nothing.
    """
    if rec.is_error or not rec.output.strip():
        return []
    view = view if view is not None else view_of(rec)
    found: list[Finding] = []
    found += containers.findings(rec, view)
    found += conditions.findings(rec, view)
    found += capacity.autoscaler(rec, view)
    found += capacity.replicas(rec, view)
    found += capacity.quotas(rec, view)
    found += capacity.node(rec, view)
    found += capacity.storage(rec, view)
    found += capacity.schedule(rec, view, alert_time)
    found += capacity.routing(rec, view)
    found += capacity.namespace(rec, view)
    found += dates.findings(rec, view, alert_time)
    found += events.findings(rec, view)
    unique: dict[tuple[str, str], Finding] = {}
    for f in found:
        unique.setdefault((f.rule, f.subject), f)
    return sorted(unique.values(), key=lambda f: (f.symptom, -f.confidence))
