"""What the investigation's orchestration and its activities hand each other: the stored plan, each activity's
input and output (small summaries: the bulk stays in the record and in Blob)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits, Planned

PREPARE = "investigation_prepare"
PLAN = "investigation_plan"
CALL = "investigation_call"
REPORT = "investigation_report"
FAILED = "investigation_failed"

MAX_ARGS_JSON_CHARS = 4 * 1024
FAILED_MESSAGE = "The investigation stopped on an error before its report; start it again."


class StartedBy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str = Field(min_length=1, max_length=128)
    source: str = Field(pattern=r"^(entra|appservice|api_key|dev)$")


class StoredPlan(BaseModel):
    """What the run record keeps for the orchestration: the alert, the limits, who started it. No secret."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alert: Alert
    limits: Limits
    started_by: StartedBy
    dedup_key: str | None = Field(None, max_length=64)


def validate_plan(stored: dict[str, Any]) -> StoredPlan:
    """The stored plan re-validated when the orchestration claims its run (ValueError when it does not)."""
    try:
        return StoredPlan.model_validate(stored)
    except ValidationError as exc:
        raise ValueError(f"invalid investigation plan ({exc.error_count()} problems)") from None


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Prepared(_Payload):
    """The prepare activity's output: which path the run takes and what it found to work with."""

    path: Literal["llm", "rule"]
    runbook: str = Field(description="The runbook's status: fetched, none, not_found, failed.")
    tool_count: int = Field(ge=0)
    servers_failed: int = Field(ge=0)
    memory: bool = Field(description="Debug memory recommended a fix.")


class PlanRequest(_Payload):
    """The plan activity's input: iteration n and what is left of the budget."""

    n: int = Field(ge=1)
    calls_left: int = Field(ge=0)
    per_iteration: int = Field(ge=1)


class PlanChoice(_Payload):
    """The plan activity's output: the calls chosen for iteration n, and whether the planner is done."""

    calls: list[Planned]
    done: bool = False
    path: Literal["rule", "llm", "llm->rule"]
    stop: str | None = None
    notes: list[str] = Field(default_factory=list)


class CallRequest(Planned):
    """The call activity's input: one admitted call of iteration n."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=1)


class CallDone(_Payload):
    """The call activity's output: how the call went (its output is in the record or Blob, not here)."""

    key: str
    tool: str
    ok: bool
    error_kind: str | None = None
    bytes: int = Field(ge=0)
    data: bool = Field(description="The call answered with something (a data point for the stop rule).")


class ReportRequest(_Payload):
    """The report activity's input: why the loop stopped and what it did."""

    stop: str
    iterations: int = Field(ge=0)
    calls: int = Field(ge=0)
    data_points: int = Field(ge=0)


class ReportSummary(_Payload):
    """The report activity's output and, with the correlation id, the run's output (the full report is the record's)."""

    investigation_id: str
    status: str
    path: Literal["rule", "llm", "llm->rule"]
    root_cause: str
    # The model's word, or the rules' score of their lead finding (0..1).
    confidence: Literal["low", "medium", "high"] | float | None = None
    analysis: str
    iterations: int
    tool_calls: int
    stopped_because: str
    status_url: str
    next_action: str
    correlation_id: str | None = None
