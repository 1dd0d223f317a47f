"""Serve one HTTP exchange of the MCP endpoint through the SDK's stateless Streamable HTTP manager.

Framework-neutral on purpose: the Functions adapter and the benchmarks hand it plain method, URL,
headers and body, and get back status, headers and body.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.mcp.server import STATE_CORRELATION, STATE_ORCHESTRATIONS, STATE_PRINCIPAL, build_server
from shared.tools.deps import Deps
from shared.tools.registry import ToolRegistry

log = logging.getLogger("firebreak.mcp")


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def _jsonrpc_error(code: int, message: str, status: int = 400, request_id: str | int | None = None) -> HttpReply:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}, separators=(",", ":")
    )
    return HttpReply(status=status, headers={"content-type": "application/json"}, body=body.encode())


def precheck(body: bytes) -> HttpReply | None:
    """Refuse envelopes the SDK's handshake-era path would misread, with the JSON-RPC error they deserve.

    That path takes a message whose `id` is not a string or integer for a notification and answers
    202 with no body, so a client waits for a reply that never comes; batches, and `params`, `method`
    or `jsonrpc` of the wrong type, get a raw pydantic dump (model internals) instead of an error.
    """
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # also covers bytes that are not UTF-8
        return _jsonrpc_error(-32700, "Parse error: the body is not valid UTF-8 JSON")
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
    """Owns the SDK session manager (stateless, JSON responses) on the event loop that serves requests."""

    def __init__(
        self,
        registry: ToolRegistry,
        deps: Callable[[], Deps],
        settings: Settings,
        allow_list: tuple[list[str], list[str]],
    ) -> None:
        """`allow_list`: the (hosts, origins) every route of the app accepts; the SDK checks the same."""
        self._registry = registry
        self._deps = deps
        self._settings = settings
        self._allow_list = allow_list
        self._manager: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None

    async def _ensure_started(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._manager is not None and self._loop is loop and self._ready is not None:
            await self._ready.wait()
            return self._manager
        hosts, origins = self._allow_list
        manager = StreamableHTTPSessionManager(
            build_server(self._registry, self._deps, self._settings.build_version),
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(
                enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
            ),
            max_request_body_size=self._settings.max_request_bytes,
        )
        self._manager, self._loop = manager, loop
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        # The manager's task group must live in one long-lived task; requests borrow it.
        self._runner = loop.create_task(self._run(manager, self._ready, self._stop))
        await self._ready.wait()
        return manager

    @staticmethod
    async def _run(manager: Any, ready: asyncio.Event, stop: asyncio.Event) -> None:
        async with manager.run():
            ready.set()
            await stop.wait()

    async def aclose(self) -> None:
        if self._stop is not None and self._runner is not None:
            self._stop.set()
            await self._runner
        self._manager = self._runner = None

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
        if method.upper() == "POST" and (refused := precheck(body)) is not None:
            return refused
        manager = await self._ensure_started()
        parts = urlsplit(url)
        host = headers.get("host") or parts.netloc
        scope = {
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
            "state": {
                STATE_PRINCIPAL: principal,
                STATE_CORRELATION: correlation_id,
                STATE_ORCHESTRATIONS: orchestrations,
            },
        }
        reply = HttpReply(status=500)
        chunks: list[bytes] = []
        finished = asyncio.Event()
        sent_body = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                reply.status = message["status"]
                reply.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message.get("headers", [])}
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    finished.set()

        try:
            await manager.handle_request(scope, receive, send)
        finally:
            finished.set()
        reply.body = b"".join(chunks)
        return reply
