"""`GET /api/runs/{run_id}` and `POST /api/runs/{run_id}/cancel`: a run's status and cancellation, for its owner.

These are the status URLs the app hands out (`RunStarted.status_url`) instead of Durable's management URLs.
Anyone but the run's starter gets the same NOT_FOUND as for an unknown id. They serve the get_run_status
and cancel_run tools' work with the tools' own input models.
"""

from __future__ import annotations

from typing import cast

from pydantic import Field

from shared.core.errors import ValidationFailed
from shared.runs.models import RunCancelRequest, RunStatus
from shared.tools.routes import RouteBody, RouteCall, RouteParams, RouteSet, as_model

routes = RouteSet("runs")


class RunIdParams(RouteParams):
    run_id: str = Field(min_length=1, max_length=100, description="The run_id a starter (or its status_url) gave.")


class RunCancelBody(RouteBody):
    reason: str | None = Field(
        None, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="Why you cancel it (one line, kept)."
    )
    run_id: str | None = Field(None, description="Optional; the path names the run, and another id here is refused.")


@routes.route("GET", "runs/{run_id}", name="runs_status", errors=(404,), runs=True)
async def status(call: RouteCall, *, params: RunIdParams) -> RunStatus:
    """Status of one of your runs: {run_id, kind, state, progress, output, error, created_at, updated_at, next_action}.

    state is pending, running, completed, failed or cancelled; poll until it is final. Anyone else's run is 404.
    """
    return cast(RunStatus, await call.runs().status(call.principal, params.run_id))


@routes.route("POST", "runs/{run_id}/cancel", name="runs_cancel", errors=(404, 409), runs=True)
async def cancel(call: RouteCall, *, params: RunIdParams, body: RunCancelBody) -> RunStatus:
    """Cancel one of your pending or running runs: 200 with its status (state 'cancelled').

    Optional JSON body {"reason": "..."}. A run already cancelled answers its status again; a completed
    or failed run answers 409 CONFLICT.
    """
    if body.run_id is not None and body.run_id != params.run_id:
        raise ValidationFailed.on_field(
            "run_id",
            "differs from the path",
            "run_id in the body differs from the one in the path",
            suggestions=['Send only {"reason"} in the body; the path names the run.'],
        )
    args = as_model(RunCancelRequest, {"run_id": params.run_id, "reason": body.reason})
    return cast(RunStatus, await call.runs().cancel(call.principal, args.run_id, args.reason))
