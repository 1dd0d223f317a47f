"""Alert investigation tools: start_alert_investigation, get_alert_investigation, get_investigation_tool_output,
list_alert_investigations, get_investigation_metrics, cancel_alert_investigation (the same service as the
/api/investigations routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from shared.investigations import resources
from shared.investigations.alerts import MAX_NAME_CHARS
from shared.investigations.call_output import (
    DEFAULT_OUTPUT_CHARS,
    MAX_OUTPUT_CHARS,
    MAX_OUTPUT_OFFSET,
    CallOutput,
)
from shared.investigations.metrics import InvestigationMetrics
from shared.investigations.service import (
    InvestigationList,
    InvestigationService,
    InvestigationView,
    StartResult,
)
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolSet

toolset = ToolSet("investigations")

_ID = Field(
    min_length=1,
    max_length=100,
    description="The investigation_id start_alert_investigation (or POST /api/investigations) returned.",
)


class StartRequest(ToolInput):
    alert: dict[str, Any] = Field(
        description=(
            "The alert: a generic alert {title, description, severity, labels, annotations: {runbook_url}, source, "
            "starts_at, cluster, namespace}, a Prometheus Alertmanager webhook payload (one investigation per "
            "firing alert) or an Azure Monitor common-alert-schema payload."
        )
    )


class GetRequest(ToolInput):
    investigation_id: str = _ID


class OutputRequest(ToolInput):
    investigation_id: str = _ID
    call_id: str = Field(
        min_length=1,
        max_length=64,
        description="The call's call_id in get_alert_investigation (iterations[].calls[].call_id), e.g. 'i1-c2'.",
    )
    offset: int = Field(
        0,
        ge=0,
        le=MAX_OUTPUT_OFFSET,
        description="First character to return, from 0; pass the previous page's next_offset to read on.",
    )
    limit: int = Field(
        DEFAULT_OUTPUT_CHARS, ge=1, le=MAX_OUTPUT_CHARS, description="Characters to return at most (one page)."
    )


class MetricsRequest(ToolInput):
    since: datetime | None = Field(
        None,
        description="Only investigations created at or after this time: ISO 8601, e.g. 2026-11-01 or "
        "2026-11-01T08:00:00Z (no zone: UTC). Default: all.",
    )
    alert_name: str | None = Field(
        None, min_length=1, max_length=MAX_NAME_CHARS, description="Only this alert name (alertname), exactly."
    )


class ListRequest(ToolInput):
    limit: int = Field(20, ge=1, le=100, description="Investigations per page.")
    continuation: str | None = Field(None, max_length=4_096, description="The continuation of the previous page.")


class CancelRequest(ToolInput):
    investigation_id: str = _ID
    reason: str | None = Field(
        None, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="Why (one line, kept with the run)."
    )


def _service(ctx: ToolContext) -> InvestigationService:
    return InvestigationService(ctx.deps, ctx.orchestrations)


def _render_start(r: StartResult) -> str:
    if not r.started:
        return r.next_action
    ids = ", ".join(f"{s.investigation_id} ({s.alert_name})" for s in r.started)
    return f"Started {len(r.started)} investigation(s): {ids}. {r.next_action}"


def _render_output(o: CallOutput) -> str:
    more = f" Next page: offset {o.next_offset}." if o.next_offset is not None else ""
    head = (
        f"{o.tool} (call {o.call_id}, {'error, ' if o.is_error else ''}characters {o.offset}-{o.offset + len(o.text)} "
        f"of {o.total_chars}).{more}"
    )
    return f"{head}\n\n{o.text}"


def _render_metrics(m: InvestigationMetrics) -> str:
    t = m.totals
    total = (
        f"{t.investigations} investigation(s): {t.completed} completed, {t.failed} failed, {t.cancelled} cancelled, "
        f"{t.running + t.pending} running; mean {t.mean_iterations} iterations, {t.mean_tool_calls} tool calls."
    )
    lines = [
        total,
        *(
            f"- {a.alert_name}: {a.investigations} run, completion {a.completion_rate:.0%}, failure "
            f"{a.failure_rate:.0%}, mean {a.mean_iterations} iterations / {a.mean_tool_calls} calls"
            for a in m.alerts[:20]
        ),
        m.note,
    ]
    return "\n".join(lines)


def _render_view(v: InvestigationView) -> str:
    if v.status == "completed" and v.report:
        return f"Investigation {v.investigation_id} completed ({v.path} path).\n\n{v.report.get('analysis', '')}"
    percent = v.progress.get("percent")
    return f"Investigation {v.investigation_id} is {v.status} ({v.phase}, {percent}%). {v.next_action}"


@toolset.tool("start_alert_investigation", title="Investigate an alert", render=_render_start)
async def start_alert_investigation(ctx: ToolContext, args: StartRequest) -> StartResult:
    """Start an SRE-style investigation of an alert in the background; returns investigation ids at once.

    Pass the alert payload as `alert`: a generic alert (title, description, severity, labels,
    annotations.runbook_url, cluster, namespace), an Alertmanager webhook payload (N firing alerts start
    N investigations; resolved ones none) or an Azure Monitor common-schema payload. Each investigation
    reads the runbook, lists the configured MCP servers' tools, asks debug memory whether the alert was
    seen before, then for up to 5 iterations (15 tool calls) chooses calls (the LLM, or rules when none
    is configured), runs them and writes a report: root cause, quoted evidence, remediation. Then poll
    get_alert_investigation with each investigation_id until status is 'completed'.
    """
    return await _service(ctx).start(ctx.principal, args.alert, ctx.correlation_id)


@toolset.tool(
    "get_alert_investigation", title="Show an alert investigation", read_only=True, idempotent=True, render=_render_view
)
async def get_alert_investigation(ctx: ToolContext, args: GetRequest) -> InvestigationView:
    """Show an investigation: status, phase and progress (live), iterations with each tool call's call_id, reason
    and an output preview, and once completed the report (report.analysis is the Markdown to read first;
    report.next_actions offers record_outcome / add_incident with the ids to pass).

    Poll every few seconds while status is pending or running. A preview is the first 1,000 characters of an
    inline output (none for outputs kept in Blob): read a call's whole output with
    get_investigation_tool_output {investigation_id, call_id}. Investigations of other workspaces are NOT_FOUND.
    """
    return await _service(ctx).get(ctx.principal, args.investigation_id)


@toolset.tool(
    "get_investigation_tool_output",
    title="Read one tool call's whole output",
    read_only=True,
    idempotent=True,
    render=_render_output,
)
async def get_investigation_tool_output(ctx: ToolContext, args: OutputRequest) -> CallOutput:
    """Read one tool call's whole stored output, a page of characters at a time, with its tool, args and is_error.

    Take call_id from get_alert_investigation (iterations[].calls[].call_id, e.g. 'i1-c2'). Each answer holds
    `limit` characters (default 20,000, at most 100,000) from `offset`; while next_offset is not null, call
    again with offset=next_offset. total_chars is the whole length. An unknown call_id, or an investigation
    of another workspace, is NOT_FOUND; an offset past the end is VALIDATION_ERROR.
    """
    return await _service(ctx).call_output(
        ctx.principal, args.investigation_id, args.call_id, offset=args.offset, limit=args.limit
    )


@toolset.tool(
    "get_investigation_metrics",
    title="Alert investigation metrics",
    read_only=True,
    idempotent=True,
    render=_render_metrics,
)
async def get_investigation_metrics(ctx: ToolContext, args: MetricsRequest) -> InvestigationMetrics:
    """Aggregate metrics of your workspace's alert investigations, per alert name and in total.

    How many ran, completed / failed / cancelled / running counts and rates, mean iterations, mean tool
    calls, mean duration, and tool usage (tool name -> calls and errors).

    Narrow with `since` (ISO time) and `alert_name`. At most the newest 1,000 records are read (the
    FIREBREAK_INVESTIGATIONS_METRICS_MAX_RECORDS setting); when more matched, `capped` is true and the note
    says so: narrow the window to count older ones. Other workspaces' investigations are never counted.
    """
    return await _service(ctx).metrics(ctx.principal, args.since, args.alert_name)


@toolset.tool("list_alert_investigations", title="List alert investigations", read_only=True, idempotent=True)
async def list_alert_investigations(ctx: ToolContext, args: ListRequest) -> InvestigationList:
    """List your workspace's investigations, newest first: id, status, phase, progress, path, alert name.

    Page with `continuation`. Open one with get_alert_investigation.
    """
    return await _service(ctx).list(ctx.principal, args.limit, args.continuation)


@toolset.tool(
    "cancel_alert_investigation",
    title="Cancel an alert investigation",
    destructive=True,
    idempotent=True,
    render=_render_view,
)
async def cancel_alert_investigation(ctx: ToolContext, args: CancelRequest) -> InvestigationView:
    """Stop a pending or running investigation; calls already made stay in its record, no report is written.

    Cancelling a cancelled one answers its state again; a completed or failed one is CONFLICT.
    """
    return await _service(ctx).cancel(ctx.principal, args.investigation_id, args.reason)


# Completed investigations' reports as MCP resources (shared/investigations/resources.py).
toolset.resource(resources.REPORTS)
