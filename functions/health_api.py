"""`GET /api/health`: anonymous readiness of the app and both stores."""

from __future__ import annotations

import azure.functions as func

from functions import wiring
from functions.http import endpoint, json_response

bp = func.Blueprint()


@bp.function_name("health")
@bp.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint
async def health(req: func.HttpRequest, correlation_id: str) -> func.HttpResponse:
    """Readiness probe: 200 `{"status": "ready"}` once Cosmos and Blob answer a round trip, 503 `starting` before.

    Anonymous so load balancers and `make run` can poll it; it reveals no versions or settings. The
    round trip is made at most once per ~10 s per worker (2 s after a failure), whoever polls.
    """
    from shared.health.models import ReadinessReport

    stores = await wiring.readiness().stores()
    ready = all(s.ok for s in stores)
    report = ReadinessReport(status="ready" if ready else "starting", stores=stores)
    return json_response(report.model_dump(mode="json"), correlation_id, 200 if ready else 503, {"Cache-Control": "no-store"})
