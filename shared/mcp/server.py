"""Build the low-level MCP server (mcp v2) from the tool registry: tools/list, tools/call, logging/setLevel."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from shared.core.errors import AppError, envelope
from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke, pop_correlation_id
from shared.tools.registry import Tool, ToolRegistry

SERVER_NAME = "firebreak"
INSTRUCTIONS = (
    "Firebreak is an incident-work backend. Call health.check first if tools fail. Tool failures come back "
    "as isError results whose structuredContent is {error: {code, message, details, recovery_suggestions, "
    "correlation_id}}: read recovery_suggestions and correct the call."
)

# Request state the endpoint attaches to the HTTP scope before the SDK sees the request.
STATE_PRINCIPAL = "firebreak_principal"
STATE_CORRELATION = "firebreak_correlation_id"
STATE_ORCHESTRATIONS = "firebreak_orchestrations"

log = logging.getLogger("firebreak.mcp")


def _mcp_tool(tool: Tool) -> types.Tool:
    a = tool.annotations
    return types.Tool(
        name=tool.name,
        title=a.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=a.title,
            read_only_hint=a.read_only,
            destructive_hint=a.destructive,
            idempotent_hint=a.idempotent,
            open_world_hint=a.open_world,
        ),
    )


def _request_state(ctx: Any) -> dict[str, Any]:
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None) or {}
    return scope.get("state") or {}


def build_server(registry: ToolRegistry, deps: Callable[[], Deps], version: str) -> Server[Any]:
    """A server whose tools are exactly the registry's; every call goes through `invoke`."""
    listed = types.ListToolsResult(tools=[_mcp_tool(t) for t in registry])

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = registry.get(params.name)
        if tool is None:
            # Not a tool failure the model could fix by retrying: a protocol error, as the spec asks.
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool: {params.name}",
                {"code": "METHOD_NOT_FOUND", "tool": params.name, "available": [t.name for t in registry]},
            )
        state = _request_state(ctx)
        principal: Principal | None = state.get(STATE_PRINCIPAL)
        if principal is None:  # the endpoint always resolves one; reaching here means a wiring bug
            raise MCPError(types.INTERNAL_ERROR, "no principal on the request")
        arguments = dict(params.arguments or {})
        try:
            correlation_id = pop_correlation_id(arguments, tool) or state.get(STATE_CORRELATION) or ""
        except AppError as exc:  # a correlation_id argument unfit for headers and logs: refused before any work
            failed = envelope(exc, state.get(STATE_CORRELATION) or "")
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"{exc.code}: {exc.message}")],
                structured_content=failed,
                is_error=True,
            )

        async def progress(done: float, total: float | None, message: str | None) -> None:
            # A no-op unless the client sent a progress token with this call.
            await ctx.session.report_progress(done, total, message)

        outcome = await invoke(
            tool,
            arguments,
            ToolContext(
                principal,
                deps(),
                correlation_id,
                transport="mcp",
                progress=progress,
                orchestrations=state.get(STATE_ORCHESTRATIONS),
            ),
        )
        if outcome.ok:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=outcome.text)], structured_content=outcome.output
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.error_envelope(),
            is_error=True,
        )

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        # Tools do not stream log notifications yet; the level is accepted so clients can negotiate it.
        log.info("client set MCP log level", extra={"level_requested": params.level})
        return types.EmptyResult()

    with warnings.catch_warnings():
        # Logging is deprecated from 2026-07-28 on, but the handshake versions we serve still declare it.
        warnings.simplefilter("ignore")
        server: Server[Any] = Server(
            SERVER_NAME,
            version=version,
            title="Firebreak",
            instructions=INSTRUCTIONS,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
        )
    return server
