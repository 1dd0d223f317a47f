"""Calling a registered task tool in a test, as the assistant does: through `invoke`, for one caller."""

from __future__ import annotations

from typing import Any

from shared.tools.invoke import ToolContext, invoke


async def tool(ctx: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    """The output of tool `name` called with `args` as `ctx`'s caller; fails the test when the tool errs."""
    assert ctx.deps.tools is not None
    found = ctx.deps.tools.get(name)
    assert found is not None
    outcome = await invoke(found, args, ctx)
    assert outcome.output is not None, outcome.error
    return outcome.output
