"""What each object's output and each log read say on their own (object_state, log_signals), for every object
and log the walk read."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from shared.investigations.rules.context import Context
from shared.investigations.rules.log_signals import log_findings
from shared.investigations.rules.object_state import state_findings
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role


def object_states(ctx: Context) -> list[Finding]:
    """What each object's output says (object_state): conditions, containers, limits against use, dates against
    the alert's time, Warning events. Event listings count only for the objects this investigation is about."""
    when = alert_time(ctx.state.alert)
    out: list[Finding] = []
    for s in ctx.seen:
        if s.role in (Role.DESCRIBE, Role.POD_GET):
            out += state_findings(s.rec, when)
        elif s.role is Role.EVENTS:
            out += [f for f in state_findings(s.rec, when) if ctx.related(f.subject.split("/", 1)[-1].split(" ")[0])]
    return out


def alert_time(alert: dict[str, object]) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(alert.get("starts_at") or ""))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def ranked_logs(ctx: Context) -> list[Finding]:
    """What each log read says, ranked by error-likeness and rarity (log_signals): the first error after a start,
    the most repeated error, connection/DNS/pool/permission failures, with the cause and fix of their category."""
    out: list[Finding] = []
    focus = focus_words(ctx.state.alert)
    for rec in ctx.logs:
        pod = str(next((s.name for s in ctx.seen if s.rec is rec), "") or rec.args.get("name") or "the container")
        out += log_findings(rec, f"Pod {pod}", focus=focus)
    return out


# Labels that say where the series came from, not what it is about.
_PLACE_LABELS = frozenset(
    "alertname severity prometheus job instance endpoint service namespace pod container cluster team uid "
    "node exported_namespace".split()
)


def focus_words(alert: dict[str, Any]) -> frozenset[str]:
    """The values of an alert's labels that say what it is about (`integration="slack"`, `queue="payments"`)."""
    labels = alert.get("labels") or {}
    return frozenset(
        str(v).lower()
        for k, v in labels.items()
        if k not in _PLACE_LABELS and isinstance(v, str) and re.fullmatch(r"[A-Za-z][\w.-]{3,60}", v)
    )
