"""The wait run's poll: one inspect of the run's session with the deployment's account (never cached)."""

from __future__ import annotations

from shared.neubird.connection import not_configured, runtime
from shared.neubird.settings import NeubirdSettings
from shared.neubird.wait_models import PollSnapshot
from shared.neubird.wait_plan import validate_plan
from shared.neubird.waiting import compact_results, snapshot
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps


async def poll_once(run: ActiveRun, deps: Deps) -> PollSnapshot:
    settings = deps.settings.section(NeubirdSettings)
    if not settings.configured:
        raise not_configured(settings)
    plan = validate_plan(run.plan, deps)  # the stored record again, so checked again (wait_plan.py)
    async with runtime(deps).client(deps, plan["base_url"]) as client:
        found = await client.inspect(
            plan["session_uuid"], plan["project_uuid"], plan.get("organization_uuid") or "ORGANIZATION_NAME_ROOT"
        )
    status, results, progress = snapshot(found)
    # Every poll's answer is kept in the orchestration's history: results (cut) only once the investigation ended.
    return PollSnapshot(status=status, progress=progress, investigation_results=compact_results(results))
