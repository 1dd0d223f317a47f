"""GuardedTransport against a real server on 127.0.0.1: what a response body may make the client do.

The server chooses the charset and the content coding: only an allowed charset decodes the text, and the
response cap counts inflated bytes, not the compressed ones (a 200 KB gzip body of zeros was 200 MB read).
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from shared.core.guarded_http import GuardedTransport, ResponseTooLarge
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
CAP = 1024 * 1024
BOMB = gzip.compress(b"\0" * (64 * CAP), 9)  # 64 MiB of zeros in about 64 KB
# path -> (Content-Type, Content-Encoding or "", body)
PAGES: dict[str, tuple[str, str, bytes]] = {
    "/punycode": ("text/plain; charset=punycode", "", b"x-" + b"9" * 1000),
    "/utf-7": ("text/event-stream; charset=utf-7", "", b"data: +AGE-\n\n"),
    "/latin-1": ("text/plain; charset=iso-8859-1", "", "café".encode("latin-1")),
    "/bomb": ("application/json", "gzip", BOMB),
    "/gzip": ("application/json", "gzip", gzip.compress(b'{"ok": true}')),
    "/deflate": ("application/json", "deflate", zlib.compress(b'{"ok": 1}')),
    "/raw-deflate": ("application/json", "deflate", zlib.compress(b'{"ok": 2}', wbits=-15)),
}
seen_accept: list[str] = []


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen_accept.append(self.headers.get("Accept-Encoding", ""))
            kind, coding, body = PAGES[self.path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            if coding:
                self.send_header("Content-Encoding", coding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _client() -> httpx2.AsyncClient:
    transport = GuardedTransport(OutboundGuard(Settings.from_env(LOCAL)), "test.url", max_response_bytes=CAP)
    return httpx2.AsyncClient(transport=transport, trust_env=False)


async def test_a_charset_off_the_allow_list_decodes_as_utf8(base: str) -> None:
    async with _client() as client:
        r = await client.get(f"{base}/punycode")
        assert r.encoding == "utf-8"
        assert r.text == "x-" + "9" * 1000  # punycode would have made one character of it, in quadratic time
        r = await client.get(f"{base}/latin-1")
        assert r.text == "café"  # an allowed charset is the server's
        async with client.stream("GET", f"{base}/utf-7") as streamed:
            assert "".join([t async for t in streamed.aiter_text()]) == "data: +AGE-\n\n"  # SSE reads aiter_text


async def test_the_cap_counts_inflated_bytes(base: str) -> None:
    async with _client() as client:
        with pytest.raises(ResponseTooLarge):
            await client.get(f"{base}/bomb")
        for path, value in (("/gzip", True), ("/deflate", 1), ("/raw-deflate", 2)):
            r = await client.get(f"{base}{path}")
            assert r.json() == {"ok": value}
            assert "content-encoding" not in r.headers
    assert set(seen_accept) == {"gzip, deflate"}  # never an encoding the transport would not inflate


async def test_a_caller_asking_for_identity_gets_the_body_as_sent(base: str) -> None:
    async with _client() as client:
        async with client.stream("GET", f"{base}/gzip", headers={"Accept-Encoding": "identity"}) as r:
            assert r.headers["content-encoding"] == "gzip"  # NeuBird's client refuses it by this header
            raw = b"".join([chunk async for chunk in r.aiter_raw()])
        assert gzip.decompress(raw) == b'{"ok": true}'
