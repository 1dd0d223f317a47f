"""`POST /api/diagnostics`: start the diagnostics orchestration for the caller and hand back its status URL."""

from __future__ import annotations

from pydantic import BaseModel, Field

from shared.health.diagnostics import ORCHESTRATOR, plan
from shared.tools.routes import Answer, RouteCall, RouteSet

routes = RouteSet("health")


class DiagnosticsStarted(BaseModel):
    run_id: str = Field(description="The run's id (get_run_status takes it).")
    status_url: str = Field(description="GET this route (/api/runs/<run_id>) until state is 'completed'.")
    next_action: str


@routes.route("POST", "diagnostics", name="diagnostics_start", status=202, response=DiagnosticsStarted, runs=True)
async def start(call: RouteCall) -> Answer:
    """Start a diagnostics run: 202 `{"run_id", "status_url"}` with `Location: /api/runs/<run_id>`.

    Poll `GET /api/runs/<run_id>` (or the get_run_status tool) until `state` is `completed`; `output` is the
    per-check report: every declared check that applies (Cosmos and Blob round trips, each capability's
    own checks, the LLM and NeuBird when configured), each in its own activity, in parallel.
    """
    started = await call.runs().start(ORCHESTRATOR, call.principal, plan(call.deps), correlation_id=call.correlation_id)
    body = DiagnosticsStarted(
        run_id=started.run_id,
        status_url=started.status_url,
        next_action=(
            f"GET {started.status_url} (or call get_run_status) until state is 'completed'; output is the report."
        ),
    )
    return Answer(body, 202, {"Location": started.status_url, "Retry-After": "2"})
