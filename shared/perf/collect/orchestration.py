"""collect.run's Durable continuation: probe one URL path per activity, then write the bundle.

The orchestration reads nothing from its input: the runs frame claims the run recorded under its
instance id and hands this code the stored plan (recorded values only). The probe activity rejoins
the plan with the run's decrypted secrets itself, so header values and unrecorded query strings never
enter the task hub.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from shared.perf.collect.plan import ORCHESTRATOR, StoredPlan, with_secrets
from shared.perf.collect.run import paths_of, run_path
from shared.perf.collect.run_models import BundleWritten, CollectOutput, ProbeRequest, Sample, Samples
from shared.tools.capability import ActiveRun, ActivitySpec, Orchestration, RunContext
from shared.tools.deps import Deps

PROBE_ACTIVITY = "perf_collect_path"
BUNDLE_ACTIVITY = "perf_collect_finish"


def orchestrate(ctx: RunContext, stored: StoredPlan) -> Generator[Any, Any, CollectOutput]:
    """Deterministic: one probe activity per path in order, then the bundle. Output: counts, ingest_artifacts, paths."""
    total = len(stored.url_paths)
    samples: list[Sample] = []
    for i in range(total):
        ctx.set_custom_status({"stage": "probing", "paths_done": i, "paths_total": total})
        probed: Samples = yield ctx.call_activity(PROBE_ACTIVITY, ProbeRequest(index=i))
        samples.extend(probed.samples)
    ctx.set_custom_status({"stage": "writing bundle", "paths_done": total, "paths_total": total})
    done: BundleWritten = yield ctx.call_activity(BUNDLE_ACTIVITY, Samples(samples=samples))
    ctx.set_custom_status({"stage": "done", "paths_done": total, "paths_total": total})
    return CollectOutput(**done.model_dump(), correlation_id=ctx.correlation_id)


async def probe_path(run: ActiveRun, asked: ProbeRequest, deps: Deps) -> Samples:
    """Activity: time path number `index` of the run's plan, with the run's own secret headers."""
    plan = with_secrets(run.plan, await run.secrets(), run.workspace_id)
    if asked.index >= len(plan.url_paths):
        raise ValueError("the path is not in this run's plan")
    return Samples.model_validate({"samples": await run_path(plan, plan.url_paths[asked.index], deps.settings)})


async def write_bundle(run: ActiveRun, probed: Samples, deps: Deps) -> BundleWritten:
    """Activity: write the bundle for the run's owner; the plan's recorded values (names, redacted paths)
    are all it needs."""
    from shared.perf.service import perf_service

    plan = StoredPlan.from_record(run.plan)
    samples = [s.model_dump(mode="json") for s in probed.samples]
    done = await perf_service(deps).finish_collect(run.workspace_id, plan, samples)
    return BundleWritten.model_validate({**done, **paths_of(run.workspace_id, plan.bundle_id)})


COLLECT = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={
        PROBE_ACTIVITY: ActivitySpec(probe_path, input=ProbeRequest, output=Samples),
        BUNDLE_ACTIVITY: ActivitySpec(write_bundle, input=Samples, output=BundleWritten),
    },
    plan=StoredPlan,
    validate_plan=lambda stored, _deps: StoredPlan.from_record(stored),
    description="collect.run beyond one request: one activity per URL path, then the bundle.",
)
