"""Serve the app's HTTP-triggered functions on aiohttp with the host's routes, methods and auth levels."""

from __future__ import annotations

import asyncio
import logging
import re
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import azure.functions as func
from aiohttp import web
from starlette.requests import Request as AsgiRequest
from starlette.responses import Response as AsgiResponse
from starlette.types import Message, Scope

from devhost.index import FunctionInfo
from devhost.invoker import Invoker
from devhost.keys import HostKeys
from shared.core.errors import InvalidRequest
from shared.core.logging import CORRELATION_HEADER, new_correlation_id
from shared.core.request_checks import parse_host

log = logging.getLogger("devhost.http")

# The Functions host accepts bodies up to 100 MB; the app enforces its own, smaller limits.
MAX_BODY_BYTES = 100 * 1024 * 1024
# A function may declare its own body limit as this attribute (an int, or a callable returning one): this host
# then refuses a larger body with 413 before reading it (Content-Length) or as soon as it passes the limit
# (chunked), so oversized requests cost no memory. Azure's host ignores it and the app checks again.
BODY_LIMIT_ATTRIBUTE = "max_body_bytes"
_READ_CHUNK = 64 * 1024
# How often a streamed answer's `receive` looks whether the client is still connected (aiohttp has no
# disconnect callback for a handler that is not cancelled).
_DISCONNECT_POLL_SECONDS = 0.05
_CONSTRAINT = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "guid": r"[0-9a-fA-F-]{36}",
    "alpha": r"[A-Za-z]+",
    "bool": r"(?i:true|false)",
}


def route_precedence(route: str) -> list[int]:
    """ASP.NET's order per segment: literal, then constrained parameter, then parameter, then catch-all."""
    key = []
    for segment in route.strip("/").split("/"):
        if not segment.startswith("{"):
            key.append(0)
        elif segment.startswith("{*"):
            key.append(3)
        else:
            key.append(1 if ":" in segment else 2)
    return key


def aiohttp_path(prefix: str, route: str) -> str:
    """Translate an ASP.NET route template (`items/{id:int}`, `{*rest}`, `{id?}`) to aiohttp's syntax."""

    def param(match: re.Match[str]) -> str:
        name, constraint = match.group(1), match.group(2)
        if name.startswith("*"):
            return f"{{{name[1:]}:.*}}"
        name = name.rstrip("?")
        if constraint:
            return f"{{{name}:{_CONSTRAINT.get(constraint.rstrip('?'), '[^/]+')}}}"
        return f"{{{name}}}"

    path = re.sub(r"\{([^}:]+)(?::([^}]+))?\}", param, route.strip("/"))
    return "/" + "/".join(p for p in (prefix, path) if p)


def _signal_handler(hook: Callable[[], Awaitable[None]]) -> Callable[[web.Application], Awaitable[None]]:
    """An aiohttp startup/cleanup handler that calls `hook`, bound now (not to the loop variable)."""
    return lambda _app: hook()


def _error(
    request: web.Request, status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> web.Response:
    """The app's error envelope for what this host refuses itself, with the caller's correlation id (or a new one)."""
    correlation_id = new_correlation_id(request.headers.get(CORRELATION_HEADER))
    body: dict[str, Any] = {
        "error": {
            "code": code,
            "message": message,
            "details": details or {},
            "recovery_suggestions": [],
            "correlation_id": correlation_id,
        }
    }
    return web.json_response(body, status=status, headers={CORRELATION_HEADER: correlation_id})


def _too_large(request: web.Request, limit: int) -> web.Response:
    resp = _error(request, 413, "INVALID_REQUEST", f"Body is over the {limit}-byte limit", {"limit_bytes": limit})
    # The unread rest of the body must not be taken for the next request on this connection.
    resp.force_close()
    return resp


@web.middleware
async def refuse_malformed_host(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """400 in the envelope for a malformed Host header, before any route (RFC 9112 3.2), as Azure's front end.

    The URL is built from Host: a port such as `7071.` or `99999999` made that raise, and every route
    answered 500 with an empty body. The grammar is the app's own (`parse_host`), so both refuse alike.
    """
    value = request.headers.get("Host")
    if value is not None:  # HTTP/1.0 may omit it (HTTP/1.1 without one is refused by the parser)
        try:
            parse_host(value)
            _ = request.url
        except (InvalidRequest, ValueError):
            why = "The Host header is not a host name or address with a valid port"
            return _error(request, 400, "INVALID_REQUEST", why)
    return await handler(request)


def body_limit(info: FunctionInfo) -> int:
    """The function's declared body limit (BODY_LIMIT_ATTRIBUTE), never above the host's own."""
    declared = getattr(info.user_function, BODY_LIMIT_ATTRIBUTE, None)
    try:
        limit = declared() if callable(declared) else declared
    except Exception:  # e.g. settings that do not load: the function reports that itself when it runs
        log.exception("body limit of %s could not be read; using the host's", info.name)
        return MAX_BODY_BYTES
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        return min(limit, MAX_BODY_BYTES)
    return MAX_BODY_BYTES


async def read_body(request: web.Request, limit: int) -> bytes | None:
    """The body, or None when it is over `limit`: decided from Content-Length before reading anything, and
    for a chunked body after at most limit+1 bytes (the rest is never read into memory)."""
    declared = request.content_length
    if declared is not None:
        return None if declared > limit else await request.read()
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.read(min(_READ_CHUNK, limit + 1 - size)):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def to_func_request(request: web.Request, body: bytes) -> func.HttpRequest:
    headers: dict[str, str] = {}
    for key, value in request.headers.items():
        k = key.lower()
        headers[k] = f"{headers[k]}, {value}" if k in headers else value
    return func.HttpRequest(
        method=request.method,
        url=str(request.url),
        headers=headers,
        params=dict(request.query.items()),
        route_params=dict(request.match_info),
        body=body,
    )


def takes_asgi_request(info: FunctionInfo) -> bool:
    """Whether the function's trigger parameter is a starlette Request: an app on the worker's HTTP streams
    (functions/http_streams.py), served as ASGI; otherwise it gets a func.HttpRequest."""
    try:
        hints = typing.get_type_hints(info.user_function)
    except Exception:  # an annotation that does not resolve: the classic model, as the worker would index it
        return False
    hint = hints.get(info.trigger["name"])
    return isinstance(hint, type) and issubclass(hint, AsgiRequest)


def asgi_request(request: web.Request, body: bytes) -> AsgiRequest:
    """The request as the worker's HTTP streams hand it over: an ASGI scope with the route parameters, and
    a `receive` that yields the body (read and size-checked already) and then, once aiohttp's client has
    gone away, `http.disconnect`."""
    peer = request.transport.get_extra_info("peername") if request.transport else None
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("utf-8", "surrogateescape"),
        "query_string": request.rel_url.raw_query_string.encode("utf-8", "surrogateescape"),  # as sent
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if peer else None,
        "server": tuple(sock[:2]) if sock else None,
        "path_params": dict(request.match_info),
    }
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # aiohttp signals nothing to a handler it does not cancel: poll the connection.
        while request.transport is not None and not request.transport.is_closing():  # noqa: ASYNC110
            await asyncio.sleep(_DISCONNECT_POLL_SECONDS)
        return {"type": "http.disconnect"}

    return AsgiRequest(scope, receive)


async def send_asgi_response(response: AsgiResponse, request: web.Request, asgi: AsgiRequest) -> web.StreamResponse:
    """Run the function's starlette Response as ASGI into an aiohttp StreamResponse: headers are sent on
    `http.response.start`, each body chunk is written as it comes (aiohttp's write waits while the client's
    socket is full, so a client that does not read holds the producer back), nothing is buffered whole."""
    answer: web.StreamResponse | None = None

    async def send(message: Message) -> None:
        nonlocal answer
        if message["type"] == "http.response.start":
            answer = web.StreamResponse(status=message["status"])
            for raw_name, raw_value in message.get("headers", []):
                name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
                if name.lower() == "content-length":
                    answer.content_length = int(value)
                elif name.lower() != "transfer-encoding":
                    answer.headers.add(name, value)
            await answer.prepare(request)
        elif message["type"] == "http.response.body" and answer is not None:
            if message.get("body"):
                await answer.write(message["body"])
            if not message.get("more_body", False):
                await answer.write_eof()

    await response(asgi.scope, asgi.receive, send)
    if answer is None:  # a response that never started: as the host, a bare 500
        log.error("%s sent no response start", type(response).__name__)
        return web.Response(status=500)
    return answer


def to_aiohttp_response(result: Any) -> web.StreamResponse:
    if isinstance(result, func.HttpResponse):
        headers = {k: v for k, v in result.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
        if result.mimetype and "content-type" not in {k.lower() for k in headers}:
            headers["Content-Type"] = (
                f"{result.mimetype}; charset={result.charset}" if result.charset else result.mimetype
            )
        return web.Response(status=result.status_code, body=result.get_body(), headers=headers)
    if result is None:
        return web.Response(status=204)
    if isinstance(result, (str, bytes)):
        return web.Response(status=200, body=result)
    return web.json_response(result)


class HttpHost:
    """Mounts each HTTP function on its route; other trigger types are handed to plug-ins (durable: next layer)."""

    def __init__(
        self,
        functions: list[FunctionInfo],
        invoker: Invoker,
        keys: HostKeys,
        prefix: str = "api",
        extensions: list[Any] | None = None,
    ) -> None:
        """`extensions` add their own routes (`add_routes(app)`) and lifecycle (`start()`/`stop()`), e.g. Durable."""
        self.functions = functions
        self.invoker = invoker
        self.keys = keys
        self.prefix = prefix
        self.app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[refuse_malformed_host])
        self.routes: list[tuple[str, str, str]] = []
        http = [info for info in functions if info.trigger["type"] == "httpTrigger"]
        # aiohttp takes the first route that matches; ASP.NET (the Functions host) takes the most specific.
        for info in sorted(http, key=lambda i: route_precedence(i.trigger.get("route") or i.name)):
            invoker.check(info)
            self._mount(info)
        for extension in extensions or []:
            extension.add_routes(self.app)
            self.app.on_startup.append(_signal_handler(extension.start))
            self.app.on_cleanup.append(_signal_handler(extension.stop))
        self.app.router.add_route("*", "/{tail:.*}", self._not_found)

    def _mount(self, info: FunctionInfo) -> None:
        trigger = info.trigger
        path = aiohttp_path(self.prefix, trigger.get("route") or info.name)
        methods = [
            m.upper() for m in (trigger.get("methods") or ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
        ]
        handler = self._handler(info, str(trigger.get("authLevel", "FUNCTION")), takes_asgi_request(info))
        for method in methods:
            self.app.router.add_route(method, path, handler)
            self.routes.append((method, path, info.name))

    def _handler(
        self, info: FunctionInfo, auth_level: str, asgi: bool
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            presented = request.headers.get("x-functions-key") or request.query.get("code")
            if not self.keys.allows(info.name, auth_level, presented):
                return web.Response(status=401)  # the Functions host answers a missing/wrong key with a bare 401
            limit = body_limit(info)
            body = await read_body(request, limit)
            if body is None:
                return _too_large(request, limit)
            trigger = asgi_request(request, body) if asgi else to_func_request(request, body)
            try:
                result = await self.invoker.invoke(info, trigger)
            except Exception:
                # As on Azure: the function crashed, the host answers 500 and the details stay in the log.
                log.exception("function %s failed", info.name)
                return web.Response(status=500)
            if isinstance(result, AsgiResponse) and isinstance(trigger, AsgiRequest):
                return await send_asgi_response(result, request, trigger)
            return to_aiohttp_response(result)

        return handle

    async def _not_found(self, request: web.Request) -> web.Response:
        known = {path for _, path, _ in self.routes}
        if any(re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", p), request.path) for p in known):
            allowed = sorted(
                {m for m, p, _ in self.routes if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", p), request.path)}
            )
            resp = _error(request, 405, "INVALID_REQUEST", f"{request.method} is not allowed on {request.path}")
            resp.headers["Allow"] = ", ".join(allowed)
            return resp
        why = f"No function is mounted at {request.path}; GET /api/tools lists the tools"
        return _error(request, 404, "NOT_FOUND", why)

    def describe(self) -> str:
        return "\n".join(
            f"  {name}: [{method}] {path}" for method, path, name in sorted(self.routes, key=lambda r: (r[1], r[0]))
        )
