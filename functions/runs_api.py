"""`GET /api/runs/{id}` and `POST /api/runs/{id}/cancel` (the claim and finish activities are the run frame's,
functions/run_frame.py).

The routes answer the run's owner only (same NOT_FOUND as an unknown id for anyone else). They are
the status URLs the app hands out instead of Durable's management URLs.
"""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions.http import Call, endpoint

bp = df.Blueprint()


@bp.function_name("runs_status")
@bp.route(route="runs/{run_id}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def runs_status(call: Call) -> func.HttpResponse:
    """Status of one of your runs: {run_id, kind, state, progress, output, error, created_at, updated_at, next_action}.

    state is pending, running, completed, failed or cancelled; poll until it is final.
    """
    status = await call.runs().status(call.caller, call.route("run_id"))
    return call.json(status.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


@bp.function_name("runs_cancel")
@bp.route(route="runs/{run_id}/cancel", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def runs_cancel(call: Call) -> func.HttpResponse:
    """Cancel one of your pending or running runs: 200 with its status (state 'cancelled').

    Optional JSON body {"reason": "..."}. A run already cancelled answers its status again; a completed
    or failed run answers 409 CONFLICT.
    """
    from pydantic import ValidationError

    from shared.core.errors import validation_failed_from_pydantic
    from shared.runs.models import RunCancelRequest

    body = call.json_body()
    try:
        args = RunCancelRequest.model_validate({**body, "run_id": call.route("run_id")})
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc) from None
    status = await call.runs().cancel(call.caller, args.run_id, args.reason)
    return call.json(status.model_dump(mode="json"))
