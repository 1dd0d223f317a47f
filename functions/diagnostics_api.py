"""`POST /api/diagnostics`: start the health capability's diagnostics orchestration for the caller."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions.http import Call, endpoint

bp = df.Blueprint()


@bp.function_name("diagnostics_start")
@bp.route(route="diagnostics", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def diagnostics_start(call: Call) -> func.HttpResponse:
    """Start a diagnostics run: 202 `{"run_id", "status_url"}` with `Location: /api/runs/<run_id>`.

    Poll `GET /api/runs/<run_id>` (or the get_run_status tool) until `state` is `completed`; `output` is the
    per-check report: every declared check that applies (Cosmos and Blob round trips, each capability's
    own checks, the LLM and NeuBird when configured), each in its own activity, in parallel.
    """
    from shared.health.diagnostics import ORCHESTRATOR, plan

    started = await call.runs().start(ORCHESTRATOR, call.caller, plan(call.deps), correlation_id=call.correlation_id)
    body = {
        **started.model_dump(),
        "next_action": (
            f"GET {started.status_url} (or call get_run_status) until state is 'completed'; output is the report."
        ),
    }
    return call.json(body, 202, {"Location": started.status_url, "Retry-After": "2"})
