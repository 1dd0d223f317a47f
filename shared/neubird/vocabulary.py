"""The values a caller may filter NeuBird sessions by (contract section 6), and the names that stand for them.

Only values NeuBird is known to use are sent: a value it does not know would be matched by no session, and the
caller would read "no sessions" where the truth is "no such filter". Anything else is a VALIDATION_ERROR that lists
what is accepted.

The spec names session types INCIDENT and MANUAL; NeuBird's API has no MANUAL: sessions a person starts with a
prompt are SESSION_TYPE_CHAT (the CLI's chat-session picker filters on it). So `SESSION_TYPE_MANUAL` and `manual`
are sent as SESSION_TYPE_CHAT. [GAP] Sessions the newer v2 clients create are SESSION_TYPE_USER; they are not
"manual" here, ask for SESSION_TYPE_USER (or `user`) to list them.
"""

from __future__ import annotations

from shared.core.errors import ValidationFailed
from shared.neubird.errors import neubird_error

NOT_STARTED = "INVESTIGATION_STATUS_NOT_STARTED"
IN_PROGRESS = "INVESTIGATION_STATUS_IN_PROGRESS"
COMPLETED = "INVESTIGATION_STATUS_COMPLETED"
STATUSES = (
    NOT_STARTED,
    IN_PROGRESS,
    "INVESTIGATION_STATUS_INVESTIGATED",
    COMPLETED,
    "INVESTIGATION_STATUS_PAUSED",
    "INVESTIGATION_STATUS_STOPPED",
)
STATUS_NAMES = {
    "not_started": NOT_STARTED,
    "uninvestigated": NOT_STARTED,
    "in_progress": IN_PROGRESS,
    "completed": COMPLETED,
    "investigated": COMPLETED,  # what the CLI sends for --status investigated
    "paused": "INVESTIGATION_STATUS_PAUSED",
    "stopped": "INVESTIGATION_STATUS_STOPPED",
}

INCIDENT = "SESSION_TYPE_INCIDENT"
CHAT = "SESSION_TYPE_CHAT"
TYPES = (INCIDENT, CHAT, "SESSION_TYPE_USER")
TYPE_NAMES = {
    "incident": INCIDENT,
    "chat": CHAT,
    "manual": CHAT,
    "session_type_manual": CHAT,  # the spec's name for what NeuBird calls CHAT
    "user": "SESSION_TYPE_USER",
}


def enum_value(value: str, values: tuple[str, ...], names: dict[str, str], field: str) -> str:
    """The NeuBird value `value` stands for: one of `values` in any case, or one of `names`; else VALIDATION_ERROR."""
    upper = value.strip().upper()
    if upper in values:
        return upper
    key = value.strip().lower().replace(" ", "_").replace("-", "_")
    if key in names:
        return names[key]
    accepted = list(values) + [n for n in names if not n.startswith("session_type_")]
    raise neubird_error(
        ValidationFailed,
        "validation",
        f"{field}: {value!r} is not a value NeuBird uses; a filter on it would match no session.",
        details={"field": field, "accepted": accepted},
        recovery=[f"Use one of {', '.join(accepted)}."],
    )
