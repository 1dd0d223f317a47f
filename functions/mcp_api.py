"""`/api/mcp`: the MCP endpoint (stateless Streamable HTTP; JSON, or SSE for tools/call) over every registered tool."""

from __future__ import annotations

import asyncio

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, Reply, endpoint, read_body
from shared.core.logging import CORRELATION_HEADER

bp = df.Blueprint()


@bp.function_name("mcp")
@bp.route(route="mcp", methods=["GET", "POST", "DELETE"], auth_level=func.AuthLevel.ANONYMOUS)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def mcp(call: Call) -> Reply:
    """MCP over Streamable HTTP, stateless: protocol 2026-07-28 and the 2025 handshake versions.

    POST one JSON-RPC message with `Accept: application/json, text/event-stream`. GET and DELETE answer
    405: there are no sessions to resume or end, and a held-open GET stream would burn serverless time.
    """
    req = call.req
    if req.method.upper() != "POST":
        return func.HttpResponse(status_code=405, headers={"Allow": "POST", CORRELATION_HEADER: call.correlation_id})
    body = read_body(req, call.deps.settings.max_request_bytes)
    gone = asyncio.Event()  # set by the edge when the client leaves: the SDK then stops the tool
    streamed = await wiring.mcp_endpoint().handle_stream(
        req.method,
        req.url,
        dict(req.headers),
        body,
        call.caller,
        call.correlation_id,
        orchestrations=call.runs(),
        disconnected=gone,
    )
    # The edge sets its own correlation id and length framing; an SSE body is sent as the SDK writes it.
    headers = {
        k: v
        for k, v in streamed.headers.items()
        if k.lower() not in ("content-length", "transfer-encoding", CORRELATION_HEADER.lower())
    }

    async def on_disconnect() -> None:
        gone.set()

    return call.stream(streamed.status, headers, streamed.chunks, on_disconnect=on_disconnect)
