"""`/api/investigations`: start investigations from an alert payload, list, read and cancel them, read one
call's whole output and the workspace's metrics.

Thin over shared/investigations/service.py, which the MCP tools use too; where a tool does the same work
the route takes the tool's input model, so REST, MCP and per-tool HTTP validate alike. Answers name the
app's own status route, never Durable's management URLs; reads are scoped to the caller's workspace
(another workspace's id is 404, like an unknown one).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from pydantic import Field, RootModel, field_validator

from shared.core.errors import ValidationFailed
from shared.investigations import tools
from shared.investigations.alerts import ACCEPTED_FORMATS, MAX_NAME_CHARS
from shared.investigations.call_output import DEFAULT_OUTPUT_CHARS, MAX_OUTPUT_CHARS, MAX_OUTPUT_OFFSET, CallOutput
from shared.investigations.metrics import InvestigationMetrics
from shared.investigations.service import InvestigationList, InvestigationService, InvestigationView, StartResult
from shared.tools.routes import Answer, RouteBody, RouteCall, RouteParams, RouteSet, as_model

routes = RouteSet("investigations")

_ID = "The investigation_id POST /api/investigations (or a list) returned."


def _service(call: RouteCall) -> InvestigationService:
    return InvestigationService(call.deps, call.runs())


class AlertPayload(RootModel[dict[str, Any]]):
    """An alert payload: a generic alert {title, description, severity (critical|warning|info|none), labels,
    annotations (runbook_url), source, starts_at (RFC 3339), cluster, namespace}; a Prometheus Alertmanager
    webhook payload (version "4", alerts[]: one investigation per firing alert); or an Azure Monitor alert in
    the common alert schema (schemaId "azureMonitorCommonAlertSchema")."""


class ListParams(RouteParams):
    limit: int = Field(20, ge=1, le=100, description="Investigations per page (1..100).")
    continuation: str | None = Field(None, max_length=4_096, description="The continuation of the previous page.")

    @field_validator("limit", mode="before")
    @classmethod
    def _empty_is_default(cls, value: Any) -> Any:
        return 20 if value == "" else value


class InvestigationIdParams(RouteParams):
    investigation_id: str = Field(min_length=1, max_length=100, description=_ID)


class CancelBody(RouteBody):
    reason: str | None = Field(
        None, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="Why (one line, kept with the run)."
    )
    investigation_id: str | None = Field(
        None, description="Optional; the path names the investigation, and another id here is refused."
    )


@routes.route(
    "POST",
    "investigations",
    name="investigations_start",
    status=202,
    other_statuses=(200,),
    response=StartResult,
    runs=True,
    body_hint=ACCEPTED_FORMATS,
)
async def start(call: RouteCall, *, body: AlertPayload) -> Answer:
    """Start investigations from an alert payload: 202 {format, started: [{investigation_id, status_url}], ...}.

    The body is a generic alert, an Alertmanager webhook payload (one investigation per firing alert) or
    an Azure Monitor common-alert-schema payload; 202 carries `Location` (the first investigation) and
    `Retry-After`. Only resolved alerts: 200 with `started` empty. A malformed or unknown payload is 400
    VALIDATION_ERROR naming the field, and nothing starts.
    """
    result = await _service(call).start(call.principal, body.root, call.correlation_id)
    if not result.started:
        return Answer(result, 200)
    return Answer(result, 202, {"Location": result.started[0].status_url, "Retry-After": "5"})


@routes.route("GET", "investigations", name="investigations_list", runs=True)
async def list_investigations(call: RouteCall, *, params: ListParams) -> InvestigationList:
    """Your workspace's investigations, newest first: ?limit=1..100 (20), ?continuation=<from the last page>."""
    return await _service(call).list(call.principal, params.limit, params.continuation or None)


@routes.route("GET", "investigations/{investigation_id}", name="investigations_get", errors=(404,), runs=True)
async def get(call: RouteCall, *, params: InvestigationIdParams) -> InvestigationView:
    """One investigation: status, phase, live progress, iterations and, once completed, the report.

    Iterations list the calls with their reasons and output previews. Another workspace's id is 404
    NOT_FOUND, like an unknown one.
    """
    return await _service(call).get(call.principal, params.investigation_id)


@routes.route(
    "POST", "investigations/{investigation_id}/cancel", name="investigations_cancel", errors=(404, 409), runs=True
)
async def cancel(call: RouteCall, *, params: InvestigationIdParams, body: CancelBody) -> InvestigationView:
    """Cancel a pending or running investigation: 200 with its state (cancelled). Optional body {"reason"}.

    A completed or failed one is 409 CONFLICT.
    """
    if body.investigation_id is not None and body.investigation_id != params.investigation_id:
        # The path names the investigation; a body naming another one is a mistake, not silently overruled.
        raise ValidationFailed.on_field(
            "investigation_id",
            "differs from the path",
            "investigation_id in the body differs from the one in the path",
            suggestions=['Send only {"reason"} in the body; the path names the investigation.'],
        )
    args = as_model(tools.CancelRequest, {"investigation_id": params.investigation_id, "reason": body.reason})
    return await _service(call).cancel(call.principal, args.investigation_id, args.reason)


class CallOutputParams(RouteParams):
    investigation_id: str = Field(min_length=1, max_length=100, description="The investigation's id.")
    call_id: str = Field(min_length=1, max_length=64, description="The call's call_id (e.g. i1-c2).")
    offset: int = Field(0, ge=0, le=MAX_OUTPUT_OFFSET, description="First character to return, from 0.")
    limit: int = Field(
        DEFAULT_OUTPUT_CHARS, ge=1, le=MAX_OUTPUT_CHARS, description="Characters to return at most (one page)."
    )


class MetricsParams(RouteParams):
    since: datetime | None = Field(
        None, description="Only investigations created at or after this ISO 8601 time (no zone: UTC)."
    )
    alert_name: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS, description="Only this alert name.")


@routes.route(
    "GET", "investigations/{investigation_id}/calls/{call_id}/output", name="investigations_call_output", errors=(404,)
)
async def call_output(call: RouteCall, *, params: CallOutputParams) -> CallOutput:
    """One tool call's whole stored output, `limit` characters (20,000; at most 100,000) from `offset`.

    The answer carries the call's tool, args, reason and is_error, `total_chars` and `next_offset` (null on
    the last page). Another workspace's investigation is 404 like an unknown one; an unknown call_id is 404;
    a bad offset or limit (or one past the end of the output) is 400.
    """
    args = as_model(tools.OutputRequest, params.model_dump())
    return cast(CallOutput, await tools.get_investigation_tool_output(call.tool_context(), args))


@routes.route("GET", "investigations/metrics", name="investigations_metrics")
async def metrics(call: RouteCall, *, params: MetricsParams) -> InvestigationMetrics:
    """Your workspace's investigation metrics per alert name and in total (?since=&alert_name=).

    Investigations run, completed/failed/cancelled/running counts and rates, mean iterations, mean tool calls,
    mean duration and tool usage. At most the newest FIREBREAK_INVESTIGATIONS_METRICS_MAX_RECORDS (1,000)
    records are read; `capped` says when older ones were left out.
    """
    args = as_model(tools.MetricsRequest, params.model_dump())
    return cast(InvestigationMetrics, await tools.get_investigation_metrics(call.tool_context(), args))
