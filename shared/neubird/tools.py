"""The twelve neubird_* tools (../shared/specs/neubird-mcp-server.md): NeuBird's AI-SRE without its API."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Annotated, Any

from pydantic import Field

from shared.neubird import investigate, preferences, projects, sessions, shapes
from shared.neubird.client import ID_PATTERN
from shared.neubird.connection import Connection, open_connection
from shared.neubird.models import (
    DefaultsResult,
    IncidentReport,
    InvestigationOutcome,
    ProjectList,
    SessionDetails,
    SessionList,
    SessionReports,
    SessionSummary,
    StatusOutcome,
    SwitchResult,
)
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolSet

toolset = ToolSet("neubird")

_ID_PATTERN = f"^{ID_PATTERN}$"
_ONE_LINE = r"^[^\x00-\x1f\x7f]*$"


SessionId = Annotated[str, Field(pattern=_ID_PATTERN, description="A session_uuid from a previous answer or list.")]
NeubirdId = Annotated[str, Field(pattern=_ID_PATTERN)]
_PROJECT = (
    "The project's UUID. Default: your default project (yours, else the deployment's), else the only ready one; "
    "with several ready projects and no default the answer is VALIDATION_ERROR listing them (name, uuid)."
)
_SESSION_PROJECT = (
    "The session's project UUID. Optional: found for you (the project you last used the session in, else your "
    "default project, else the instance's other projects) and remembered."
)

_ORG = Field(None, description="Organization UUID; default: yours (or ORGANIZATION_NAME_ROOT).")
_WAIT = Field(False, description="Wait for NeuBird's answer (streamed) instead of answering as soon as it started.")
_MAX_WAIT = Field(
    300,
    ge=1,
    le=3600,
    description="Longest wait in seconds. Up to ~200 s happen in this call; the rest continues in a background "
    "run and the answer is status in_progress with the session_uuid to poll.",
)


class InvestigateAlertRequest(ToolInput):
    alert_id: str = Field(
        min_length=1,
        max_length=1024,
        pattern=_ONE_LINE,
        description="The alert's id as NeuBird knows it (incident_info.id), e.g. "
        "/subscriptions/.../providers/Microsoft.AlertsManagement/alerts/<uuid>.",
    )
    project_uuid: NeubirdId | None = Field(
        None,
        description="The project's UUID. Optional: the alert's sessions are looked for in your default project, "
        "then in the other ready ones; a new session goes to your default (else the only ready project).",
    )
    wait_for_completion: bool = _WAIT
    max_wait_seconds: int = _MAX_WAIT


class CreateInvestigationRequest(ToolInput):
    prompt: str = Field(
        min_length=10, max_length=8000, description="What to investigate, in plain words (at least 10 characters)."
    )
    timeframe: str | None = Field(
        None,
        max_length=200,
        description="Natural-language window: 'last 2 hours', 'past 3 days', 'since 2026-11-01', 'yesterday', "
        "'between 2026-11-01 and 2026-11-03', or an ISO range 'A/B'. Default: your default (last 1 hour).",
    )
    start_time: str | None = Field(None, max_length=64, description="ISO 8601 start (instead of timeframe).")
    end_time: str | None = Field(None, max_length=64, description="ISO 8601 end (instead of timeframe).")
    project_uuid: NeubirdId | None = Field(None, description=_PROJECT)
    wait_for_completion: bool = _WAIT
    max_wait_seconds: int = _MAX_WAIT
    stream_updates: bool = Field(
        False,
        description="Send progress notifications as NeuBird's steps arrive while waiting. Default false (the spec); "
        "omitted, your enable_streaming default from neubird_configure_defaults applies when you set one.",
    )


class StatusRequest(ToolInput):
    session_uuid: SessionId
    project_uuid: NeubirdId | None = Field(None, description=_SESSION_PROJECT)
    include_full_details: bool = Field(True, description="Include the answer, steps and sources once available.")


class ContinueRequest(ToolInput):
    session_uuid: SessionId
    follow_up_prompt: str = Field(min_length=1, max_length=8000, description="The follow-up question or context.")
    project_uuid: NeubirdId | None = Field(None, description=_SESSION_PROJECT)
    wait_for_completion: bool = _WAIT
    max_wait_seconds: int = _MAX_WAIT


class ListProjectsRequest(ToolInput):
    include_inactive: bool = Field(False, description="Also list projects that are not ready.")


class ListSessionsRequest(ToolInput):
    project_uuid: NeubirdId | None = Field(None, description=_PROJECT)
    page: int = Field(1, ge=1, le=1000, description="Page number, 1-based.")
    limit: int = Field(50, ge=1, le=100, description="Sessions per page (at most 100).")
    date_from: str | None = Field(
        None, max_length=40, description="Created on or after: 2026-11-01 or an ISO datetime."
    )
    date_to: str | None = Field(None, max_length=40, description="Created on or before: 2026-11-21 or an ISO datetime.")
    organization_uuid: NeubirdId | None = _ORG
    only_uninvestigated: bool = Field(
        False, description="Only incidents nobody investigated (NOT_STARTED incident sessions)."
    )
    investigation_status: str | None = Field(
        None,
        max_length=64,
        description="INVESTIGATION_STATUS_NOT_STARTED | _IN_PROGRESS | _COMPLETED | _INVESTIGATED | _PAUSED | "
        "_STOPPED (or not_started, in_progress, completed, paused, stopped). Other values are refused.",
    )
    session_type: str | None = Field(
        None,
        max_length=64,
        description="SESSION_TYPE_INCIDENT (alert-born) | SESSION_TYPE_MANUAL (= NeuBird's SESSION_TYPE_CHAT, "
        "sessions a person started) | SESSION_TYPE_CHAT | SESSION_TYPE_USER (or incident, manual, chat, user). "
        "Other values are refused.",
    )
    hide_grouped_incidents: bool = Field(False, description="Hide incidents NeuBird grouped with others.")
    search_term: str | None = Field(
        None, max_length=200, pattern=_ONE_LINE, description="Case-insensitive part of the incident title."
    )
    compact: bool | None = Field(
        None, description="Short rows to save tokens; default: on above 10 results. false forces full rows."
    )


class InspectRequest(ToolInput):
    session_uuid: SessionId
    project_uuid: NeubirdId | None = Field(None, description=_SESSION_PROJECT)
    organization_uuid: NeubirdId | None = _ORG


class ReportRequest(ToolInput):
    session_uuids: list[SessionId] = Field(
        min_length=1, max_length=50, description="Sessions to report on (1 to 50 session_uuids)."
    )
    project_uuid: NeubirdId = Field(description="The project's UUID (required).")


class SummaryRequest(ToolInput):
    session_uuid: SessionId
    project_uuid: NeubirdId | None = Field(None, description=_SESSION_PROJECT)


class IncidentReportRequest(ToolInput):
    pass


class SwitchRequest(ToolInput):
    base_url: str = Field(
        min_length=1,
        max_length=2048,
        description="The instance: a tenant name ('prod'), a host ('prod.app.neubird.ai') or a URL "
        "('https://prod.app.neubird.ai/api').",
    )


class DefaultsRequest(ToolInput):
    default_project_uuid: str | None = Field(
        None, max_length=200, description="Project UUID or name (case-insensitive); '' resets to the deployment's."
    )
    default_organization_uuid: str | None = Field(
        None,
        max_length=128,
        pattern=r"^([A-Za-z0-9][A-Za-z0-9_-]{0,127})?$",
        description="Organization UUID; '' resets.",
    )
    default_timeframe: str | None = Field(None, max_length=200, description="e.g. 'last 1 hour'; '' resets.")
    enable_streaming: bool | None = Field(None, description="Progress notifications while waiting.")


def _investigation(ctx: ToolContext, conn: Connection, args: Any) -> investigate.Investigation:
    return investigate.Investigation(
        conn,
        ctx.deps,
        ctx.orchestrations,
        ctx.report_progress,
        ctx.correlation_id,
        wait=args.wait_for_completion,
        max_wait=args.max_wait_seconds,
        # Omitted (not sent false): the caller's own default, else the deployment's (false unless set).
        streaming=args.stream_updates if "stream_updates" in args.model_fields_set else None,
    )


def _waiting(ctx: ToolContext, inv: investigate.Investigation) -> AbstractAsyncContextManager[None]:
    """Progress at least once a second while the call waits for NeuBird, when the caller wants progress (the
    stream's own steps go out as they come; between them, and while polling, heartbeats say it still waits)."""
    return ctx.waiting("waiting for NeuBird") if inv.wait and inv.tells_progress() else nullcontext()


# -- investigations --------------------------------------------------------------------------------------


@toolset.tool("neubird_investigate_alert", title="Investigate an alert with NeuBird", open_world=True)
async def neubird_investigate_alert(ctx: ToolContext, args: InvestigateAlertRequest) -> InvestigationOutcome:
    """Get NeuBird's root-cause analysis for an alert id: the latest existing RCA if NeuBird already
    investigated it (status found_existing, with investigation_results), else a new investigation
    (status new_investigation), or in_progress when one is already running (it is followed, not restarted).
    With wait_for_completion the call waits for the answer (up to ~200 s in this call, the rest in a
    background run: status in_progress plus session_uuid and run_id to poll with
    neubird_get_investigation_status). Find alert ids with neubird_list_sessions(only_uninvestigated=true).
    NeuBird has no documented filter by alert id: the 500 most recent incident sessions of the project are
    searched (the message says how many were); an alert seen only before those gets a new session.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        inv = _investigation(ctx, conn, args)
        async with _waiting(ctx, inv):
            return await investigate.investigate_alert(inv, args)


@toolset.tool("neubird_create_investigation", title="Start a NeuBird investigation", open_world=True)
async def neubird_create_investigation(ctx: ToolContext, args: CreateInvestigationRequest) -> InvestigationOutcome:
    """Ask NeuBird to investigate anything ("analyse my EKS cluster security") over a time window.

    The timeframe ('last 2 hours', 'since 2026-11-01', 'yesterday', ISO start_time/end_time) is parsed and
    written into the prompt (see enhanced_prompt and timeframe_parsed); the project is the one given, else
    your default, else the only ready project (several and no default: VALIDATION_ERROR with details.projects
    [{name, uuid}]). Without wait_for_completion it answers once NeuBird took the prompt: poll
    neubird_get_investigation_status with the session_uuid. Reversed or future windows are VALIDATION_ERROR.
    Progress notifications only with stream_updates=true (default false).
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        inv = _investigation(ctx, conn, args)
        async with _waiting(ctx, inv):
            return await investigate.create_investigation(inv, args)


@toolset.tool(
    "neubird_get_investigation_status",
    title="NeuBird investigation status",
    read_only=True,
    idempotent=True,
    open_world=True,
)
async def neubird_get_investigation_status(ctx: ToolContext, args: StatusRequest) -> StatusOutcome:
    """Status of a NeuBird investigation, fresh every time: in_progress (with progress_percentage, an estimate
    from completed steps, and current_step), completed (with investigation_results), failed, or unknown (nothing
    investigated yet: investigation_status then says INVESTIGATION_STATUS_NOT_STARTED; message says which).
    project_uuid is found for you when omitted. Poll every 10-15 s while in_progress.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return await investigate.status(conn, ctx.deps, args)


@toolset.tool("neubird_continue_investigation", title="Ask NeuBird a follow-up", open_world=True)
async def neubird_continue_investigation(ctx: ToolContext, args: ContinueRequest) -> InvestigationOutcome:
    """Ask a follow-up in an existing session ("dig deeper into the network policy finding"); NeuBird answers
    with the session's context. Same waiting rules as neubird_create_investigation; the output is the same
    shape with enhanced_prompt = the follow-up as sent and no timeframe_parsed.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        inv = _investigation(ctx, conn, args)
        async with _waiting(ctx, inv):
            return await investigate.continue_investigation(inv, args)


# -- projects and sessions -------------------------------------------------------------------------------


@toolset.tool("neubird_list_projects", title="List NeuBird projects", read_only=True, idempotent=True, open_world=True)
async def neubird_list_projects(ctx: ToolContext, args: ListProjectsRequest) -> ProjectList:
    """List the NeuBird projects of the current instance (ready ones unless include_inactive), marking your
    default. Reused from a 5-minute cache. Set a default with neubird_configure_defaults.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        listed, cached = await projects.projects(conn, ctx.deps)
        default = await projects.default_project(conn, ctx.deps)
        shown = [projects.view(p, default) for p in listed if args.include_inactive or projects.is_ready(p)]
        return ProjectList(
            projects=shown,
            default_project=default,
            cached=cached,
            next_action="Pass a uuid as project_uuid to the other neubird tools, or make it your default with "
            "neubird_configure_defaults."
            if shown
            else "No project to show: include_inactive=true lists the rest.",
        )


@toolset.tool("neubird_list_sessions", title="List NeuBird sessions", read_only=True, idempotent=True, open_world=True)
async def neubird_list_sessions(ctx: ToolContext, args: ListSessionsRequest) -> SessionList:
    """List a project's sessions, most recent first: page/limit (<= 100), date_from/date_to, investigation_status,
    session_type, only_uninvestigated (incidents nobody investigated), hide_grouped_incidents, search_term
    (part of the incident title, any case). Above 10 results rows are compact unless compact=false.
    filters_applied echoes what was used; the hints say how to page and what to do next. Pages are NeuBird's:
    rows other workspaces created here are counted in hidden_count, not shown, so a page can be short;
    has_more says whether to ask for the next page.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return await sessions.list_sessions(conn, ctx.deps, args)


@toolset.tool(
    "neubird_inspect_session", title="Inspect a NeuBird session", read_only=True, idempotent=True, open_world=True
)
async def neubird_inspect_session(ctx: ToolContext, args: InspectRequest) -> SessionDetails:
    """Everything in a session: each prompt cycle's question, status, final answer, chain of thoughts,
    sources and follow-up suggestions. A completed session is reused from your workspace's 1-hour cache
    (your own follow-ups refresh it; another workspace's follow-up shows after the hour, or use
    neubird_get_investigation_status, which is never cached).
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return await sessions.inspect(conn, ctx.deps, args)


@toolset.tool(
    "neubird_get_session_report", title="NeuBird session reports", read_only=True, idempotent=True, open_world=True
)
async def neubird_get_session_report(ctx: ToolContext, args: ReportRequest) -> SessionReports:
    """Summary rows for 1-50 sessions of a project: prompt, summary, console link and time saved (seconds).
    Sessions NeuBird has no row for are listed in `missing`.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return await sessions.reports(conn, args)


@toolset.tool(
    "neubird_get_session_summary", title="NeuBird session summary", read_only=True, idempotent=True, open_world=True
)
async def neubird_get_session_summary(ctx: ToolContext, args: SummaryRequest) -> SessionSummary:
    """A session's analysis_score in the spec's fields (accuracy, completeness, qualitative, scored_by), plus its
    analysis, action items and time saved. NeuBird's summary gives scores and short judgements only: spec fields it
    does not give are null and named in not_provided; NeuBird's own object is under raw. available=false while
    NeuBird has not written it yet (shortly after the investigation ends). project_uuid is found when omitted.
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return await sessions.summary(conn, ctx.deps, args)


@toolset.tool(
    "neubird_get_incident_report", title="NeuBird incident analytics", read_only=True, idempotent=True, open_world=True
)
async def neubird_get_incident_report(ctx: ToolContext, args: IncidentReportRequest) -> IncidentReport:
    """Organisation-wide NeuBird analytics, the spec's fields at the top level: total_incidents,
    total_investigations, avg_mttr (minutes), avg_investigation_time_saved_minutes,
    total_investigation_time_saved_hours, noise_reduction (%), start_time/end_time, incident_type_reports by
    priority (for the whole NeuBird account, every workspace using it included). not_reported names fields NeuBird
    did not send (null).
    """
    async with open_connection(ctx.deps, ctx.principal) as conn:
        return shapes.incident_report(await conn.client.incident_report())


# -- instance and defaults -------------------------------------------------------------------------------


@toolset.tool("neubird_switch_instance", title="Switch NeuBird instance", idempotent=True, open_world=True)
async def neubird_switch_instance(ctx: ToolContext, args: SwitchRequest) -> SwitchResult:
    """Point your NeuBird tools at another instance: 'prod' -> https://prod.app.neubird.ai/api, a host or a full
    URL. Only hosts the deployment allows (default *.app.neubird.ai) are accepted, since the deployment's
    credentials go there. Your next call authenticates there; your cached project list and default project are
    cleared. An instance the deployment no longer allows falls back to NEUBIRD_BASE_URL.
    """
    async with open_connection(ctx.deps, ctx.principal, recover=True) as conn:
        return await preferences.switch_instance(conn, ctx.deps, args.base_url)


@toolset.tool("neubird_configure_defaults", title="Set NeuBird defaults", idempotent=True)
async def neubird_configure_defaults(ctx: ToolContext, args: DefaultsRequest) -> DefaultsResult:
    """Set your defaults for later NeuBird calls: project (UUID or name, checked against the instance),
    organization, timeframe (must parse) and streaming. Omitted fields stay; '' resets one. Called with
    nothing, it shows the current defaults.
    """
    async with open_connection(ctx.deps, ctx.principal, recover=True) as conn:
        return await preferences.configure(conn, ctx.deps, args)
