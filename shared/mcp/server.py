"""Build the low-level MCP server (mcp v2) from the tool registry and the capabilities' resources.

tools/list, tools/call (progress and log notifications, bounded), resources/list, resources/read,
resources/templates/list and logging/setLevel (accepted, but stateless: see `notifier`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, get_args

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from shared.core.errors import AppError, ServiceUnavailable, envelope
from shared.identity.models import Principal
from shared.mcp.resources import resource_handlers
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke, pop_correlation_id
from shared.tools.registry import Tool, ToolRegistry
from shared.tools.resources import ResourceKind

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
STATE_DEADLINE = "firebreak_call_deadline_s"  # seconds a tools/call may run
STATE_SEND_TIMEOUT = "firebreak_send_timeout_s"  # seconds one notification may wait for the client
STATE_ABORT = "firebreak_abort"  # an asyncio.Event the edge sets when the client is gone

# At most this many progress notifications a second (a chatty tool cannot flood a client).
PROGRESS_PER_SECOND = 2.0
LOG_LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)  # severity-ascending (RFC 5424 order)

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


class CallDeadlineExceeded(ServiceUnavailable):
    """A tools/call ran past the endpoint's deadline and was stopped."""


class _Notifier:
    """Progress and log notifications of one tools/call, bounded: a rate limit on progress, a send timeout on
    each notification (a client that does not read makes later ones drop), levels filtered as the protocol says.

    Stateless serving means `logging/setLevel` cannot reach a later call: handshake-version clients get
    `default_level` and above; 2026-07-28 clients opt in per call (`_meta` io.modelcontextprotocol/logLevel),
    which the SDK applies.
    """

    def __init__(self, ctx: Any, send_timeout: float, default_level: str) -> None:
        self._ctx = ctx
        self._send_timeout = send_timeout
        self._floor = LOG_LEVELS.index(default_level) if default_level in LOG_LEVELS else LOG_LEVELS.index("info")
        self._next_progress = 0.0
        self._stalled = False

    async def _bounded(self, sending: Awaitable[None]) -> None:
        if self._stalled:
            sending.close()  # type: ignore[attr-defined]
            return
        try:
            async with asyncio.timeout(self._send_timeout):
                await sending
        except TimeoutError:
            self._stalled = True
            log.info("MCP client took no notification in %s s; later ones are dropped", self._send_timeout)

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        # A no-op unless the client sent a progress token with this call (the SDK targets only this call's token).
        now = time.monotonic()
        if now < self._next_progress:
            return
        self._next_progress = now + 1.0 / PROGRESS_PER_SECOND
        await self._bounded(self._ctx.session.report_progress(done, total, message))

    async def log(self, level: str, message: str) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown MCP log level {level!r}")
        if self._ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and LOG_LEVELS.index(level) < self._floor:
            return
        with warnings.catch_warnings():
            # Deprecated from 2026-07-28 on, yet still how a request-scoped log entry is sent (the SDK filters).
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = self._ctx.session.send_log_message(
                level, message, logger="firebreak", related_request_id=self._ctx.request_id
            )
        await self._bounded(sending)


async def _until_done_or_aborted(work: Awaitable[Any], abort: asyncio.Event | None, deadline: float | None) -> Any:
    """`work`'s result; cancelled when the edge says the client is gone (CancelledError), or at the deadline."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(abort.wait()) if abort is not None else None
    try:
        waiting = {task} | ({gone} if gone is not None else set())
        done, _ = await asyncio.wait(waiting, timeout=deadline, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if gone is not None and gone in done:
            raise asyncio.CancelledError("the MCP client disconnected")
        raise CallDeadlineExceeded(
            f"The call ran past the MCP endpoint's deadline of {deadline:g} s and was stopped.",
            retry_after_seconds=1,
            recovery_suggestions=[
                "Use the tool's start/status form for long work (a run_id to poll), or narrow the request."
            ],
        )
    finally:
        if gone is not None:
            gone.cancel()
        if not task.done():
            task.cancel()


def build_server(
    registry: ToolRegistry,
    deps: Callable[[], Deps],
    version: str,
    default_log_level: str = "info",
    resources: Sequence[ResourceKind] = (),
) -> Server[Any]:
    """A server whose tools are exactly the registry's (every call goes through `invoke`) and whose resources
    are the capabilities' `resources`, read for the caller only."""
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

        notifier = _Notifier(ctx, state.get(STATE_SEND_TIMEOUT) or 10.0, default_log_level)
        tool_ctx = ToolContext(
            principal,
            deps(),
            correlation_id,
            transport="mcp",
            progress=notifier.progress,
            orchestrations=state.get(STATE_ORCHESTRATIONS),
            logger=notifier.log,
        )
        try:
            outcome = await _until_done_or_aborted(
                invoke(tool, arguments, tool_ctx), state.get(STATE_ABORT), state.get(STATE_DEADLINE)
            )
        except CallDeadlineExceeded as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"{exc.code}: {exc.message}")],
                structured_content=envelope(exc, correlation_id),
                is_error=True,
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
        # Accepted so handshake clients can negotiate, but stateless: it cannot reach the next POST, whose log
        # notifications follow FIREBREAK_MCP_LOG_LEVEL (2026-07-28 clients set a level per call in _meta).
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
            **resource_handlers(resources, deps, lambda ctx: _request_state(ctx).get(STATE_PRINCIPAL)),
        )
    return server
