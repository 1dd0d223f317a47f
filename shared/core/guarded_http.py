"""An httpx2 transport for caller-chosen URLs: every request goes through the outbound guard.

`GuardedTransport` checks each request's URL with `OutboundGuard.resolve` and connects to the address the guard
checked, so a DNS answer cannot change between the check and the connection. The request keeps its Host header
and TLS name (SNI, certificate check) of the configured host; only the TCP connection is pinned. Response bodies
are capped (`ResponseTooLarge` once they pass `max_response_bytes`, counted after gzip or deflate is inflated here),
so a hostile server cannot exhaust memory, and their text is decoded only in a charset on `charsets.ALLOWED` (UTF-8
otherwise). A caller that asks for `Accept-Encoding: identity` gets the body as sent (NeuBird's client refuses a
compressed one).

Use it with `trust_env=False` on the client (no proxy from the environment: the checked address is the one
connected to). Callers that want to explain failures (which address belonged to which host, the last error
status) pass `on_target` / `on_response`.
"""

from __future__ import annotations

import functools
import os
import ssl
import zlib
from collections.abc import AsyncIterator, Callable

import httpx2
from opentelemetry.trace import SpanKind

from shared.core import charsets, telemetry
from shared.core.outbound import OutboundGuard, Target

_INFLATED = ("gzip", "deflate")


class ResponseTooLarge(Exception):
    """A response body passed the transport's `max_response_bytes`."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the server's response passed {limit} bytes")
        self.limit = limit


class CappedStream(httpx2.AsyncByteStream):
    """A response body that fails with `ResponseTooLarge` once it passes `limit` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner, self._limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise ResponseTooLarge(self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class InflatedStream(httpx2.AsyncByteStream):
    """A gzip or deflate body inflated here, in pieces of at most PIECE_BYTES, so that a cap counts what is read.

    httpx inflates after the transport: the cap saw compressed bytes, and 200 KB of gzip became 200 MB.
    """

    PIECE_BYTES = 64 * 1024

    def __init__(self, inner: httpx2.AsyncByteStream, encoding: str) -> None:
        self._inner, self._encoding = inner, encoding

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # gzip (and x-gzip): the gzip header; deflate: zlib's, or raw deflate as some servers send it.
        inflater = zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in self._encoding else 0))
        first = True
        try:
            async for chunk in self._inner:
                if first and self._encoding == "deflate" and chunk and (chunk[0] & 0x0F) != 8:
                    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                first = first and not chunk
                data = chunk
                while data:
                    piece = inflater.decompress(data, self.PIECE_BYTES)
                    data = inflater.unconsumed_tail
                    if piece:
                        yield piece
            if tail := inflater.flush():
                yield tail
        except zlib.error as exc:
            raise httpx2.DecodingError(f"the server's {self._encoding} body is corrupt ({exc})") from None

    async def aclose(self) -> None:
        await self._inner.aclose()


@functools.lru_cache(maxsize=4)
def _tls_context_for(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    return httpx2.create_ssl_context(trust_env=False)


def tls_context() -> ssl.SSLContext:
    """The verifying TLS context for outbound calls, one per CA setting (loading the CA bundle costs tens of ms).

    SSL_CERT_FILE / SSL_CERT_DIR are honoured as httpx does (a private CA for an in-house server). They are read
    here, not through Settings, because they are OpenSSL's own variables: every other TLS client in the process
    (the openai and Azure SDKs) takes them from the environment, and this one must trust the same CAs
    (tests/unit/core/test_no_environ_reads.py lists this module).
    """
    return _tls_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


class GuardedTransport(httpx2.AsyncBaseTransport):
    """Checks every request's URL with the outbound guard and connects to the address it checked.

    `url_field` names the URL in a refusal (e.g. "k8s.url", "NEUBIRD_BASE_URL"). `on_target(target)` is called
    once the guard accepted a request (before connecting: connection errors name the address, a caller may map
    it back to the host); `on_response(response)` with every response's status line and headers (its body is
    the capped stream). The client's own request is left untouched, so a same-origin redirect rule still
    compares host names.
    """

    def __init__(
        self,
        guard: OutboundGuard,
        url_field: str,
        *,
        max_response_bytes: int,
        on_target: Callable[[Target], None] | None = None,
        on_response: Callable[[httpx2.Response], None] | None = None,
        limits: httpx2.Limits | None = None,
    ) -> None:
        self._guard, self._field, self._limit = guard, url_field, max_response_bytes
        self._on_target, self._on_response = on_target, on_response
        # `limits`: the connection pool's (a client's own `limits` do not reach a transport it is given).
        limits = limits or httpx2.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's defaults
        self._inner = httpx2.AsyncHTTPTransport(verify=tls_context(), limits=limits)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # The span names the host and the setting the URL came from, never the URL's path or query (an MCP
        # server's URL may carry its key) nor a header.
        attributes = {
            "http.request.method": request.method,
            "server.address": request.url.host,
            "server.port": request.url.port,
            "firebreak.outbound.setting": self._field,
        }
        with telemetry.span(f"{request.method} {request.url.host}", attributes, kind=SpanKind.CLIENT) as span:
            response = await self._send(request)
            span.set_attribute("http.response.status_code", response.status_code)
            return response

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        target = await self._guard.resolve(str(request.url), self._field)
        if self._on_target is not None:
            self._on_target(target)
        extensions = dict(request.extensions)
        if target.scheme == "https":
            extensions["sni_hostname"] = target.host
        headers = request.headers.copy()
        identity = headers.get("accept-encoding", "").strip().lower() == "identity"
        if not identity:
            headers["accept-encoding"] = ", ".join(_INFLATED)  # what this transport inflates under the cap
        pinned = httpx2.Request(
            request.method,
            request.url.copy_with(host=target.address),
            headers=headers,
            stream=request.stream,
            extensions=extensions,
        )
        response = await self._inner.handle_async_request(pinned)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        stream, response_headers = response.stream, response.headers
        codings = [c for c in response_headers.get_list("content-encoding", split_commas=True) if c != "identity"]
        if not identity and len(codings) == 1 and codings[0].lower() in _INFLATED:
            # Inflated before the cap, and sent on as identity: httpx inflating it again later would count nothing.
            stream = InflatedStream(stream, codings[0].lower())
            response_headers = response_headers.copy()
            del response_headers["content-encoding"]
            response_headers.pop("content-length", None)
        capped = httpx2.Response(
            response.status_code,
            headers=response_headers,
            stream=CappedStream(stream, self._limit),
            extensions=response.extensions,
        )
        named = capped.charset_encoding
        if named is not None and charsets.allowed(named) is None:
            # `.text` and `aiter_text()` (SSE) decode with the server's charset: only an allowed one runs.
            capped.encoding = charsets.DEFAULT
        if self._on_response is not None:
            self._on_response(capped)
        return capped

    async def aclose(self) -> None:
        await self._inner.aclose()
