"""How the assistant reaches the task tools: through the platform registry, by name, as the caller.

Capabilities never import each other: the task tools are looked up in `ctx.deps.tools` and run with
`shared.tools.invoke.invoke` and the caller's own ToolContext, so every call is scoped to the caller
whatever a model or a message asks for. Only `ALLOWED_TOOLS` ever run; chat storage tools are not
among them (messages are stored by the API, never by the assistant).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from shared.tools.invoke import ToolContext, invoke

ALLOWED_TOOLS: tuple[str, ...] = (
    "create_task",
    "get_task",
    "update_task",
    "delete_task",
    "get_all_tasks",
    "search_tasks",
    "get_completed_tasks",
    "get_tasks_summary",
    "get_tasks_by_date",
    "bulk_delete_tasks",
    "update_task_status",
    "set_task_preferences",
    "get_task_preferences",
)
_UUIDISH = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


class ToolCallRecord(BaseModel):
    """One tool call the assistant made for this answer (stored with the answer, returned to the app)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    summary: str = Field("", max_length=300)


@dataclass
class ToolRun:
    record: ToolCallRecord
    output: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.record.ok


def _refused(name: str, arguments: dict[str, Any], why: str) -> ToolRun:
    error = {"error": {"code": "TOOL_NOT_AVAILABLE", "message": why}}
    return ToolRun(ToolCallRecord(name=name[:64], arguments={}, ok=False, summary=why[:300]), error)


async def run_tool(ctx: ToolContext, name: str, arguments: dict[str, Any]) -> ToolRun:
    """Run an allowed task tool for the caller; anything else is refused without running."""
    if name not in ALLOWED_TOOLS:
        return _refused(name, arguments, f"{name[:64]!r} is not one of the task tools this assistant may use")
    tool = ctx.deps.tools.get(name) if ctx.deps.tools is not None else None
    if tool is None:
        return _refused(name, arguments, f"the task tool {name!r} is not deployed")
    # Identity comes from the caller's credentials: a user_id argument is never passed on (a model or an
    # injected text naming another user would otherwise get FORBIDDEN at best).
    args = {k: v for k, v in arguments.items() if k != "user_id"}
    outcome = await invoke(tool, args, ctx)
    output = outcome.output if outcome.output is not None else outcome.error_envelope()
    shown = json.loads(json.dumps(args, default=str))
    return ToolRun(ToolCallRecord(name=name, arguments=shown, ok=outcome.ok, summary=outcome.text[:300]), output)


def task_ids_in(output: Any, limit: int = 100) -> list[str]:
    """The task ids an output names (a task, a list of tasks, a bulk result), in order, without repeats."""
    found: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str) and _UUIDISH.match(value) and value not in found and len(found) < limit:
            found.append(value)

    if isinstance(output, dict):
        task = output.get("task")
        if isinstance(task, dict):
            add(task.get("id"))
        add(output.get("task_id"))
        for item in output.get("tasks") or []:
            if isinstance(item, dict):
                add(item.get("id"))
        for item in output.get("results") or []:
            if isinstance(item, dict):
                add(item.get("id"))
        for item in output.get("deleted_ids") or []:
            add(item)
    return found
