"""The HTTP edge: one decorator that resolves the caller and the dependencies once, JSON bodies with
limits, correlation ids, the error envelope, and streamed answers.

HTTP streams in the Python worker are app-wide: importing the app's web extension (`functions/http_streams.py`,
here) makes every HTTP function take a Starlette `Request` and return a Starlette `Response` (a
`func.HttpRequest` annotation then fails indexing). `endpoint` is the one place that happens: handlers still
get a `func.HttpRequest` view (`call.req`) and return a `func.HttpResponse`, or `call.stream(...)` for a body
sent as it is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import azure.durable_functions as df
import azure.functions as func
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

# Importing the web extension turns the worker's HTTP streams on (app-wide). The worker resolves the
# wrappers' annotations (typing.get_type_hints): real names at run time.
import functions.http_streams  # noqa: F401
from shared.core import telemetry
from shared.core.errors import AppError, InvalidRequest, envelope, internal_error
from shared.core.logging import CORRELATION_HEADER, new_correlation_id, reset_correlation_id, set_correlation_id
from shared.core.request_checks import require_json_content_type
from shared.storage.outage import store_outage

if TYPE_CHECKING:
    from shared.identity.models import Principal
    from shared.runs.service import RunService
    from shared.tools.deps import Deps

log = logging.getLogger("firebreak.http")


class PayloadTooLarge(InvalidRequest):
    """A body over the configured limit (413 rather than 400: the request may be fine, only too big)."""

    @property
    def http_status(self) -> int:
        return 413


def json_response(
    data: Any, correlation_id: str, status: int = 200, headers: dict[str, str] | None = None
) -> func.HttpResponse:
    return func.HttpResponse(
        json.dumps(data, separators=(",", ":"), default=str),
        status_code=status,
        mimetype="application/json",
        headers={CORRELATION_HEADER: correlation_id, **(headers or {})},
    )


def error_response(error: AppError, correlation_id: str) -> func.HttpResponse:
    """The envelope with its headers: the Bearer challenge on a 401 or scope 403 (shared/identity/challenge.py)."""
    from functions import wiring
    from shared.identity.challenge import bearer_challenge

    headers: dict[str, str] = {}
    try:
        settings = wiring.settings()
    except Exception:  # the settings failing to load is itself being answered: challenge without them
        settings = None
    challenge = bearer_challenge(error, settings)
    if challenge:
        headers["WWW-Authenticate"] = challenge
    if error.retry_after_seconds is not None:
        headers["Retry-After"] = str(error.retry_after_seconds)
    return json_response(envelope(error, correlation_id), correlation_id, error.http_status, headers)


Reply: TypeAlias = func.HttpResponse | Response


async def guarded(req: func.HttpRequest, handler: Callable[[str], Awaitable[Reply]]) -> Reply:
    """Run `handler(correlation_id)`, turning every failure into the envelope; nothing escapes as a bare 500."""
    correlation_id = new_correlation_id(req.headers.get(CORRELATION_HEADER))
    token = set_correlation_id(correlation_id)
    try:
        check_request(req)  # loads the settings on a worker's first request: telemetry is configured from here on
        with telemetry.request_span(req.method, req.url, correlation_id) as span:
            reply = await handler(correlation_id)
            span.set_attribute("http.response.status_code", reply.status_code)
            return reply
    except AppError as exc:
        return error_response(exc, correlation_id)
    except Exception as exc:
        outage = store_outage(exc)
        if outage is not None:
            log.warning("store unavailable: %s", outage.message, extra={"route": req.url, **outage.details})
            return error_response(outage, correlation_id)
        log.exception("unhandled error", extra={"route": req.url})
        return error_response(internal_error(), correlation_id)
    finally:
        reset_correlation_id(token)


def check_request(req: func.HttpRequest) -> None:
    """Before any work: the Host and Origin allow-list (DNS rebinding, cross-site pages), on every route."""
    from functions import wiring
    from shared.core.request_checks import check_host_and_origin

    hosts, origins = wiring.allow_list()
    check_host_and_origin(req.headers, req.url, hosts, origins)


@dataclass
class Call:
    """One request at the edge, with what every handler needs resolved once by `endpoint`."""

    req: func.HttpRequest
    correlation_id: str
    deps: Deps
    # None only on anonymous routes (`endpoint(anonymous=True)`), which must not act for anyone.
    principal: Principal | None
    client: df.DurableOrchestrationClient | None = None

    @property
    def caller(self) -> Principal:
        if self.principal is None:
            raise RuntimeError("an anonymous route asked for the caller")
        return self.principal

    def runs(self) -> RunService:
        """The runs service over this request's Durable client (routes declared with `durable=True`)."""
        if self.client is None:
            raise RuntimeError("this route has no durable client binding")
        from functions.durable_engine import run_service

        return run_service(self.client)

    def json_body(self) -> dict[str, Any]:
        return read_json_object(self.req, self.deps.settings.max_request_bytes)

    def route(self, name: str) -> str:
        return str(self.req.route_params.get(name, ""))

    def json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> func.HttpResponse:
        return json_response(data, self.correlation_id, status, headers)

    def stream(
        self,
        status: int,
        headers: Mapping[str, str],
        chunks: AsyncIterator[bytes],
        on_disconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> StreamedReply:
        """An answer whose body is sent chunk by chunk as `chunks` yields it, never buffered whole.

        The status and headers are final (errors found later can only end the stream). When the client
        goes away, `chunks` is cancelled (CancelledError at its current await, then closed) and
        `on_disconnect()` runs. A client that reads slowly slows `chunks` down: each chunk is sent before
        the next is asked for.
        """
        return StreamedReply(chunks, status, {CORRELATION_HEADER: self.correlation_id, **headers}, on_disconnect)


class StreamedReply(StreamingResponse):
    """A streamed body whose producer is cancelled when the client disconnects (see `Call.stream`).

    Starlette's own StreamingResponse stops watching for the disconnect on ASGI 2.4 servers and notices
    a gone client only at its next write; this one watches `receive` for `http.disconnect` throughout,
    so a producer that is waiting (for a tool, a notification) stops as soon as the client leaves.
    """

    def __init__(
        self,
        chunks: AsyncIterator[bytes],
        status: int,
        headers: Mapping[str, str],
        on_disconnect: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(chunks, status_code=status, headers=dict(headers))
        self.chunks = chunks
        self.on_disconnect = on_disconnect
        # What happened, for the log and for tests: "complete", "disconnected" or "failed".
        self.outcome = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        producer = asyncio.ensure_future(self._produce(send))
        watcher = asyncio.ensure_future(_client_gone(receive))
        try:
            await asyncio.wait({producer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone = watcher.done() and not watcher.cancelled() and not producer.done()
            for task in (producer, watcher):
                task.cancel()
            results = await asyncio.gather(producer, watcher, return_exceptions=True)
            await _close(self.chunks)
        failure = results[0] if isinstance(results[0], BaseException) else None
        # A write to a client that has gone (ASGI 2.4 servers raise OSError) is a disconnect too.
        if gone or isinstance(failure, OSError):
            self.outcome = "disconnected"
            if self.on_disconnect is not None:
                await self.on_disconnect()
        elif failure is not None and not isinstance(failure, asyncio.CancelledError):
            # Headers are gone already: the stream just ends, and the log keeps why.
            self.outcome = "failed"
            log.error("streamed answer failed", exc_info=failure)
        else:
            self.outcome = "complete"

    async def _produce(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        async for chunk in self.chunks:
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _client_gone(receive: Receive) -> None:
    """Return when the ASGI server reports `http.disconnect` (the body was read already, by the edge)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _close(chunks: AsyncIterator[bytes]) -> None:
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


Handler = Callable[[Call], Awaitable[Reply]]


def json_body_limit() -> int:
    """The body limit of every route but uploads: FIREBREAK_MAX_REQUEST_BYTES."""
    from functions import wiring

    return wiring.settings().max_request_bytes


def endpoint(
    *, anonymous: bool = False, durable: bool = False, body_limit: Callable[[], int] = json_body_limit
) -> Callable[[Handler], Callable[..., Awaitable[Response]]]:
    """Turn `async def handler(call: Call)` into the function the worker calls.

    Every failure becomes the error envelope (`guarded`); the Host/Origin allow-list is checked, the
    dependencies looked up and, unless `anonymous`, the caller resolved (401 before the handler runs).
    With `durable`, the function takes the Durable client binding (`client`) and `call.runs()` works.
    `body_limit` is declared on the function (`max_body_bytes`) so the offline host refuses a larger body
    before reading it; the handler must still apply it (`read_body`), as Azure's host reads any body.
    """

    def decorate(handler: Handler) -> Callable[..., Awaitable[Response]]:
        async def serve(request: Request, client: df.DurableOrchestrationClient | None) -> Response:
            head = http_request_view(request, b"")

            async def run(correlation_id: str) -> Reply:
                from functions import wiring

                deps = wiring.deps()
                principal = None if anonymous else await deps.principals.resolve(dict(head.headers))
                # After the caller: an unauthenticated request gets its 401 without its body being read.
                req = http_request_view(request, await read_request_body(request, body_limit()))
                return await handler(Call(req, correlation_id, deps, principal, client))

            response = to_response(await guarded(head, run))
            # Answers hold a caller's data behind a key and a principal: no shared cache may keep one and
            # serve it to someone else. A route that allows more sets its own (openapi.json: private).
            if "cache-control" not in response.headers:
                response.headers["Cache-Control"] = "no-store"
            return response

        # The worker matches bindings by parameter name: the signature must be (req) or (req, client), and
        # the annotations must be Starlette Request/Response the web extension registers (checked at indexing).
        wrapper: Callable[..., Awaitable[Response]]
        if durable:

            async def with_client(req: Request, client: df.DurableOrchestrationClient) -> Response:
                return await serve(req, client)

            wrapper = with_client
        else:

            async def without_client(req: Request) -> Response:
                return await serve(req, None)

            wrapper = without_client
        # Not functools.wraps: that would expose the handler's signature (call) to the worker.
        wrapper.__name__ = handler.__name__
        wrapper.__doc__ = handler.__doc__
        # The offline host reads it to refuse an oversized body before reading it (devhost/http_server.py).
        setattr(wrapper, "max_body_bytes", body_limit)  # noqa: B010  # a function attribute mypy cannot type
        return wrapper

    return decorate


def http_request_view(request: Request, body: bytes) -> func.HttpRequest:
    """What handlers read (`call.req`): the request's method, URL, headers (lower-case names, repeats
    joined with ", "), query, route parameters and the body already read."""
    headers: dict[str, str] = {}
    for key, value in request.headers.items():
        name = key.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return func.HttpRequest(
        method=request.method,
        url=str(request.url),
        headers=headers,
        params=dict(request.query_params.items()),
        route_params={k: str(v) for k, v in request.path_params.items()},
        body=body,
    )


async def read_request_body(request: Request, limit: int) -> bytes:
    """The body, read in the server's chunks: PayloadTooLarge (413) by its declared Content-Length before
    anything is read, or as soon as what arrived passes `limit` (a chunked body declares none)."""
    declared = (request.headers.get("content-length") or "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(f"Body declares {declared[:20]} bytes", limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(f"Body is over {limit} bytes", limit)
        chunks.append(chunk)
    return b"".join(chunks)


def to_response(reply: Reply) -> Response:
    """A handler's `func.HttpResponse` as a Starlette Response (a Response passes as it is)."""
    if isinstance(reply, Response):
        return reply
    headers = {k: v for k, v in reply.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
    if reply.mimetype and "content-type" not in {k.lower() for k in headers}:
        headers["Content-Type"] = f"{reply.mimetype}; charset={reply.charset}" if reply.charset else reply.mimetype
    return Response(content=reply.get_body(), status_code=reply.status_code, headers=headers)


def read_body(req: func.HttpRequest, limit: int) -> bytes:
    """The body, or PayloadTooLarge (413): by its declared Content-Length before the body is touched, then by
    its real size (a chunked body declares none)."""
    declared = (req.headers.get("content-length") or "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(f"Body declares {declared[:20]} bytes", limit)
    body = req.get_body() or b""
    if len(body) > limit:
        raise _too_large(f"Body is {len(body)} bytes", limit)
    return body


def _too_large(what: str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"{what}; the limit is {limit}",
        details={"limit_bytes": limit},
        recovery_suggestions=["Send a body of at most details.limit_bytes bytes."],
    )


def read_json_object(req: func.HttpRequest, limit: int) -> dict[str, Any]:
    """The body as a JSON object; an empty body is `{}` (a tool without arguments).

    A body that is not a JSON object at all is INVALID_REQUEST (the transport is wrong: do not retry it
    unchanged); arguments that are JSON but wrong for the tool are VALIDATION_ERROR, from the tool.
    """
    body = read_body(req, limit)
    if not body.strip():
        return {}
    # A JSON body must say so: a page's cross-site "simple" POST (text/plain, no preflight) is refused.
    require_json_content_type(req.headers.get("content-type"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRequest.on_field("(body)", f"invalid byte at {exc.start}", "Body is not UTF-8") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "body"
        raise InvalidRequest.on_field("(body)", str(exc)[:200], f"Body is not valid JSON ({where})") from None
    # JSON may spell a lone UTF-16 surrogate ("\\ud800"), which no UTF-8 text can hold: refuse it here, as
    # the MCP route's parser does, instead of failing later wherever the string is encoded.
    if "\\u" in text and _has_lone_surrogate(data):
        raise InvalidRequest.on_field(
            "(body)",
            "lone surrogate",
            "Body holds a lone UTF-16 surrogate escape, which is not text",
        )
    if not isinstance(data, dict):
        raise InvalidRequest.on_field(
            "(body)",
            "expected an object",
            f"Body must be a JSON object of the tool's arguments, got {type(data).__name__}",
        )
    return data


def _has_lone_surrogate(data: Any) -> bool:
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
