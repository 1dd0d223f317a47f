"""The wait run's poll: one inspect of the run's session with the deployment's account (never cached)."""

from __future__ import annotations

from typing import Any

from shared.core.outbound import OutboundGuard
from shared.neubird.client import ClientLimits, Credentials, NeubirdClient
from shared.neubird.connection import not_configured, runtime
from shared.neubird.settings import NeubirdSettings
from shared.neubird.waiting import snapshot
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps


async def poll_once(run: ActiveRun, deps: Deps) -> dict[str, Any]:
    settings = deps.settings.section(NeubirdSettings)
    if not settings.configured:
        raise not_configured(settings)
    assert settings.email  # configured
    assert settings.password
    plan = run.plan
    rt = runtime(deps)
    async with NeubirdClient(
        plan["base_url"],
        Credentials(settings.email, settings.password),
        guard=OutboundGuard(deps.settings),
        tokens=rt.tokens,
        limits=ClientLimits.from_settings(settings),
        on_call=rt.count,
    ) as client:
        found = await client.inspect(
            plan["session_uuid"], plan["project_uuid"], plan.get("organization_uuid") or "ORGANIZATION_NAME_ROOT"
        )
    status, results, progress = snapshot(found)
    return {"status": status, "progress": progress, "investigation_results": results}
