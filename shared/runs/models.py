"""Shapes of a run: the stored record, what a caller sees, and the tools' inputs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.tools.registry import ToolInput, ToolOutput

RunState = Literal["pending", "running", "completed", "failed", "cancelled"]
TERMINAL_STATES = frozenset({"completed", "failed", "cancelled"})
# Run ids are minted server-side (uuid4 hex); anything else cannot name a run, so it is NOT_FOUND without a read.
RUN_ID_PATTERN = r"^[0-9a-f]{32}$"
STATUS_ROUTE = "/api/runs/"


class RunDoc(BaseModel):
    """The record in the `runs` container, written before its Durable instance starts (id = instance id)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    type: Literal["run"] = "run"
    kind: str = Field(description="What runs: 'diagnostics', 'perf_collect'.")
    orchestrator: str = Field(description="The orchestrator function this record may be claimed by.")
    workspace_id: str
    user_id: str
    created_at: str
    updated_at: str
    correlation_id: str | None = None
    plan: dict[str, Any] = Field(description="The validated plan, without secrets.")
    secrets_ref: str | None = Field(None, description="Id of the encrypted secrets document, if the run has secrets.")
    state: RunState = "pending"
    claimed: bool = Field(False, description="True once an orchestration with this instance id has loaded the record.")
    claimed_at: str | None = None
    output: dict[str, Any] | None = None
    error: str | None = None
    ttl: int | None = Field(
        None, description="Seconds Cosmos keeps the record (Azure; locally the app never relies on it)."
    )


class RunStarted(BaseModel):
    """What a starter hands back to a caller: the run id and the app's own status route, nothing of Durable's."""

    run_id: str
    status_url: str


class RunStatusRequest(ToolInput):
    run_id: str = Field(
        min_length=1, max_length=100, description="The run_id from collect.run or POST /api/diagnostics."
    )


class RunCancelRequest(ToolInput):
    run_id: str = Field(min_length=1, max_length=100, description="The run_id of a pending or running run.")
    reason: str | None = Field(
        None,
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]*$",
        description="Why you cancel it (kept with the run; one line, secrets redacted).",
    )


class RunStatus(ToolOutput):
    run_id: str
    kind: str = Field(description="What the run does: 'diagnostics' or 'perf_collect'.")
    state: RunState = Field(description="pending, running, completed, failed or cancelled.")
    progress: dict[str, Any] | None = Field(
        None, description="The run's own progress report (stage, counts) while it runs."
    )
    output: dict[str, Any] | None = Field(None, description="The result, once state is 'completed'.")
    error: str | None = Field(
        None, description="Why it failed (a safe message), when state is 'failed' or 'cancelled'."
    )
    created_at: str
    updated_at: str
    status_url: str = Field(description="GET this route for the current status.")
    next_action: str
