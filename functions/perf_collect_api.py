"""collect.run's Durable continuation: probe one URL path per activity, then write the bundle.

The orchestration reads nothing from its input: it claims the run recorded under its own instance id.
Activities get the run id and an index; the probe activity loads the plan and decrypts the run's
secrets itself, so header values and query strings never enter the task hub.
"""

from __future__ import annotations

import azure.durable_functions as df

from functions import wiring
from functions.runs_api import FINISH_ACTIVITY

bp = df.Blueprint()

ORCHESTRATOR = "perf_collect_orchestrator"


@bp.orchestration_trigger(context_name="context")
def perf_collect_orchestrator(context: df.DurableOrchestrationContext):  # type: ignore[no-untyped-def]
    """Output: the bundle (counts, ingest_artifacts, paths). A start without a run record fails having done nothing."""
    run_id = context.instance_id
    claimed = yield context.call_activity("perf_collect_claim", run_id)
    total = len(claimed["plan"]["url_paths"])
    try:
        samples: list = []
        for i in range(total):
            context.set_custom_status({"stage": "probing", "paths_done": i, "paths_total": total})
            samples.extend((yield context.call_activity("perf_collect_path", {"run_id": run_id, "index": i})))
        context.set_custom_status({"stage": "writing bundle", "paths_done": total, "paths_total": total})
        done = yield context.call_activity("perf_collect_finish", {"run_id": run_id, "samples": samples})
    except Exception:
        yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "failed": True})
        raise
    context.set_custom_status({"stage": "done", "paths_done": total, "paths_total": total})
    output = {**done, "state": "completed", "correlation_id": claimed["correlation_id"], "next_action": "Call artifacts.ingest with ingest_artifacts as artifacts."}
    yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "output": output})
    return output


@bp.activity_trigger(input_name="run_id")
async def perf_collect_claim(run_id: str) -> dict:
    from shared.perf.collect.plan import validate_stored_plan
    from shared.runs.service import RunService

    return await RunService.from_deps(wiring.deps()).claim(run_id, ORCHESTRATOR, validate_stored_plan)


@bp.activity_trigger(input_name="job")
async def perf_collect_path(job: dict) -> list:
    from shared.perf.collect.plan import with_secrets
    from shared.perf.collect.run import run_path
    from shared.runs.service import RunService

    d = wiring.deps()
    runs = RunService.from_deps(d)
    doc = await runs.running(job["run_id"], ORCHESTRATOR)
    plan = with_secrets(doc.plan, await runs.open_secrets(doc), doc.workspace_id)
    return await run_path(plan, plan.url_paths[int(job["index"])], d.settings)


@bp.activity_trigger(input_name="job")
async def perf_collect_finish(job: dict) -> dict:
    from shared.perf.collect.plan import StoredPlan
    from shared.perf.collect.run import paths_of
    from shared.perf.service import perf_service
    from shared.runs.service import RunService

    d = wiring.deps()
    doc = await RunService.from_deps(d).running(job["run_id"], ORCHESTRATOR)
    # The bundle goes to the record's owner; the plan's recorded values (names, redacted paths) are all it needs.
    plan = StoredPlan.from_record(doc.plan)
    done = await perf_service(d).finish_collect(doc.workspace_id, plan, job["samples"])
    return {**done, **paths_of(doc.workspace_id, plan.bundle_id)}
