"""`GET /api/health`: anonymous readiness of the app and its stores."""

from __future__ import annotations

import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint

bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure-functions declares Blueprint.__init__ without annotations


@bp.function_name("health")
@bp.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint(anonymous=True)
async def health(call: Call) -> func.HttpResponse:
    """Readiness probe: 200 `{"status": "ready"}` once every readiness check answers (Cosmos and Blob
    round trips, each capability's parts of them), 503 `starting` before.

    Anonymous so load balancers and `make run` can poll it; it reveals no versions or settings. The
    checks run at most once per ~10 s per worker (2 s after a failure), whoever polls.
    """
    report = await wiring.readiness().report()
    status = 200 if report.status == "ready" else 503
    return call.json(report.model_dump(mode="json"), status, {"Cache-Control": "no-store"})
