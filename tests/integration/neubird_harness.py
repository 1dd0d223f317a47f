"""In-process NeuBird tool calls against the fake NeuBird and the real Cosmos-API server (fresh Deps per test)."""

from __future__ import annotations

import uuid
from typing import Any

from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ProgressFn, ToolContext, invoke

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1"}


def caller(tag: str = "nba") -> Principal:
    return Principal(workspace_id=f"ws-{tag}-{uuid.uuid4().hex[:6]}", user_id="u1", source="dev")


async def answer(
    deps: Deps, who: Principal, name: str, args: dict[str, Any], progress: ProgressFn | None = None
) -> dict[str, Any]:
    """The tool's output, or the common error envelope {"error": {code, message, details, ...}} when it refused."""
    tool = deps.tools.get(name) if deps.tools else None
    assert tool is not None
    ctx = ToolContext(principal=who, deps=deps, correlation_id=uuid.uuid4().hex, progress=progress)
    outcome = await invoke(tool, args, ctx)
    if outcome.error is not None:
        error: dict[str, Any] = outcome.error_envelope()
        return error
    assert outcome.output is not None, outcome.text
    return outcome.output
