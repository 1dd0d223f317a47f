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
# Where a session's last prompt stands, as read from NeuBird (waiting.snapshot); internal.
SessionStatus = Literal["in_progress", "completed", "failed", "not_started", "unknown"]
# What neubird_get_investigation_status answers: the spec's set (not_started is "unknown" there, with NeuBird's
# own investigation_status beside it).
SpecStatus = Literal["in_progress", "completed", "failed", "unknown"]
Number = int | float


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
    status: SpecStatus = Field(
        description="in_progress | completed | failed | unknown (unknown: nothing has run yet, or NeuBird says a "
        "session started that has no prompt; investigation_status and message say which)."
    )
    investigation_status: str | None = Field(
        None, description="NeuBird's own session status, e.g. INVESTIGATION_STATUS_NOT_STARTED (None if not sent)."
    )
    message: str = ""
    progress_percentage: int | None = Field(
        None, description="An estimate from completed chain-of-thought steps (NeuBird publishes no percentage)."
    )
    current_step: str | None = None
    investigation_summary: dict[str, Any] | None = Field(
        None, description="{total_steps, completed_steps, total_sources_consulted, unique_sources}."
    )
    investigation_results: dict[str, Any] | None = Field(None, description=_RESULTS)
    created_at: str = Field("", description="RFC 3339, as NeuBird wrote it ('' when it did not say).")
    updated_at: str = Field("", description="RFC 3339, as NeuBird wrote it ('' when it did not say).")
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


YesNoPartial = Literal["Yes", "No", "Partial"]
_SCORE = "NeuBird's score as sent (shown out of 100 in its console)."


class AccuracyScore(ToolOutput):
    root_cause_correct: YesNoPartial | None = None
    impact_analysis_correct: YesNoPartial | None = None
    timeline_accurate: YesNoPartial | None = None
    overall_score: Number | None = Field(None, description=_SCORE)
    summary: str | None = Field(None, description="NeuBird's one-line judgement of the accuracy.")


class CompletenessScore(ToolOutput):
    data_sources: Number | None = None
    remediation_steps: Number | None = None
    prevention_measures: Number | None = None
    business_impact: Number | None = None
    overall_score: Number | None = Field(None, description=_SCORE)
    summary: str | None = Field(None, description="NeuBird's one-line judgement of the completeness.")


class QualitativeScore(ToolOutput):
    trust_without_review: Literal["Yes", "No", "Maybe"] | None = None
    missing_elements: str | None = None
    additional_notes: str | None = None
    improvement_suggestions: str | None = Field(None, description="NeuBird's suggested improvements, one per line.")
    strengths: list[str] = Field(default_factory=list, description="What NeuBird's scorer found good.")


class AnalysisScore(ToolOutput):
    accuracy: AccuracyScore
    completeness: CompletenessScore
    qualitative: QualitativeScore
    scored_by: str | None = None
    scored_during_call: bool | None = None
    call_recording_url: str | None = None


class ShortSummary(ToolOutput):
    question: str = ""
    analysis: str = ""


class TimeSaved(ToolOutput):
    time_saved_minutes: Number | None = None
    standard_investigation_time_minutes: Number | None = None
    hawkeye_investigation_time_minutes: Number | None = None


class SessionSummary(ToolOutput):
    """The spec's `analysis_score`, plus the summary NeuBird writes (short summary, analysis, action items, time
    saved). A spec field NeuBird did not give is null here and named in `not_provided`."""

    session_uuid: str
    available: bool = Field(description="False while NeuBird has not written the summary yet.")
    analysis_score: AnalysisScore | None = None
    short_summary: ShortSummary | None = None
    analysis: str | None = None
    action_items: list[str] = Field(default_factory=list)
    time_saved: TimeSaved | None = None
    not_provided: list[str] = Field(
        default_factory=list,
        description="Spec fields NeuBird's answer does not give (null above), as paths like "
        "analysis_score.accuracy.root_cause_correct. Its documented summary has scores and short judgements only.",
    )
    raw: dict[str, Any] | None = Field(
        None,
        description="NeuBird's session_summary object exactly as it sent it (fields the contract does not name "
        "appear here and nowhere else).",
    )
    message: str


class PriorityReport(ToolOutput):
    priority: str = ""
    total_incidents: Number | None = None
    investigated_incidents: Number | None = None
    percent_grouped: Number | None = None
    avg_mttr: Number | None = None
    avg_investigation_time_minutes: Number | None = None
    avg_time_saved_minutes: Number | None = None


class IncidentTypeReport(ToolOutput):
    incident_type: str = ""
    priority_reports: list[PriorityReport] = Field(default_factory=list)


class IncidentReport(ToolOutput):
    """The spec's organisation-wide analytics, field for field (a field NeuBird did not send is null and named in
    `not_reported`)."""

    avg_investigation_time_saved_minutes: Number | None = None
    avg_mttr: Number | None = Field(None, description="Mean time to resolution, minutes.")
    end_time: str = ""
    start_time: str = ""
    incident_type_reports: list[IncidentTypeReport] = Field(default_factory=list)
    noise_reduction: Number | None = Field(None, description="A percentage.")
    total_incidents: Number | None = None
    total_investigation_time_saved_hours: Number | None = None
    total_investigations: Number | None = None
    not_reported: list[str] = Field(default_factory=list, description="Top-level fields NeuBird did not send.")


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
