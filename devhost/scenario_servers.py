"""Alert-investigation scenarios served as their fixtures' README says: the scenario MCP server, the runbook
server, and the keyword score of a report.

A scenario file (`NN_slug.json`, schema: tests/fixtures/investigations/README.md) gives an alert, its runbook,
what each MCP tool answers and the keywords a good report states. `load`, `tools_for`, `answer`, `score` (reading
a file, the tool list to expose, answering one tool call, the README's score) are devhost/scenario_data.py's,
re-exported here. Here:

- `serve_scenario`: a real Streamable HTTP MCP server on 127.0.0.1 (the mcp SDK's low-level server, stateless,
  JSON responses). `tools/list` is `tools_for` with the annotations the real servers send (`annotations_for`:
  readOnlyHint true and the rest, as kubernetes-mcp-server and the Prometheus/Tempo servers declare them; the
  fixture's list was stripped of them), `tools/call` is `answer` (`isError` when the answer says so),
  and a tool that is not listed is the protocol's unknown-tool error (-32602), as kubernetes-mcp-server answers
  it. With `toolset="extras"` it serves the scenario's `prometheus_*` / `tempo_*` entries instead (data
  HolmesGPT got from Prometheus or Tempo), as the README's second server.
- `serve_runbook`: GET on the path of the alert's `annotations.runbook_url` (or `/runbook`) answers the
  scenario's `runbook_markdown`; any other path, and a scenario without one, answer 404.

Both servers are swappable: `server.load(scenario)` makes the running server answer another scenario, so a
harness that starts one app host (whose MCP server setting is fixed when it starts) can run many scenarios
one after another (devhost/scenarios.py). The tests use these through tests/support/.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp, Receive, Scope, Send

from devhost.scenario_data import (
    EXTRA_PREFIXES,
    SCENARIO_GLOB,
    TOOLS_FILE,
    Answer,
    Toolset,
    all_tools,
    annotations_for,
    answer,
    extra_tool_names,
    load,
    runbook_path,
    scenario_files,
    score,
    served_scenario,
    split_scenario,
    tools_for,
)

__all__ = [
    "EXTRA_PREFIXES",
    "SCENARIO_GLOB",
    "TOOLS_FILE",
    "Answer",
    "RunbookServer",
    "ScenarioServer",
    "Toolset",
    "all_tools",
    "annotations_for",
    "answer",
    "build_app",
    "build_server",
    "extra_tool_names",
    "load",
    "runbook_path",
    "scenario_files",
    "score",
    "serve_app",
    "serve_runbook",
    "serve_scenario",
    "served_scenario",
    "split_scenario",
    "tools_for",
]

# ---- the MCP server -------------------------------------------------------------------------------------


class _Current:
    """The scenario a running server answers, replaced by `load` (a lock: handlers run on the server's loop)."""

    def __init__(self, scenario: dict[str, Any], toolset: Toolset) -> None:
        self.toolset = toolset
        self._lock = threading.Lock()
        self._set(scenario)

    def _set(self, scenario: dict[str, Any]) -> None:
        served = served_scenario(scenario, self.toolset)
        tools = [_tool(t) for t in tools_for(served)]
        with self._lock:
            self.scenario, self.tools = served, tools

    def load(self, scenario: dict[str, Any]) -> None:
        self._set(scenario)

    def get(self) -> tuple[dict[str, Any], list[types.Tool]]:
        with self._lock:
            return self.scenario, self.tools


def _tool(listed: dict[str, Any]) -> types.Tool:
    """One tool as the real server lists it: the fixture's name, description and schema, and its annotations."""
    hints = annotations_for(listed["name"])
    return types.Tool(
        name=listed["name"],
        title=(hints or {}).get("title"),
        description=listed.get("description"),
        input_schema=listed["inputSchema"],
        annotations=types.ToolAnnotations.model_validate(hints) if hints else None,
    )


@dataclass
class ToolCallSeen:
    """One tools/call the server received: when it arrived and, once answered, when it was answered
    (time.monotonic() of this process)."""

    tool: str
    arguments: dict[str, Any]
    received: float
    answered: float | None = None


# A fixed hold for every tools/call, or one chosen per call from (tool, arguments).
Delay = float | Callable[[str, dict[str, Any]], float]


@dataclass
class ScenarioServer:
    """A running server: `url` is its MCP endpoint; `requests` holds each POST's headers (lower-case names);
    `calls` each tools/call of a listed tool, in arrival order; `load(scenario)` makes it answer another
    scenario from the next request on."""

    url: str
    port: int
    requests: list[dict[str, str]] = field(default_factory=list)
    current: _Current | None = None
    calls: list[ToolCallSeen] = field(default_factory=list)

    def in_flight(self) -> int:
        """Tool calls received and not answered yet."""
        return sum(1 for c in self.calls if c.answered is None)

    def load(self, scenario: dict[str, Any]) -> None:
        if self.current is None:
            raise RuntimeError("this server was not started by serve_scenario")
        self.current.load(scenario)


class _Recorder:
    """ASGI middleware: records request headers; answers 401 when a required header is missing or wrong."""

    def __init__(self, app: ASGIApp, seen: list[dict[str, str]], required: dict[str, str]) -> None:
        self.app, self.seen, self.required = app, seen, {k.lower(): v for k, v in required.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            self.seen.append(headers)
            if any(headers.get(k) != v for k, v in self.required.items()):
                body = b'{"error": "unauthorized"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _build(current: _Current, delay_s: Delay, calls: list[ToolCallSeen] | None = None) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=current.get()[1])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        scenario, tools = current.get()
        if params.name not in {t.name for t in tools}:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        seen = ToolCallSeen(params.name, dict(params.arguments or {}), time.monotonic())
        if calls is not None:
            calls.append(seen)
        try:
            delay = delay_s(params.name, seen.arguments) if callable(delay_s) else delay_s
            if delay:
                await asyncio.sleep(delay)
            found = answer(scenario, params.name, dict(params.arguments or {}))
        finally:
            seen.answered = time.monotonic()
        return types.CallToolResult(content=[types.TextContent(type="text", text=found.text)], is_error=found.is_error)

    return Server(
        "scenario-" + str(current.scenario.get("id", "unknown")), on_list_tools=list_tools, on_call_tool=call_tool
    )


def build_server(scenario: dict[str, Any], *, delay_s: float = 0.0) -> Server[Any]:
    """The MCP server of one (already served) scenario; `delay_s` holds every tools/call that long (timeouts)."""
    return _build(_Current(scenario, "kubernetes"), delay_s)


def _app(server: Server[Any], seen: list[dict[str, str]], required: dict[str, str] | None) -> ASGIApp:
    app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host="127.0.0.1"
    )
    return _Recorder(app, seen, required or {})


def build_app(
    scenario: dict[str, Any],
    *,
    delay_s: float = 0.0,
    required_headers: dict[str, str] | None = None,
    seen: list[dict[str, str]] | None = None,
) -> ASGIApp:
    """The ASGI app: the MCP endpoint at /mcp (stateless, JSON responses), wrapped by the header recorder."""
    return _app(build_server(scenario, delay_s=delay_s), seen if seen is not None else [], required_headers)


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it. asyncio sets TCP_NODELAY itself only on sockets created with
    # proto=IPPROTO_TCP, which this one is not: without it uvicorn's separate header and body writes
    # wait for the client's delayed ACK, about 40 ms per request (3 requests per tool call).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


@contextmanager
def serve_app(app: ASGIApp, port: int = 0, ssl_files: tuple[Path, Path] | None = None) -> Iterator[int]:
    """Run an ASGI app with uvicorn on 127.0.0.1 in a background thread; yields the port; stops it after.

    `ssl_files` (certificate, key) serves https instead of http.
    """
    sock = _listen(port)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=1,
        ssl_certfile=str(ssl_files[0]) if ssl_files else None,
        ssl_keyfile=str(ssl_files[1]) if ssl_files else None,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="scenario-mcp")
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the scenario MCP server did not start")
            threading.Event().wait(0.02)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def serve_scenario(
    scenario: dict[str, Any],
    *,
    port: int = 0,
    toolset: Toolset = "kubernetes",
    delay_s: Delay = 0.0,
    required_headers: dict[str, str] | None = None,
) -> Iterator[ScenarioServer]:
    """Serve a scenario (a loaded dict) on 127.0.0.1 until the block ends; `server.load` swaps it.

    `delay_s` holds every tools/call that long, or as long as `delay_s(tool, arguments)` says."""
    seen: list[dict[str, str]] = []
    calls: list[ToolCallSeen] = []
    current = _Current(scenario, toolset)
    with serve_app(_app(_build(current, delay_s, calls), seen, required_headers), port) as bound:
        yield ScenarioServer(
            url=f"http://127.0.0.1:{bound}/mcp", port=bound, requests=seen, current=current, calls=calls
        )


# ---- the runbook server -----------------------------------------------------------------------------------


@dataclass
class RunbookServer:
    base_url: str
    runbook_url: str  # where the current scenario's runbook is served (the alert's path, or /runbook)
    requests: list[str] = field(default_factory=list)
    _state: dict[str, Any] = field(default_factory=dict, repr=False)

    def load(self, scenario: dict[str, Any]) -> None:
        """Serve another scenario's runbook from the next request on (and point `runbook_url` at it)."""
        paths = {"/runbook"} | ({p} if (p := runbook_path(scenario)) else set())
        self._state.update(markdown=scenario.get("runbook_markdown"), paths=paths)
        self.runbook_url = self.base_url + (runbook_path(scenario) or "/runbook")

    def page(self, path: str, body: bytes, content_type: str) -> str:
        """Serve `body` as `content_type` at `path` as well (a hostile page, another format); its URL."""
        self._state.setdefault("pages", {})[path] = (body, content_type)
        return self.base_url + path


@contextmanager
def serve_runbook(scenario: dict[str, Any], port: int = 0) -> Iterator[RunbookServer]:
    """Serve the scenario's runbook on 127.0.0.1 until the block ends; `server.load` swaps it."""
    state: dict[str, Any] = {}
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            seen.append(self.path)
            path = urlsplit(self.path).path
            markdown: str | None = state.get("markdown")
            if path in state.get("pages", {}):
                status, (body, kind) = 200, state["pages"][path]
            elif markdown is not None and path in state.get("paths", set()):
                status, body, kind = 200, markdown.encode("utf-8"), "text/markdown; charset=utf-8"
            else:
                status, body, kind = 404, b"404 page not found\n", "text/plain; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)  # a reader that stops at its size limit hangs up

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="runbook-server")
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    served = RunbookServer(base_url=base, runbook_url=base + "/runbook", requests=seen, _state=state)
    served.load(scenario)
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
