"""Shapes of the wait run: its plan (checked by wait_plan.py), one poll's snapshot, and its output."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.neubird.models import SessionStatus


class WaitPlan(BaseModel):
    """What the wait orchestration runs on: the session to poll, where, for how long, and how often."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_uuid: str
    project_uuid: str
    organization_uuid: str | None = None
    base_url: str
    wait_seconds: float = Field(gt=0)
    poll_interval_seconds: float = Field(gt=0)
    poll_attempts: int = Field(ge=1)


class PollSnapshot(BaseModel):
    """One poll's answer, kept in the orchestration's history (so small: results only once it ended)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: SessionStatus
    # Free-form: step counts and status text for a display (waiting.progress_of), passed through as read.
    progress: dict[str, Any] = Field(default_factory=dict)
    # Free-form: NeuBird's answer, cut by waiting.compact_results; None until the investigation ended.
    investigation_results: dict[str, Any] | None = None


class WaitOutput(BaseModel):
    """The wait run's output (get_run_status shows it): where the session stands, its results when it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_uuid: str
    project_uuid: str
    status: SessionStatus
    progress: dict[str, Any] = Field(default_factory=dict)
    investigation_results: dict[str, Any] | None = None
    message: str
