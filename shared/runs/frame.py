"""What the run frame's two activities take and return: the claim at a run's start, the outcome at its end."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RunClaim(BaseModel):
    """runs_claim's input: the orchestrator claims the run recorded under its own instance id, by its own name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1)
    orchestrator: str = Field(min_length=1)


class ClaimedRun(BaseModel):
    """runs_claim's output: the re-validated plan as JSON (the frame validates it into the orchestration's
    plan model) and the correlation id the run was started with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Free-form here: its shape is the claimed orchestration's plan model, which the frame applies next.
    plan: dict[str, Any]
    correlation_id: str | None = None


class RunOutcome(BaseModel):
    """runs_finish's input: the orchestration's output (its output model as JSON), or that it failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1)
    # Free-form here: the shape is each orchestration's own output model, dumped by the frame.
    output: dict[str, Any] | None = None
    failed: bool = False
