"""The health tools: health.check and whoami."""

from __future__ import annotations

from shared.health.models import HealthCheckRequest, HealthReport, WhoAmI, WhoAmIRequest
from shared.health.service import health_report
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("health")


def _render(report: HealthReport) -> str:
    stores = ", ".join(f"{c.name} {'ok' if c.ok else 'DOWN: ' + (c.error or '?')}" for c in report.stores)
    settings = "".join(f"; {problem}" for problem in report.settings)
    return (
        f"Firebreak {report.version} ({report.build_commit}) is {report.status}: {stores}; LLM {report.llm.mode}"
        f"{settings}."
    )


@toolset.tool("health.check", title="Check Firebreak health", read_only=True, idempotent=True, render=_render)
async def health_check(ctx: ToolContext, args: HealthCheckRequest) -> HealthReport:
    """Check that Firebreak and its stores work before relying on other tools.

    Writes a probe to Cosmos DB and Blob storage and reads it back (and runs each capability's own
    readiness checks), and reports versions, the build commit, and whether an LLM is configured
    (without one, LLM features use their rule-based path). Returns `status` 'ok' or 'degraded' with
    a per-store result. When degraded, tools that need the failing store will fail too: fix the
    store first (see `next_action`).
    """
    return await health_report(ctx.deps, include_versions=args.include_versions)


@toolset.tool("whoami", title="Show the calling principal", read_only=True, idempotent=True)
async def whoami(ctx: ToolContext, args: WhoAmIRequest) -> WhoAmI:
    """Show which workspace and user your credentials resolve to.

    Use it when a tool answers NOT_FOUND for data you expect to see: the data may live in another
    workspace than the one your API key or token maps to.
    """
    p = ctx.principal
    return WhoAmI(workspace_id=p.workspace_id, user_id=p.user_id, source=p.source)
