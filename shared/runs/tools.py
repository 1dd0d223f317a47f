"""The get_run_status and cancel_run tools: a Durable run's status and cancellation, for its owner only."""

from __future__ import annotations

from shared.runs.models import RunCancelRequest, RunStatus, RunStatusRequest
from shared.runs.service import RunService
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("runs")


def _runs(ctx: ToolContext) -> RunService:
    # In the Functions app the context carries the service bound to the Durable client; elsewhere the
    # record alone answers (state as last recorded, no live progress).
    return ctx.orchestrations if isinstance(ctx.orchestrations, RunService) else RunService.from_deps(ctx.deps)


def _render(s: RunStatus) -> str:
    return f"Run {s.run_id} ({s.kind}) is {s.state}. {s.next_action}"


@toolset.tool("get_run_status", title="Show a background run's status", read_only=True, idempotent=True, render=_render)
async def runs_status(ctx: ToolContext, args: RunStatusRequest) -> RunStatus:
    """Show a background run's state, progress and, once completed, its output.

    Pass the run_id that collect.run (state 'running') or POST /api/diagnostics returned. state is
    pending, running, completed, failed or cancelled; progress is the run's own report (stage and
    counts) while it runs; output is the result once completed (collect.run: artifact_counts and
    ingest_artifacts for artifacts.ingest). Poll every few seconds until the state is final. Only the
    user who started a run can see it; any other run_id is NOT_FOUND.
    """
    return await _runs(ctx).status(ctx.principal, args.run_id)


@toolset.tool("cancel_run", title="Cancel a background run", idempotent=True, destructive=True, render=_render)
async def runs_cancel(ctx: ToolContext, args: RunCancelRequest) -> RunStatus:
    """Cancel a pending or running background run that you started; returns its status (state 'cancelled').

    Work already done is kept (e.g. probes already sent), nothing more is done. Cancelling a run that
    is already cancelled returns its status again; a completed or failed run answers CONFLICT (read
    it with get_run_status instead). Any run_id that is not yours is NOT_FOUND.
    """
    return await _runs(ctx).cancel(ctx.principal, args.run_id, args.reason)
