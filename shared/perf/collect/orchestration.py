"""collect.run's Durable continuation: probe one URL path per activity, then write the bundle.

The orchestration reads nothing from its input: the runs frame claims the run recorded under its
instance id and hands this code the stored plan (recorded values only). The probe activity rejoins
the plan with the run's decrypted secrets itself, so header values and unrecorded query strings never
enter the task hub.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from shared.perf.collect.plan import ORCHESTRATOR, StoredPlan, validate_stored_plan, with_secrets
from shared.perf.collect.run import paths_of, run_path
from shared.tools.capability import ActiveRun, Orchestration, RunContext
from shared.tools.deps import Deps

PROBE_ACTIVITY = "perf_collect_path"
BUNDLE_ACTIVITY = "perf_collect_finish"


def orchestrate(ctx: RunContext, stored: dict[str, Any]) -> Generator[Any, Any, dict[str, Any]]:
    """Deterministic: one probe activity per path in order, then the bundle. Output: counts, ingest_artifacts, paths."""
    total = len(stored["url_paths"])
    samples: list[Any] = []
    for i in range(total):
        ctx.set_custom_status({"stage": "probing", "paths_done": i, "paths_total": total})
        samples.extend((yield ctx.call_activity(PROBE_ACTIVITY, i)))
    ctx.set_custom_status({"stage": "writing bundle", "paths_done": total, "paths_total": total})
    done = yield ctx.call_activity(BUNDLE_ACTIVITY, samples)
    ctx.set_custom_status({"stage": "done", "paths_done": total, "paths_total": total})
    return {
        **done,
        "state": "completed",
        "correlation_id": ctx.correlation_id,
        "next_action": "Call artifacts.ingest with ingest_artifacts as artifacts.",
    }


async def probe_path(run: ActiveRun, index: Any, deps: Deps) -> list[dict[str, Any]]:
    """Activity: time path number `index` of the run's plan, with the run's own secret headers."""
    plan = with_secrets(run.plan, await run.secrets(), run.workspace_id)
    return await run_path(plan, plan.url_paths[int(index)], deps.settings)


async def write_bundle(run: ActiveRun, samples: Any, deps: Deps) -> dict[str, Any]:
    """Activity: write the bundle for the run's owner; the plan's recorded values (names, redacted paths)
    are all it needs."""
    from shared.perf.service import perf_service

    plan = StoredPlan.from_record(run.plan)
    done = await perf_service(deps).finish_collect(run.workspace_id, plan, list(samples))
    return {**done, **paths_of(run.workspace_id, plan.bundle_id)}


COLLECT = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={PROBE_ACTIVITY: probe_path, BUNDLE_ACTIVITY: write_bundle},
    validate_plan=lambda stored, _deps: validate_stored_plan(stored),
    description="collect.run beyond one request: one activity per URL path, then the bundle.",
)
