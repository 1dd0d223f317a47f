"""The neubird_* tools' outputs (shapes of ../shared/specs/neubird-mcp-server.md, plus what an agent needs next)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from shared.tools.registry import ToolOutput

_RESULTS = (
    "NeuBird's answer: final_answer (Markdown), chain_of_thoughts [{description, investigation, category, status, "
    "sources_involved}], sources, follow_up_suggestions."
)


OutcomeStatus = Literal["found_existing", "new_investigation", "created", "in_progress", "completed"]
SessionStatus = Literal["in_progress", "completed", "failed", "not_started", "unknown"]


class InvestigationOutcome(ToolOutput):
    """neubird_investigate_alert / neubird_create_investigation / neubird_continue_investigation."""

    status: OutcomeStatus
    session_uuid: str
    project_uuid: str
    investigation_results: dict[str, Any] | None = Field(None, description=_RESULTS)
    enhanced_prompt: str | None = Field(None, description="The prompt as sent, with the time window added.")
    timeframe_parsed: dict[str, str] | None = Field(None, description="{start, end, description} of the window.")
    progress: dict[str, Any] | None = Field(None, description="Steps seen so far while this call waited.")
    run_id: str | None = Field(
        None, description="A background run still waiting for the result (get_run_status shows its output)."
    )
    session_link: str | None = Field(None, description="The session in NeuBird's console.")
    message: str
    next_action: str


class StatusOutcome(ToolOutput):
    session_uuid: str
    project_uuid: str
    status: SessionStatus
    progress_percentage: int | None = Field(
        None, description="An estimate from completed chain-of-thought steps (NeuBird publishes no percentage)."
    )
    current_step: str | None = None
    investigation_summary: dict[str, Any] | None = Field(
        None, description="{total_steps, completed_steps, total_sources_consulted, unique_sources}."
    )
    investigation_results: dict[str, Any] | None = Field(None, description=_RESULTS)
    created_at: str | None = None
    updated_at: str | None = None
    session_link: str | None = None
    next_action: str


class Project(ToolOutput):
    uuid: str
    name: str
    description: str = ""
    state: str = ""
    sync_state: str = ""
    training_state: str = ""
    created_at: str = ""
    updated_at: str = ""
    ready: bool = False
    is_default: bool = False


class ProjectList(ToolOutput):
    projects: list[Project]
    default_project: str | None = None
    cached: bool = Field(description="True when the list came from the 5-minute cache.")
    next_action: str


class SessionList(ToolOutput):
    sessions: list[dict[str, Any]]
    page: int
    limit: int
    count: int
    project_uuid: str
    compact_mode: bool
    has_more: bool
    hidden_count: int = Field(0, description="Rows of this page other workspaces created here (not shown).")
    filters_applied: dict[str, Any]
    compact_hint: str | None = None
    pagination_hint: str | None = None
    investigation_hint: str | None = None


class SessionDetails(ToolOutput):
    session_info: dict[str, Any]
    prompt_cycles: list[dict[str, Any]]
    project_uuid: str
    session_link: str | None = None
    next_action: str


class SessionReports(ToolOutput):
    reports: list[dict[str, Any]]
    missing: list[str] = Field(default_factory=list, description="Requested sessions NeuBird returned no row for.")


class SessionSummary(ToolOutput):
    session_uuid: str
    available: bool = Field(description="False while NeuBird has not written the summary yet.")
    short_summary: dict[str, Any] | None = None
    analysis: str | None = None
    action_items: list[str] = Field(default_factory=list)
    analysis_score: dict[str, Any] | None = None
    time_saved: dict[str, Any] | None = None
    message: str


class IncidentReport(ToolOutput):
    report: dict[str, Any] = Field(
        description="NeuBird's organisation-wide analytics: avg_investigation_time_saved_minutes, avg_mttr, "
        "noise_reduction, total_incidents, total_investigations, incident_type_reports[...]."
    )


class SwitchResult(ToolOutput):
    success: bool
    input_provided: str
    normalized_url: str
    previous_url: str
    new_url: str
    message: str
    note: str


class DefaultsResult(ToolOutput):
    status: Literal["configured"]
    current_defaults: dict[str, Any]
    message: str
