"""`/api/mcp`: the MCP endpoint (stateless Streamable HTTP, JSON responses) over every registered tool."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint, read_body
from shared.core.logging import CORRELATION_HEADER

bp = df.Blueprint()


@bp.function_name("mcp")
@bp.route(route="mcp", methods=["GET", "POST", "DELETE"], auth_level=func.AuthLevel.ANONYMOUS)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def mcp(call: Call) -> func.HttpResponse:
    """MCP over Streamable HTTP, stateless: protocol 2026-07-28 and the 2025 handshake versions.

    POST one JSON-RPC message with `Accept: application/json, text/event-stream`. GET and DELETE answer
    405: there are no sessions to resume or end, and a held-open GET stream would burn serverless time.
    """
    req = call.req
    if req.method.upper() != "POST":
        return func.HttpResponse(status_code=405, headers={"Allow": "POST", CORRELATION_HEADER: call.correlation_id})
    body = read_body(req, call.deps.settings.max_request_bytes)
    reply = await wiring.mcp_endpoint().handle(
        req.method, req.url, dict(req.headers), body, call.caller, call.correlation_id, orchestrations=call.runs()
    )
    headers = {k: v for k, v in reply.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
    headers[CORRELATION_HEADER] = call.correlation_id
    return func.HttpResponse(reply.body, status_code=reply.status, headers=headers)
