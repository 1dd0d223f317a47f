"""The investigation loop's rules, pure and deterministic: limits, stop rules, call signatures, progress.

The orchestrator replays, so everything it decides comes from here (or from activity results in its
history), never from a clock, a random number or a read.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.investigations.settings import InvestigationSettings

# Phases as the status shows them, with the percent each starts at.
PHASES: dict[str, int] = {"queued": 0, "preparing": 5, "iterating": 15, "reporting": 90, "done": 100}


class Limits(BaseModel):
    """One investigation's limits, copied from the settings when it starts (a settings change mid-run
    must not change a replay)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_iterations: int = Field(5, ge=1, le=10)
    max_tool_calls: int = Field(15, ge=1, le=50)
    max_calls_per_iteration: int = Field(6, ge=1, le=15)
    data_threshold: int = Field(10, ge=1, le=1000)
    min_iterations: int = Field(3, ge=1, le=10)
    time_budget_seconds: int = Field(600, ge=1, le=3600)

    @classmethod
    def of(cls, s: InvestigationSettings) -> Limits:
        return cls(
            max_iterations=s.max_iterations,
            max_tool_calls=s.max_tool_calls,
            max_calls_per_iteration=min(s.max_calls_per_iteration, s.max_tool_calls),
            data_threshold=s.data_threshold,
            min_iterations=s.min_iterations,
            time_budget_seconds=s.time_budget_seconds,
        )


def signature(tool: str, args: dict[str, Any]) -> str:
    """Identity of a call: the tool and its arguments in canonical JSON (equal signatures: the same call)."""
    return tool + " " + json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


class Planned(BaseModel):
    """A call the planner chose, as the orchestrator schedules it (`key` names its record entry and blob)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    tool: str
    # Free-form: the tool's own arguments, checked against its inputSchema by the MCP server that owns it.
    args: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""

    @property
    def signature(self) -> str:
        return signature(self.tool, self.args)


def admit(
    planned: list[Planned], made: list[str], iterations: list[list[str]], calls_left: int, per_iteration: int
) -> tuple[list[Planned], str | None]:
    """The planned calls this iteration may run, and a stop reason when the loop must end instead.

    Drops calls already made (identical tool and arguments) and cuts to the budget. Stops when every
    planned call was a repeat, or when this iteration's calls are the same set as the one two iterations
    back (A, B, A: alternating).
    """
    wanted = sorted(c.signature for c in planned)
    if len(iterations) >= 2 and wanted and wanted == sorted(iterations[-2]):
        return [], "alternating calls: the planner went back to the calls of two iterations ago"
    seen = set(made)
    fresh: list[Planned] = []
    for call in planned:
        if call.signature not in seen:
            seen.add(call.signature)
            fresh.append(call)
    if planned and not fresh:
        return [], "repeated calls: every planned call had been made before"
    fresh = fresh[: max(0, min(calls_left, per_iteration))]
    return fresh, None


def progress(phase: str, iteration: int = 0, limits: Limits | None = None) -> int:
    """Percent done for a status display: phases give the frame, iterations fill the middle."""
    if phase != "iterating" or limits is None:
        return PHASES.get(phase, 0)
    span = PHASES["reporting"] - PHASES["iterating"]
    return PHASES["iterating"] + span * max(0, iteration - 1) // limits.max_iterations


def status(
    phase: str,
    *,
    iteration: int = 0,
    limits: Limits | None = None,
    calls_made: int = 0,
    tools: list[str] | None = None,
    path: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """The Durable custom status (and the record's phase): what a status display shows live."""
    body: dict[str, Any] = {
        "phase": phase,
        "iteration": iteration,
        "max_iterations": limits.max_iterations if limits else None,
        "tool_calls": calls_made,
        "max_tool_calls": limits.max_tool_calls if limits else None,
        "percent": progress(phase, iteration, limits),
    }
    if tools:
        body["calling"] = tools[:15]
    if path:
        body["path"] = path
    if note:
        body["note"] = note[:300]
    return body
