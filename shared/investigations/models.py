"""The investigation record: one JSON document per investigation, keyed by its Durable run id.

Every field is bounded so a record stays far below Cosmos's 2 MB item limit whatever the tools
return: tool outputs above the inline limit live in Blob and the record holds only their name
(`output_ref`), iterations and calls are capped by the budget's own ceilings, free text is cut.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.investigations.alerts import Alert
from shared.investigations.llm import CallUsage

InvestigationStatus = Literal["pending", "running", "completed", "failed", "cancelled"]
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
InvestigationPath = Literal["rule", "llm", "llm->rule"]

# The Durable orchestrator's function name (the run's kind is "investigate_alert").
ORCHESTRATOR = "investigate_alert_orchestrator"
ROUTE = "/api/investigations/"

# Ceilings above the settings' own maxima (max_iterations le=10, max_tool_calls le=50): a record that
# passes these fits in a Cosmos item with room to spare even with every output inline.
MAX_ITERATIONS = 10
MAX_CALLS_PER_ITERATION = 50
MAX_INLINE_OUTPUT_CHARS = 64 * 1024
# All inline outputs of one record together; past it the store moves outputs to Blob (append_iteration).
MAX_INLINE_TOTAL_CHARS = 768 * 1024
MAX_CALLS = 50
MAX_ARGS_JSON_CHARS = 4 * 1024
MAX_REPORT_JSON_CHARS = 256 * 1024
MAX_ANALYSIS_CHARS = 32 * 1024
MAX_ERROR_CHARS = 1_000
MAX_SERVERS = 20
MAX_PHASES = 20


def _json_chars(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


class _Part(BaseModel):
    # Cosmos adds `_etag`, `_rid`, `_ts`...; a record read back must validate without them mattering.
    model_config = ConfigDict(extra="ignore")


class RunbookInfo(_Part):
    """Which runbook the investigation followed and how fetching it went (not its text)."""

    source: str | None = Field(None, max_length=2_048, description="URL or catalogue name of the runbook.")
    status: Literal["none", "fetched", "cached", "failed", "not_found"] = "none"
    error: str | None = Field(None, max_length=MAX_ERROR_CHARS)
    truncated: bool = False


class ServerStatus(_Part):
    """One MCP server offered to the investigation: whether it answered and how many tools it gave."""

    name: str = Field(max_length=128)
    status: Literal["ok", "failed", "skipped"] = "ok"
    tool_count: int = Field(0, ge=0)
    error: str | None = Field(None, max_length=MAX_ERROR_CHARS)


class ToolsOffered(_Part):
    servers: list[ServerStatus] = Field(default_factory=list, max_length=MAX_SERVERS)
    tool_count: int = Field(0, ge=0, description="Tools offered to the planner over all servers.")
    withheld: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="Tools their server does not mark read-only (readOnlyHint missing or false, or read-only and "
        "destructive at once) and no operator allowed: never offered nor called.",
    )
    withheld_reasons: dict[str, str] = Field(
        default_factory=dict,
        max_length=100,
        description="Why each withheld tool was withheld: no_read_only_hint, not_read_only or "
        "read_only_but_destructive.",
    )
    allowed: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="Tools offered although their server does not mark them read-only, because an operator allowed "
        "them (FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS, or every tool with ..._MCP_ALLOW_WRITE_TOOLS).",
    )
    allow_all: bool = Field(False, description="FIREBREAK_INVESTIGATIONS_MCP_ALLOW_WRITE_TOOLS was on: every tool.")


class MemoryHint(_Part):
    """What debug memory recommended for this alert, if anything (a summary, not the steps)."""

    solution_summary: str | None = Field(None, max_length=2_000)
    incident_id: str | None = Field(None, max_length=255)
    solution_id: str | None = Field(None, max_length=255)
    lookup_id: str | None = Field(None, max_length=255, description="Pass it to record_outcome with the solution_id.")
    score: float | None = None
    error: str | None = Field(None, max_length=MAX_ERROR_CHARS, description="Why memory could not be asked.")
    incident_title: str | None = Field(None, max_length=500, description="The earlier incident the fix belongs to.")
    matched_terms: list[str] = Field(default_factory=list, max_length=50)
    exact_signature_match: bool = False
    attached: bool | None = Field(
        None, description="Whether the report recommends the fix: only when it fits this investigation's evidence."
    )
    attach_reason: str | None = Field(None, max_length=1_000, description="Why it was (not) attached.")


class CallEntry(_Part):
    """One tool call: what was asked, why, and its output inline or as a Blob reference."""

    key: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Stable within the record ('i2-c3'); names its output blob."
    )
    tool: str = Field(min_length=1, max_length=256)
    args: dict[str, Any] = Field(default_factory=dict)
    reason: str = Field("", max_length=2_000)
    output: str | None = Field(None, max_length=MAX_INLINE_OUTPUT_CHARS, description="Inline when small.")
    output_ref: str | None = Field(None, max_length=1_024, description="Blob name when the output was large.")
    output_bytes: int = Field(0, ge=0, description="UTF-8 size of the whole output, wherever it is kept.")
    is_error: bool = False
    truncated: bool = Field(False, description="True when the stored output is shorter than what the tool returned.")
    duration_ms: int = Field(0, ge=0)

    @field_validator("args")
    @classmethod
    def _small_args(cls, value: dict[str, Any]) -> dict[str, Any]:
        if _json_chars(value) > MAX_ARGS_JSON_CHARS:
            raise ValueError(f"args are at most {MAX_ARGS_JSON_CHARS} characters of JSON")
        return value


class Iteration(_Part):
    n: int = Field(ge=1, le=MAX_ITERATIONS)
    calls: list[CallEntry] = Field(default_factory=list, max_length=MAX_CALLS_PER_ITERATION)
    partial_analysis: str | None = Field(None, max_length=MAX_ANALYSIS_CHARS)
    reasoning: str | None = Field(
        None,
        max_length=4_000,
        description="Why this iteration's calls were chosen (the model's hypothesis or the rules').",
    )


class PlannedReasoning(_Part):
    """The plan's reasoning for iteration `n`, kept until that iteration exists (its first call is recorded)."""

    n: int = Field(ge=1, le=MAX_ITERATIONS)
    text: str = Field(max_length=4_000)


class Timings(_Part):
    started_at: str | None = None
    finished_at: str | None = None
    phases_ms: dict[str, int] = Field(default_factory=dict, description="Wall time per phase, in milliseconds.")

    @field_validator("phases_ms")
    @classmethod
    def _few_phases(cls, value: dict[str, int]) -> dict[str, int]:
        if len(value) > MAX_PHASES or any(len(k) > 64 for k in value):
            raise ValueError(f"at most {MAX_PHASES} phases, names up to 64 characters")
        return value


class TokenUsage(_Part):
    prompt: int = Field(0, ge=0)
    completion: int = Field(0, ge=0)
    total: int = Field(0, ge=0)

    def plus(self, usage: CallUsage) -> TokenUsage:
        """These totals with one model call's usage added (a new object; records are replaced whole)."""
        return TokenUsage(
            prompt=self.prompt + usage.prompt_tokens,
            completion=self.completion + usage.completion_tokens,
            total=self.total + usage.total_tokens,
        )


class InvestigationRecord(_Part):
    """The `investigation` document in the `investigations` container (partition = workspace)."""

    id: str = Field(description="The run id of the investigation's Durable run (shared.runs).")
    type: Literal["investigation"] = "investigation"
    workspace_id: str = Field(min_length=1, max_length=255)
    user_id: str = Field(min_length=1, max_length=255)
    alert: Alert
    status: InvestigationStatus = "pending"
    phase: str = Field("queued", max_length=64, description="queued, runbook, tools, iterating, reporting, done...")
    progress: int = Field(0, ge=0, le=100, description="Percent done, for status displays.")
    path: InvestigationPath | None = Field(None, description="rule, llm, or llm->rule when the LLM path fell back.")
    path_reason: str | None = Field(None, max_length=MAX_ERROR_CHARS)
    runbook: RunbookInfo = Field(default_factory=RunbookInfo)
    tools: ToolsOffered = Field(default_factory=ToolsOffered)
    memory: MemoryHint | None = None
    iterations: list[Iteration] = Field(default_factory=list, max_length=MAX_ITERATIONS)
    planned_reasoning: PlannedReasoning | None = Field(
        None, description="Why the next iteration's calls were chosen, until its first call is recorded."
    )
    report: dict[str, Any] | None = Field(
        None, description="The structured report, with its analysis Markdown under `analysis`."
    )
    error: str | None = Field(None, max_length=MAX_ERROR_CHARS)
    timings: Timings = Field(default_factory=Timings)
    token_usage: TokenUsage = Field(default_factory=TokenUsage)
    dedup_key: str | None = Field(
        None, max_length=64, description="Same alert, same key: a repeat POST while one runs joins it (service.py)."
    )
    created_at: str
    updated_at: str
    ttl: int | None = Field(None, ge=1, description="Seconds Cosmos keeps the record (Azure only).")

    @field_validator("report")
    @classmethod
    def _small_report(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and _json_chars(value) > MAX_REPORT_JSON_CHARS:
            raise ValueError(f"the report is at most {MAX_REPORT_JSON_CHARS} characters of JSON")
        return value

    @model_validator(mode="after")
    def _bounded_calls(self) -> InvestigationRecord:
        calls = self.calls()
        if len(calls) > MAX_CALLS:
            raise ValueError(f"at most {MAX_CALLS} tool calls per investigation")
        if inline_chars(calls) > MAX_INLINE_TOTAL_CHARS:
            raise ValueError(f"at most {MAX_INLINE_TOTAL_CHARS} characters of inline output per record")
        return self

    def calls(self) -> list[CallEntry]:
        """Every call of every iteration, in order."""
        return [c for it in self.iterations for c in it.calls]

    def to_doc(self) -> dict[str, Any]:
        """The JSON document as stored (no Cosmos system fields)."""
        return self.model_dump(mode="json", exclude_none=True)


def inline_chars(calls: list[CallEntry]) -> int:
    """Characters of output the record itself holds for these calls."""
    return sum(len(c.output or "") for c in calls)


class InvestigationSummary(BaseModel):
    """One line of a list of investigations: what a list page carries instead of whole records."""

    model_config = {"extra": "ignore"}

    id: str
    investigation_id: str = Field(
        "", description="The same id, under the name get_alert_investigation and the routes take."
    )
    status: InvestigationStatus
    phase: str
    progress: int
    path: InvestigationPath | None = None
    status_url: str = Field("", description="GET it for the whole investigation.")
    alert_name: str = Field(description="The alert's name (alertname).")
    alert_title: str
    severity: str
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, doc: dict[str, Any]) -> InvestigationSummary:
        """From a projected document (SUMMARY_FIELDS)."""
        alert = doc.get("alert") or {}
        return cls.model_validate(
            {
                **doc,
                "investigation_id": doc.get("id", ""),
                "status_url": ROUTE + str(doc.get("id", "")),
                "alert_name": alert.get("name", ""),
                "alert_title": alert.get("title", ""),
                "severity": alert.get("severity", ""),
            }
        )


# The top-level fields a list page reads (the alert is small and bounded; iterations and report are not read).
SUMMARY_FIELDS = ("id", "status", "phase", "progress", "path", "alert", "created_at", "updated_at")
