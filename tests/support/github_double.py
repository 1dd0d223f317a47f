"""A GitHub-like raw file server on 127.0.0.1 (plain or TLS) for runbook tests, with hostile routes beside it.

`/<owner>/<repo>/<ref>/<path>` answers a file from `files` as text/plain, like raw.githubusercontent.com
(owner and repository case-insensitive, as GitHub's are), or a 301 to the path in `moved` (a renamed
repository). A repository in `private` answers 404 unless the request carries `Authorization: token
<token>` (or Bearer), as GitHub does, and a missing file answers the same 404. Other routes:
`/site/<name>` (any body and content type from `pages`), `/redirect?to=URL` (302), `/big?bytes=N` (a
streamed text body), `/slow?seconds=S` (headers only after S seconds). Every request's path and headers
are recorded. With `decode_paths` the raw routes see the path as a lenient front proxy or framework hands it
on: percent-decoded until stable, backslashes and `..;` read as `/` and `..`, dot segments resolved.
"""

from __future__ import annotations

import contextlib
import posixpath
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.target_site import self_signed


@dataclass
class GitHubDouble:
    url: str
    token: str
    cert_path: Path | None = None  # the certificate to trust when served over TLS
    files: dict[str, str] = field(default_factory=dict)  # "owner/repo/ref/path" -> text
    private: set[str] = field(default_factory=set)  # "owner/repo"
    moved: dict[str, str] = field(default_factory=dict)  # "owner/repo/ref/path" -> the Location it answers
    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # name -> (content type, body)
    requests: list[dict[str, object]] = field(default_factory=list)
    decode_paths: bool = False
    stop: threading.Event = field(default_factory=threading.Event)

    def headers_for(self, path_start: str) -> list[dict[str, str]]:
        """Lower-cased headers of every recorded request whose path starts with `path_start`."""
        return [r["headers"] for r in self.requests if str(r["path"]).startswith(path_start)]  # type: ignore[misc]


def _raw_answer(double: GitHubDouble, segments: list[str], auth: str) -> tuple[int, str | None, bytes]:
    """(status, Location, body) of raw.githubusercontent.com for /<owner>/<repo>/<ref>/<path>."""
    repo = "/".join(segments[:2]).lower()
    key = "/".join([repo, *segments[2:]])
    if key in double.moved:
        return 301, double.moved[key], b""
    authorised = auth in (f"token {double.token}", f"Bearer {double.token}")
    if key not in double.files or (repo in double.private and not authorised):
        return 404, None, b"404: Not Found"  # GitHub does not reveal that a private file exists
    return 200, None, double.files[key].encode()


def _decoded(path: str) -> str:
    """`path` as a server that decodes before it routes reads it (what the token check must not rely on)."""
    previous = None
    while previous != path:
        previous, path = path, unquote(path)
    path = path.replace("\\", "/").replace("..;", "..")
    return posixpath.normpath(path)


def _handler(double: GitHubDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # the http.server hook name
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            double.requests.append({"path": parts.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
            route = {"/redirect": self._redirect, "/big": self._big, "/slow": self._slow}.get(parts.path)
            if route is not None:
                route(query)
            elif parts.path.startswith("/site/"):
                page = double.pages.get(parts.path.removeprefix("/site/"))
                self._send(*((200, page[1], page[0]) if page else (404, b"404: Not Found")))
            else:
                path = _decoded(parts.path) if double.decode_paths else parts.path
                self._raw([s for s in path.split("/") if s])

        def _redirect(self, query: dict[str, str], status: int = 302) -> None:
            self.send_response(status)
            self.send_header("Location", query.get("to", "/"))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _big(self, query: dict[str, str]) -> None:
            total, sent, chunk = int(query.get("bytes", "0")), 0, b"#" * 65535 + b"\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(total))
            self.end_headers()
            with contextlib.suppress(OSError):  # the client stops reading at its limit
                while sent < total:
                    piece = chunk[: total - sent]
                    self.wfile.write(piece)
                    sent += len(piece)

        def _slow(self, query: dict[str, str]) -> None:
            double.stop.wait(float(query.get("seconds", "30")))
            with contextlib.suppress(OSError):  # the client gave up first, as the test intends
                self._send(200, b"# late\n", "text/markdown")

        def _raw(self, segments: list[str]) -> None:
            status, location, body = _raw_answer(double, segments, self.headers.get("Authorization", ""))
            if location is not None:
                self._redirect({"to": location}, status=status)
            else:
                self._send(status, body)

    return Handler


@contextmanager
def github_double(token: str = "ghp_doubletoken0123456789", tls_dir: Path | None = None) -> Iterator[GitHubDouble]:
    """Serve on a free port of 127.0.0.1 (TLS with a self-signed certificate written to `tls_dir`, see
    `cert_path`); stopped, slow requests released, at exit."""
    import ssl

    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    scheme = "http"
    if tls_dir is not None:
        cert, key = self_signed(tls_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    double = GitHubDouble(url=f"{scheme}://127.0.0.1:{server.server_address[1]}", token=token)
    if tls_dir is not None:
        double.cert_path = tls_dir / "cert.pem"
    server.RequestHandlerClass = _handler(double)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield double
    finally:
        double.stop.set()
        server.shutdown()
        server.server_close()
