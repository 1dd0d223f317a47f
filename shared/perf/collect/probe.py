"""One HTTP GET timed like curl's -w phases: dns, connect, tls, ttfb, total (ms from the request start).

Hand-rolled on asyncio streams instead of an HTTP client because the phases must be measured where
they happen: name resolution (through the outbound guard, every sample, so a changed DNS answer is
checked again), TCP connect to the checked address, the TLS handshake (none for http), the first
response byte, and the end of the body (read and discarded, at most MAX_BODY bytes). HTTP/1.1 with
`Connection: close`: one connection per sample, like `curl -w` in a loop.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import Any

from shared.core.errors import ValidationFailed
from shared.core.outbound import OutboundGuard, Target

MAX_BODY = 10 * 1024 * 1024
USER_AGENT = "firebreak-collector/1"


def _unaddressed(message: str, checked: list[Target]) -> str:
    """`message` with the checked address replaced by the URL's host: a connection error names the address
    (`Connect call failed ('10.0.0.5', 443)`), which would tell the caller what an allow-listed name resolves to."""
    for target in checked:
        message = message.replace(target.address, target.host)
    return message


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


async def probe(guard: OutboundGuard, url: str, path: str, headers: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """{status, error, timings_ms{dns, connect, tls, ttfb, total}}; failures are an `error`, never an exception."""
    timings: dict[str, float | None] = {"dns": None, "connect": None, "tls": None, "ttfb": None, "total": None}
    status: int | None = None
    start = time.perf_counter()
    checked: list[Target] = []

    async def run() -> int:
        target = await guard.resolve(url, "base_url")
        checked.append(target)
        timings["dns"] = _ms(start, time.perf_counter())
        reader, writer = await asyncio.open_connection(target.address, target.port)
        try:
            timings["connect"] = _ms(start, time.perf_counter())
            if target.scheme == "https":
                await writer.start_tls(ssl.create_default_context(), server_hostname=target.host)
                timings["tls"] = _ms(start, time.perf_counter())
            default_port = 443 if target.scheme == "https" else 80
            host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
            lines = [
                f"GET {path} HTTP/1.1",
                f"Host: {host_header}",
                f"User-Agent: {USER_AGENT}",
                "Accept: */*",
                "Connection: close",
            ]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            first = await reader.read(1)
            if not first:
                raise ConnectionError("the server closed the connection without answering")
            timings["ttfb"] = _ms(start, time.perf_counter())
            head = first + await reader.readuntil(b"\r\n")
            read = len(head)
            while chunk := await reader.read(65536):
                read += len(chunk)
                if read > MAX_BODY:
                    break
            timings["total"] = _ms(start, time.perf_counter())
            parts = head.split(b" ", 2)
            return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 0
        finally:
            writer.close()

    try:
        status = await asyncio.wait_for(run(), timeout_s)
        error = None if status else "malformed status line"
    except TimeoutError:
        error = f"timeout after {int(timeout_s * 1000)} ms"
    except ValidationFailed as exc:
        error = exc.message
    except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError) as exc:
        error = f"{type(exc).__name__}: {_unaddressed(str(exc), checked)[:200]}"
    return {"status": status or None, "error": error, "timings_ms": timings}
