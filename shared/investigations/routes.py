"""Investigation REST routes declared with their tools: one call's whole output, and the workspace's metrics.

`GET /api/investigations/{investigation_id}/calls/{call_id}/output` serves get_investigation_tool_output and
`GET /api/investigations/metrics` serves get_investigation_metrics, with the tools' own input models, so REST,
MCP and per-tool HTTP validate alike (a bad offset or limit is 400 VALIDATION_ERROR naming the field).
Starting, reading, listing and cancelling investigations need the Durable client and stay in
functions/investigations_api.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from pydantic import Field

from shared.investigations import tools
from shared.investigations.alerts import MAX_NAME_CHARS
from shared.investigations.call_output import DEFAULT_OUTPUT_CHARS, MAX_OUTPUT_CHARS, MAX_OUTPUT_OFFSET, CallOutput
from shared.investigations.metrics import InvestigationMetrics
from shared.tools.routes import RouteCall, RouteParams, RouteSet, as_model

routes = RouteSet("investigations")


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
