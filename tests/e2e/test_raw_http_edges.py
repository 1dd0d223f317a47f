"""What a client can put on the wire before any route runs, sent byte for byte over a socket to a real host.

A malformed Host is a 400 in the envelope on every kind of route (it was a 500 with an empty body), a body
over a route's limit is refused by its declared length before it is read (or, chunked, as soon as it passes
the limit), and no keyed answer may be kept by a shared cache.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess

# Hang guard only: an answer that needs the rest of a body that never comes would wait for this.
SOCKET_TIMEOUT_S = 30.0
MIB = 1024 * 1024
JSON_LIMIT = 4 * MIB  # FIREBREAK_MAX_REQUEST_BYTES' default: tools, MCP, REST routes


def exchange(host: HostProcess, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send `head` (request line and headers, without the blank line) and `body`; read one response.

    The connection stays open after `body`: a request that promised more bytes than it sent is answered
    only if the host does not wait for them.
    """
    with socket.create_connection(("127.0.0.1", host.port), timeout=SOCKET_TIMEOUT_S) as sock:
        sock.sendall(head + b"\r\n\r\n" + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        header_block, _, rest = data.partition(b"\r\n\r\n")
        lines = header_block.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return status, headers, rest[:length]


def envelope(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    assert headers.get("content-type", "").startswith("application/json"), (status, headers, body[:200])
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "details", "recovery_suggestions", "correlation_id"}
    return dict(error)


# ---- Host -----------------------------------------------------------------------------------------------------

MALFORMED_HOSTS = [
    b"127.0.0.1:7071.",
    b"x:99999999",
    b"127.0.0.1:65536",
    b"127.0.0.1:-1",
    b"127.0.0.1:abc",
    b"127.0.0.1:7071:1",
    b"[::1]x",
    b"[::1",
    b":",
    b"127.0.0.1:",
    b"127.0.0.1:0",
    "127.0.0.1:\u0663".encode(),
    "h\u00f4st:7071".encode(),
    b"a b",
    b"user@127.0.0.1",
    b"[zz]:1",
]
ROUTES = [b"GET /api/health", b"GET /api/tools", b"POST /api/tools/health.check", b"GET /api/no/such/route"]


@pytest.mark.parametrize("host_header", MALFORMED_HOSTS, ids=[repr(h) for h in MALFORMED_HOSTS])
def test_a_malformed_host_is_a_400_in_the_envelope_on_every_route(host: HostProcess, host_header: bytes) -> None:
    for route in ROUTES:
        status, headers, body = exchange(host, route + b" HTTP/1.1\r\nHost: " + host_header + b"\r\nContent-Length: 0")
        assert status == 400, (route, host_header, status, body[:300])
        assert envelope(status, headers, body)["code"] == "INVALID_REQUEST"


def test_a_well_formed_host_still_works(host: HostProcess) -> None:
    for host_header in (f"127.0.0.1:{host.port}".encode(), b"localhost", b"[::1]:7071"):
        status, _, body = exchange(host, b"GET /api/health HTTP/1.1\r\nHost: " + host_header)
        assert status == 200, (host_header, body[:300])


# ---- bodies over the limit ------------------------------------------------------------------------------------


def test_a_declared_oversized_body_is_refused_before_it_is_sent(host: HostProcess) -> None:
    # Only the headers are sent and the connection stays open: the answer must not wait for the body.
    for declared in (JSON_LIMIT + 1, 10**12):
        head = (
            b"POST /api/tools/health.check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(declared).encode()
        )
        status, headers, body = exchange(host, head)
        assert status == 413, (declared, body[:300])
        error = envelope(status, headers, body)
        assert error["code"] == "INVALID_REQUEST"
        assert error["details"]["limit_bytes"] == JSON_LIMIT


def test_a_chunked_oversized_body_is_refused_once_past_the_limit(host: HostProcess) -> None:
    # limit + 1 MiB in chunks, and no final chunk: the host must stop at the limit, not wait for the end.
    chunk = b"x" * (256 * 1024)
    framed = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range((JSON_LIMIT + MIB) // len(chunk)))
    head = (
        b"POST /api/tools/health.check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked"
    )
    status, headers, body = exchange(host, head, framed)
    assert status == 413, body[:300]
    assert envelope(status, headers, body)["details"]["limit_bytes"] == JSON_LIMIT


def test_a_body_within_the_limit_still_arrives(host: HostProcess) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        content=b'{"include_versions": false}' + b" " * (JSON_LIMIT - 100),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert r.status_code == 200, r.text[:300]


# ---- caching --------------------------------------------------------------------------------------------------


def test_no_keyed_answer_may_be_kept_by_a_shared_cache(host: HostProcess) -> None:
    """Answers are for one caller (their credentials): an answer a proxy or CDN kept (`public`, or nothing said
    on a GET) could be served to another. The OpenAPI document was `public, max-age=300`."""
    for method, path, body in (
        ("GET", "/api/openapi.json", None),
        ("GET", "/api/docs", None),
        ("GET", "/api/tools", None),
        ("GET", "/api/tasks", None),
        ("GET", "/api/investigations", None),
        ("GET", "/api/perf/reports/report_x.md", None),
        ("POST", "/api/tools/health.check", {}),
        ("POST", "/api/tools/no.such.tool", {}),
        ("GET", "/api/mcp", None),
    ):
        r = httpx.request(method, f"{host.base_url}{path}", json=body, timeout=60)
        directives = {d.strip().split("=")[0] for d in r.headers.get("cache-control", "").lower().split(",")}
        assert "public" not in directives, (path, r.headers)
        assert directives & {"private", "no-store"}, (path, r.status_code, r.headers)
