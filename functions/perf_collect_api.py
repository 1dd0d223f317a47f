"""collect.run's Durable continuation: probe one URL path per activity, then write the bundle."""

from __future__ import annotations

import azure.durable_functions as df

from functions import wiring

bp = df.Blueprint()


@bp.orchestration_trigger(context_name="context")
def perf_collect_orchestrator(context: df.DurableOrchestrationContext):  # type: ignore[no-untyped-def]
    """Input {"plan", "correlation_id"} from collect.run; output: the bundle (counts, ingest_artifacts, paths)."""
    job = context.get_input() or {}
    plan = job["plan"]
    paths = plan["url_paths"]
    samples: list = []
    for i, path in enumerate(paths):
        context.set_custom_status({"stage": "probing", "paths_done": i, "paths_total": len(paths)})
        samples.extend((yield context.call_activity("perf_collect_path", {"plan": plan, "path": path})))
    context.set_custom_status({"stage": "writing bundle", "paths_done": len(paths), "paths_total": len(paths)})
    done = yield context.call_activity("perf_collect_finish", {"plan": plan, "samples": samples})
    context.set_custom_status({"stage": "done", "paths_done": len(paths), "paths_total": len(paths)})
    return {**done, "state": "completed", "correlation_id": job.get("correlation_id"),
            "next_action": "Call artifacts.ingest with ingest_artifacts as artifacts."}


@bp.activity_trigger(input_name="job")
async def perf_collect_path(job: dict) -> list:
    from shared.perf.collect import run_path

    return await run_path(job["plan"], job["path"], wiring.deps().settings)


@bp.activity_trigger(input_name="job")
async def perf_collect_finish(job: dict) -> dict:
    from shared.perf.collect import paths_of
    from shared.perf.service import PerfService

    d = wiring.deps()
    done = await PerfService(d.blobs, d.cosmos, d.settings, d.clock).finish_collect(job["plan"], job["samples"])
    return {**done, **paths_of(job["plan"]["workspace_id"], job["plan"]["bundle_id"])}
