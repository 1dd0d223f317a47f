"""`POST /api/diagnostics`: a Durable orchestration that checks every store and dependency in parallel."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import guarded, json_response
from functions.runs_api import FINISH_ACTIVITY

bp = df.Blueprint()

ORCHESTRATOR = "diagnostics_orchestrator"
CLAIM_ACTIVITY = "diagnostics_claim"
CHECK_ACTIVITY = "diagnostics_check"


@bp.function_name("diagnostics_start")
@bp.route(route="diagnostics", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
async def diagnostics_start(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
    """Start a diagnostics run: 202 `{"run_id", "status_url"}` with `Location: /api/runs/<run_id>`.

    Poll `GET /api/runs/<run_id>` (or the runs.status tool) until `state` is `completed`; `output` is the
    per-check report (Cosmos read/write, Blob read/write, LLM and NeuBird reachability when configured).
    """

    async def start(correlation_id: str) -> func.HttpResponse:
        from functions.orchestration import run_service
        from shared.diagnostics.checks import plan_checks

        deps = wiring.deps()
        principal = await deps.principals.resolve(dict(req.headers))
        started = await run_service(client).start(ORCHESTRATOR, principal, {"checks": plan_checks(deps.settings)}, correlation_id=correlation_id)
        body = {**started.model_dump(), "next_action": f"GET {started.status_url} (or call runs.status) until state is 'completed'; output is the report."}
        return json_response(body, correlation_id, 202, {"Location": started.status_url, "Retry-After": "2"})

    return await guarded(req, start)


@bp.orchestration_trigger(context_name="context")
def diagnostics_orchestrator(context: df.DurableOrchestrationContext):  # type: ignore[no-untyped-def]
    """Claims the run recorded under this instance id (the input is not read), runs its checks, records the report."""
    from shared.diagnostics.checks import summarize

    run_id = context.instance_id
    # No record, or one claimed before: the activity fails and the instance ends Failed having done nothing.
    claimed = yield context.call_activity(CLAIM_ACTIVITY, run_id)
    checks = claimed["plan"]["checks"]
    try:
        context.set_custom_status({"stage": "checking", "checks": len(checks)})
        results = yield context.task_all([context.call_activity(CHECK_ACTIVITY, name) for name in checks])
        report = summarize(results)
    except Exception:
        yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "failed": True})
        raise
    context.set_custom_status({"stage": "done", "checks": len(checks)})
    yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "output": report})
    return report


@bp.activity_trigger(input_name="run_id")
async def diagnostics_claim(run_id: str) -> dict:
    from shared.diagnostics.checks import validate_plan
    from shared.runs.service import RunService

    return await RunService.from_deps(wiring.deps()).claim(run_id, ORCHESTRATOR, validate_plan)


@bp.activity_trigger(input_name="check")
async def diagnostics_check(check: str) -> dict:
    from shared.diagnostics.checks import run_check

    return (await run_check(check, wiring.deps())).model_dump(mode="json")
