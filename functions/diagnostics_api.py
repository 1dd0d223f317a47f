"""`POST /api/diagnostics`: a Durable orchestration that checks every store and dependency in parallel."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import guarded

bp = df.Blueprint()

ORCHESTRATOR = "diagnostics_orchestrator"
CHECK_ACTIVITY = "diagnostics_check"


@bp.function_name("diagnostics_start")
@bp.route(route="diagnostics", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
async def diagnostics_start(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
    """Start a diagnostics run: 202 with Durable's check-status payload (`id`, `statusQueryGetUri`, ...).

    Poll `statusQueryGetUri` until `runtimeStatus` is `Completed`; `output` is the per-check report
    (Cosmos read/write, Blob read/write, LLM and NeuBird reachability when configured).
    """

    async def start(correlation_id: str) -> func.HttpResponse:
        from shared.diagnostics.checks import plan_checks

        deps = wiring.deps()
        await deps.principals.resolve(dict(req.headers))
        instance_id = await client.start_new(ORCHESTRATOR, None, {"checks": plan_checks(deps.settings), "correlation_id": correlation_id})
        return client.create_check_status_response(req, instance_id)

    return await guarded(req, start)


@bp.orchestration_trigger(context_name="context")
def diagnostics_orchestrator(context: df.DurableOrchestrationContext):  # type: ignore[no-untyped-def]
    from shared.diagnostics.checks import summarize

    plan = context.get_input() or {}
    checks = plan.get("checks", [])
    context.set_custom_status({"stage": "checking", "checks": len(checks)})
    results = yield context.task_all([context.call_activity(CHECK_ACTIVITY, name) for name in checks])
    context.set_custom_status({"stage": "done", "checks": len(checks)})
    return summarize(results)


@bp.activity_trigger(input_name="check")
async def diagnostics_check(check: str) -> dict:
    from shared.diagnostics.checks import run_check

    return (await run_check(check, wiring.deps())).model_dump(mode="json")
