"""`GET /api/runs/{id}`, `POST /api/runs/{id}/cancel`, and the activity every run's orchestration ends with.

The routes answer the run's owner only (same NOT_FOUND as an unknown id for anyone else). They are
the status URLs the app hands out instead of Durable's management URLs.
"""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import guarded, json_response, read_json_object

bp = df.Blueprint()

FINISH_ACTIVITY = "runs_finish"


@bp.function_name("runs_status")
@bp.route(route="runs/{run_id}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
async def runs_status(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
    """Status of one of your runs: {run_id, kind, state, progress, output, error, created_at, updated_at, next_action}.

    state is pending, running, completed, failed or cancelled; poll until it is final.
    """
    from functions.orchestration import run_service

    async def answer(correlation_id: str) -> func.HttpResponse:
        principal = await wiring.deps().principals.resolve(dict(req.headers))
        status = await run_service(client).status(principal, req.route_params.get("run_id", ""))
        return json_response(status.model_dump(mode="json"), correlation_id, headers={"Cache-Control": "no-store"})

    return await guarded(req, answer)


@bp.function_name("runs_cancel")
@bp.route(route="runs/{run_id}/cancel", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
async def runs_cancel(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
    """Cancel one of your pending or running runs: 200 with its status (state 'cancelled').

    Optional JSON body {"reason": "..."}. A run already cancelled answers its status again; a completed
    or failed run answers 409 CONFLICT.
    """
    from functions.orchestration import run_service
    from shared.core.errors import validation_failed_from_pydantic
    from shared.runs.models import RunCancelRequest

    async def answer(correlation_id: str) -> func.HttpResponse:
        from pydantic import ValidationError

        deps = wiring.deps()
        principal = await deps.principals.resolve(dict(req.headers))
        body = read_json_object(req, deps.settings.max_request_bytes)
        try:
            args = RunCancelRequest.model_validate({**body, "run_id": req.route_params.get("run_id", "")})
        except ValidationError as exc:
            raise validation_failed_from_pydantic(exc) from None
        status = await run_service(client).cancel(principal, args.run_id, args.reason)
        return json_response(status.model_dump(mode="json"), correlation_id)

    return await guarded(req, answer)


@bp.activity_trigger(input_name="outcome")
async def runs_finish(outcome: dict) -> None:
    """Record a claimed run's outcome ({"run_id", "output"} or {"run_id", "failed": true}) and drop its secrets."""
    from shared.runs.service import RunService

    await RunService.from_deps(wiring.deps()).finish(outcome["run_id"], outcome.get("output"), bool(outcome.get("failed")))
