"""Alert investigation tools: start_alert_investigation, get_alert_investigation, list_alert_investigations,
cancel_alert_investigation (the same service as the /api/investigations routes)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

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
    """Show an investigation: status, phase and progress (live), iterations with each tool call's reason and
    an output preview, and once completed the report (report.analysis is the Markdown to read first;
    report.next_actions offers record_outcome / add_incident with the ids to pass).

    Poll every few seconds while status is pending or running. Investigations of other workspaces are
    NOT_FOUND.
    """
    return await _service(ctx).get(ctx.principal, args.investigation_id)


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
