"""A runbook server for one scenario: a real HTTP server on 127.0.0.1 answering the alert's runbook_url path.

GET on the path of the alert's `annotations.runbook_url` (or on `/runbook`) answers the scenario's
`runbook_markdown` as text/markdown; any other path, and a scenario without `runbook_markdown`, answer 404 (the
fixtures' README: the report must still be written). `RunbookServer.runbook_url` is the alert's runbook URL
pointed at this server, for a harness that rewrites the alert.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


def runbook_path(scenario: dict[str, Any]) -> str | None:
    """The path of the alert's runbook_url, or None when the alert has none."""
    url = (scenario.get("alert", {}).get("annotations") or {}).get("runbook_url")
    return (urlsplit(url).path or "/") if url else None


@dataclass
class RunbookServer:
    base_url: str
    runbook_url: str  # where this scenario's runbook is served (the alert's path, or /runbook)
    requests: list[str] = field(default_factory=list)


@contextmanager
def serve_runbook(scenario: dict[str, Any], port: int = 0) -> Iterator[RunbookServer]:
    """Serve the scenario's runbook on 127.0.0.1 until the block ends."""
    markdown: str | None = scenario.get("runbook_markdown")
    paths = {"/runbook"} | ({p} if (p := runbook_path(scenario)) else set())
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            seen.append(self.path)
            path = urlsplit(self.path).path
            if markdown is not None and path in paths:
                status, body, kind = 200, markdown.encode("utf-8"), "text/markdown; charset=utf-8"
            else:
                status, body, kind = 404, b"404 page not found\n", "text/plain; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="runbook-server")
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield RunbookServer(base_url=base, runbook_url=base + (runbook_path(scenario) or "/runbook"), requests=seen)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
