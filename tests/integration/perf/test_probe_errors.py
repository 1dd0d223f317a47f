"""collect.run's probe errors name the URL's host, never the address it resolved to: an allow-listed internal name
that refuses connections must not tell the caller its address."""

from __future__ import annotations

import socket

from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.perf.collect.probe import probe


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


async def test_a_refused_connection_names_the_host_not_its_address() -> None:
    first = socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)[0][4][0]
    port = _closed_port()
    env = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_COLLECT_ALLOWED_HOSTS": f"localhost:{port}"}
    guard = OutboundGuard(Settings.from_env(env), "collect")
    result = await probe(guard, f"http://localhost:{port}/", "/", {}, 5)
    assert result["status"] is None
    assert result["error"], result
    assert "localhost" in result["error"], result
    assert first not in result["error"], result
