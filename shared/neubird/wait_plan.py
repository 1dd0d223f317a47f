"""The wait run's plan: what the orchestration and every poll accept from storage (checked again each time).

The runs framework re-validates a plan once, at claim; activities load the stored record again, so the poll
checks the plan itself too: a record edited in storage cannot point the deployment's credentials at another
host or put a path into a NeuBird URL.
"""

from __future__ import annotations

from typing import Any

from shared.core.errors import ValidationFailed
from shared.neubird.client import looks_like_id
from shared.neubird.connection import instance_allowed
from shared.neubird.settings import NeubirdSettings
from shared.tools.deps import Deps

MAX_WAIT_SECONDS = 3600


def _id(plan: dict[str, Any], key: str) -> str:
    value = plan.get(key)
    if not looks_like_id(value):
        raise ValidationFailed(f"neubird wait plan: {key} is not an id")
    return str(value)


def validate_plan(stored: dict[str, Any], deps: Deps) -> dict[str, Any]:
    settings = deps.settings.section(NeubirdSettings)
    base_url = stored.get("base_url")
    if not isinstance(base_url, str) or not instance_allowed(settings, base_url):
        raise ValidationFailed("neubird wait plan: the instance is not allowed on this deployment")
    wait = stored.get("wait_seconds")
    if not isinstance(wait, int | float) or not 0 < wait <= MAX_WAIT_SECONDS:
        raise ValidationFailed("neubird wait plan: wait_seconds out of range")
    org = stored.get("organization_uuid")
    return {
        "session_uuid": _id(stored, "session_uuid"),
        "project_uuid": _id(stored, "project_uuid"),
        "organization_uuid": _id(stored, "organization_uuid") if org is not None else None,
        "base_url": base_url,
        "wait_seconds": float(wait),
    }
