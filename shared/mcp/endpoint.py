"""Serve one HTTP exchange of the MCP endpoint through the SDK's stateless Streamable HTTP managers.

Framework-neutral on purpose: the Functions adapter and the benchmarks hand it plain method, URL,
headers and body, and get back status, headers and body (`handle`, buffered) or status, headers and
an async iterator of body chunks (`handle_stream`). A `tools/call` whose Accept takes
`text/event-stream` is answered as an SSE stream (progress and log notifications, then the result);
everything else is one JSON body, so clients without SSE never see a 406.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.mcp.server import (
    STATE_ABORT,
    STATE_CORRELATION,
    STATE_DEADLINE,
    STATE_ORCHESTRATIONS,
    STATE_PRINCIPAL,
    STATE_SEND_TIMEOUT,
    build_server,
)
from shared.tools.deps import Deps
from shared.tools.registry import ToolRegistry
from shared.tools.resources import ResourceKind

log = logging.getLogger("firebreak.mcp")


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


# Body chunks held for a slow reader: a few SSE events. Past this the SDK's writer waits (send timeout applies).
STREAM_QUEUE_CHUNKS = 8
# Extra seconds past the tool deadline before the edge stops the SDK task itself (the tool answers first).
EDGE_GRACE_S = 1.0


@dataclass
class StreamReply:
    """A reply whose body arrives in chunks; iterate `chunks` once, or `aclose()` to stop the call.

    Stopping iteration early (break, an exception, `aclose`) cancels the SDK's work for this request.
    """

    status: int
    headers: dict[str, str]
    chunks: AsyncIterator[bytes]

    async def aclose(self) -> None:
        closer = getattr(self.chunks, "aclose", None)
        if closer is not None:
            await closer()


async def buffered(reply: StreamReply) -> HttpReply:
    """Join a streamed reply into one body, for an edge that cannot stream yet (notifications arrive, late)."""
    parts = [chunk async for chunk in reply.chunks]
    return HttpReply(status=reply.status, headers=dict(reply.headers), body=b"".join(parts))


def wants_stream(method: str, headers: dict[str, str], message: Any) -> bool:
    """SSE for a POSTed `tools/call` whose Accept takes both JSON and event streams (the SDK's 406 rule)."""
    if method.upper() != "POST" or not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    accept = next((v for k, v in headers.items() if k.lower() == "accept"), "")
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return "text/event-stream" in kinds and bool(kinds & {"application/json", "application/*", "*/*"})


def _jsonrpc_error(code: int, message: str, status: int = 400, request_id: str | int | None = None) -> HttpReply:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}, separators=(",", ":")
    )
    return HttpReply(status=status, headers={"content-type": "application/json"}, body=body.encode())


def precheck(body: bytes) -> HttpReply | None:
    """The JSON-RPC error a POST body deserves before the SDK sees it, or None (see `_refusal`)."""
    return checked(body)[0]


def checked(body: bytes) -> tuple[HttpReply | None, Any]:
    """(the refusal or None, the parsed message) of a POST body; see `_refusal`."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # also covers bytes that are not UTF-8
        return _jsonrpc_error(-32700, "Parse error: the body is not valid UTF-8 JSON"), None
    return _refusal(message), message


def _refusal(message: Any) -> HttpReply | None:
    """Refuse envelopes the SDK's handshake-era path would misread, with the JSON-RPC error they deserve.

    That path takes a message whose `id` is not a string or integer for a notification and answers
    202 with no body, so a client waits for a reply that never comes; batches, and `params`, `method`
    or `jsonrpc` of the wrong type, get a raw pydantic dump (model internals) instead of an error.
    """
    if not isinstance(message, dict):
        return _jsonrpc_error(-32600, "Invalid Request: send one JSON-RPC object per POST (batches are not supported)")
    if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        return _jsonrpc_error(-32600, "Invalid Request: id must be a string or an integer")
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0":
        return _jsonrpc_error(-32600, 'Invalid Request: "jsonrpc" must be "2.0"', request_id=request_id)
    if "method" in message and not isinstance(message["method"], str):
        return _jsonrpc_error(-32600, "Invalid Request: method must be a string", request_id=request_id)
    if "method" in message and message.get("params") is not None and not isinstance(message["params"], dict):
        return _jsonrpc_error(
            -32602, f"Invalid params: params of {message['method'][:100]!r} must be an object", request_id=request_id
        )
    return None


class McpEndpoint:
    """Owns the SDK's two stateless session managers (JSON replies, SSE replies) on the loop that serves requests."""

    def __init__(
        self,
        registry: ToolRegistry,
        deps: Callable[[], Deps],
        settings: Settings,
        allow_list: tuple[list[str], list[str]],
        resources: Sequence[ResourceKind] = (),
    ) -> None:
        """`allow_list`: the (hosts, origins) every route of the app accepts; the SDK checks the same.

        `resources`: the capabilities' resource kinds (resources/list, resources/read, templates)."""
        self._registry = registry
        self._deps = deps
        self._settings = settings
        self._allow_list = allow_list
        self._resources = tuple(resources) or registry.resources
        self._managers: tuple[Any, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None

    async def _ensure_started(self) -> tuple[Any, Any]:
        """(the JSON manager, the SSE manager), started on the running loop."""
        loop = asyncio.get_running_loop()
        if self._managers is not None and self._loop is loop and self._ready is not None:
            await self._ready.wait()
            return self._managers
        hosts, origins = self._allow_list
        server = build_server(
            self._registry, self._deps, server_version(self._settings), self._settings.mcp_log_level, self._resources
        )
        managers = tuple(
            StreamableHTTPSessionManager(
                server,
                json_response=json_response,
                stateless=True,
                security_settings=TransportSecuritySettings(
                    enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
                ),
                max_request_body_size=self._settings.max_request_bytes,
            )
            for json_response in (True, False)
        )
        self._managers, self._loop = (managers[0], managers[1]), loop
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        # Each manager's task group must live in one long-lived task; requests borrow them.
        self._runner = loop.create_task(self._run(managers, self._ready, self._stop))
        await self._ready.wait()
        return self._managers

    @staticmethod
    async def _run(managers: tuple[Any, ...], ready: asyncio.Event, stop: asyncio.Event) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for manager in managers:
                await stack.enter_async_context(manager.run())
            ready.set()
            await stop.wait()

    async def aclose(self) -> None:
        if self._stop is not None and self._runner is not None:
            self._stop.set()
            await self._runner
        self._managers = self._runner = None

    def _scope(self, method: str, url: str, headers: dict[str, str], state: dict[str, Any]) -> dict[str, Any]:
        parts = urlsplit(url)
        host = headers.get("host") or parts.netloc
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method.upper(),
            "scheme": parts.scheme or "http",
            "path": parts.path or "/api/mcp",
            "raw_path": (parts.path or "/api/mcp").encode(),
            "query_string": parts.query.encode(),
            "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in headers.items()]
            + ([] if "host" in {k.lower() for k in headers} else [(b"host", host.encode("latin-1"))]),
            "client": ("127.0.0.1", 0),
            "server": (parts.hostname or "localhost", parts.port or 80),
            "state": state,
        }

    def _state(
        self, principal: Principal, correlation_id: str, orchestrations: Any, abort: asyncio.Event
    ) -> dict[str, Any]:
        return {
            STATE_ABORT: abort,
            STATE_PRINCIPAL: principal,
            STATE_CORRELATION: correlation_id,
            STATE_ORCHESTRATIONS: orchestrations,
            STATE_DEADLINE: self._settings.mcp_call_deadline_s,
            STATE_SEND_TIMEOUT: self._settings.mcp_send_timeout_s,
        }

    async def handle(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        principal: Principal,
        correlation_id: str,
        *,
        orchestrations: Any = None,
    ) -> HttpReply:
        """One exchange, buffered: every body chunk (SSE events too) joined into one reply."""
        return await buffered(
            await self.handle_stream(
                method, url, headers, body, principal, correlation_id, orchestrations=orchestrations
            )
        )

    async def handle_stream(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        principal: Principal,
        correlation_id: str,
        *,
        orchestrations: Any = None,
        disconnected: asyncio.Event | None = None,
    ) -> StreamReply:
        """One exchange, streamed: status and headers once the SDK starts its response, then the body's chunks.

        `disconnected`: set it when the HTTP client goes away; the SDK then sees `http.disconnect` and the
        tool is cancelled. A client that leaves a chunk untaken for `mcp_send_timeout_s` ends the call the
        same way (the SDK's notification stream has no buffer, so an unread stream would hold the tool).
        The edge stops the SDK task `EDGE_GRACE_S` after the tool's own deadline whatever happens.
        """
        message: Any = None
        if method.upper() == "POST":
            refused, message = checked(body)
            if refused is not None:
                return _single(refused)
        json_manager, sse_manager = await self._ensure_started()
        manager = sse_manager if wants_stream(method, headers, message) else json_manager
        disconnected = disconnected or asyncio.Event()
        scope = self._scope(method, url, headers, self._state(principal, correlation_id, orchestrations, disconnected))
        exchange = _Exchange(body, disconnected, self._settings.mcp_send_timeout_s)
        deadline = self._settings.mcp_call_deadline_s + EDGE_GRACE_S
        return await exchange.run(manager, scope, deadline)


def server_version(settings: Settings) -> str:
    """The version the server reports: the deployed build's version, with its commit when the build names one."""
    commit = settings.build_commit
    return settings.build_version if commit in ("", "unknown") else f"{settings.build_version}+{commit[:12]}"


def _single(reply: HttpReply) -> StreamReply:
    async def one() -> AsyncIterator[bytes]:
        yield reply.body

    return StreamReply(reply.status, reply.headers, one())


class _Exchange:
    """The ASGI side of one request: `receive` hands over the body, then waits for a disconnect; `send` feeds a
    bounded queue the reply's consumer drains."""

    def __init__(self, body: bytes, disconnected: asyncio.Event, send_timeout: float) -> None:
        self._body: bytes | None = body
        self._disconnected = disconnected
        self._finished = asyncio.Event()
        self._send_timeout = send_timeout
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(STREAM_QUEUE_CHUNKS)
        self._start: asyncio.Future[tuple[int, dict[str, str]]] = asyncio.get_running_loop().create_future()

    async def receive(self) -> dict[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        gone = asyncio.ensure_future(self._disconnected.wait())
        done = asyncio.ensure_future(self._finished.wait())
        try:
            await asyncio.wait({gone, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            done.cancel()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message.get("headers", [])}
            if not self._start.done():
                self._start.set_result((message["status"], headers))
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk and not self._disconnected.is_set():  # chunks for a client that is gone are dropped
                try:
                    await asyncio.wait_for(self._queue.put(chunk), self._send_timeout)
                except TimeoutError:
                    # A client that does not read counts as gone: `receive` reports http.disconnect, the SDK
                    # stops its response and the tool is cancelled (STATE_ABORT).
                    log.info("MCP client took no chunk in %s s: the call is ended", self._send_timeout)
                    self._disconnected.set()
            if not message.get("more_body"):
                self._finished.set()

    async def _drive(self, manager: Any, scope: dict[str, Any], deadline: float) -> None:
        try:
            async with asyncio.timeout(deadline):
                await manager.handle_request(scope, self.receive, self.send)
        except TimeoutError:
            log.warning("MCP exchange stopped at the edge deadline (%s s)", deadline)
        except Exception:  # the consumer gets the 500 below (or the end of the stream), never the traceback
            log.exception("MCP exchange failed")
        finally:
            self._finished.set()
            if not self._start.done():
                self._start.set_result((500, {"content-type": "application/json"}))
                await self._put_last(_jsonrpc_error(-32603, "Internal error: no response", status=500).body)
            await self._put_last(None)

    async def _put_last(self, item: bytes | None) -> None:
        # The end marker must get in even when nobody reads (a stalled or gone client): drop the oldest chunk
        # for it then; a live slow reader gets it without losing a chunk.
        if not self._disconnected.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._queue.put(item), self._send_timeout)
                return
        while True:
            try:
                self._queue.put_nowait(item)
                return
            except asyncio.QueueFull:
                self._queue.get_nowait()

    async def run(self, manager: Any, scope: dict[str, Any], deadline: float) -> StreamReply:
        task = asyncio.ensure_future(self._drive(manager, scope, deadline))
        waiting: set[asyncio.Future[Any]] = {task, self._start}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the edge gave up before the response started: so does the SDK
            self._disconnected.set()
            task.cancel()
            raise
        status, headers = await self._start
        return StreamReply(status, headers, self._chunks(task))

    async def _chunks(self, task: asyncio.Future[None]) -> AsyncIterator[bytes]:
        try:
            while (chunk := await self._queue.get()) is not None:
                yield chunk
        finally:
            if not task.done():
                self._disconnected.set()
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
