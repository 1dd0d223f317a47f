"""`GET /api/runs/{id}`, `POST /api/runs/{id}/cancel`, and the two activities every run's orchestration
starts and ends with (claim, finish).

The routes answer the run's owner only (same NOT_FOUND as an unknown id for anyone else). They are
the status URLs the app hands out instead of Durable's management URLs.
"""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint

bp = df.Blueprint()

CLAIM_ACTIVITY = "runs_claim"
FINISH_ACTIVITY = "runs_finish"


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


@bp.activity_trigger(input_name="claim")
async def runs_claim(claim: dict) -> dict:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Claim the run recorded under {"run_id"} for orchestration {"orchestrator"} once, re-validating its stored plan.

    The orchestrator passes its own (constant) name; the run id is its instance id. Fails, so the
    orchestration ends having done nothing, when the record is missing, foreign or claimed before.
    """
    from shared.runs.service import RunService

    deps = wiring.deps()
    declared = wiring.catalogue().orchestrations[claim["orchestrator"]]
    return await RunService.from_deps(deps).claim(
        claim["run_id"], declared.name, lambda plan: declared.validate_plan(plan, deps)
    )


@bp.activity_trigger(input_name="outcome")
async def runs_finish(outcome: dict) -> None:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Record a claimed run's outcome ({"run_id", "output"} or {"run_id", "failed": true}) and drop its secrets."""
    from shared.runs.service import RunService

    await RunService.from_deps(wiring.deps()).finish(
        outcome["run_id"], outcome.get("output"), bool(outcome.get("failed"))
    )
