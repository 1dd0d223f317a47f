"""A real Streamable HTTP MCP server on 127.0.0.1 that serves one scenario file as its fixtures' README says.

Built with the mcp SDK's low-level server, stateless, JSON responses: `tools/list` is `scenarios.tools_for`,
`tools/call` is `scenarios.answer` (first matching entry, else the real server's not-found wording; `isError`
when the answer says so), and a tool that is not listed is the protocol's unknown-tool error (-32602), as
kubernetes-mcp-server answers it. With `toolset="extras"` it serves instead the scenario's `prometheus_*` /
`tempo_*` entries (data HolmesGPT got from Prometheus or Tempo), as the README's second server.

In a test: `with serve_scenario(scenario) as server: ... server.url ...` (a background thread, a free port or a
chosen one). From a shell, with the runbook server beside it:

    python -m tests.support.scenario_mcp_server FILE.json [--port N] [--runbook-port N] [--toolset extras]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.support import scenarios
from tests.support.runbook_server import serve_runbook

Toolset = Literal["kubernetes", "extras"]
_EXTRA_PREFIXES = ("prometheus_", "tempo_")


def extra_tool_names(scenario: dict[str, Any]) -> list[str]:
    """The scenario's prometheus_* / tempo_* tools, in file order (what a second server would offer)."""
    names: list[str] = []
    for entry in scenario.get("tool_responses", []):
        if entry["tool"].startswith(_EXTRA_PREFIXES) and entry["tool"] not in names:
            names.append(entry["tool"])
    return names


def served_scenario(scenario: dict[str, Any], toolset: Toolset = "kubernetes") -> dict[str, Any]:
    """The scenario as the server answers it: unchanged for kubernetes, its extra tools only for `extras`."""
    if toolset == "kubernetes":
        return scenario
    return {**scenario, "available_tools": extra_tool_names(scenario)}


@dataclass
class ScenarioServer:
    """A running server: `url` is its MCP endpoint; `requests` holds each POST's headers (lower-case names)."""

    url: str
    port: int
    requests: list[dict[str, str]] = field(default_factory=list)


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


def build_server(scenario: dict[str, Any], *, delay_s: float = 0.0) -> Server[Any]:
    """The MCP server of one (served) scenario; `delay_s` holds every tools/call that long (timeout tests)."""
    tools = [
        types.Tool(name=t["name"], description=t.get("description"), input_schema=t["inputSchema"])
        for t in scenarios.tools_for(scenario)
    ]
    names = {t.name for t in tools}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        if delay_s:
            await asyncio.sleep(delay_s)
        found = scenarios.answer(scenario, params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=found.text)], is_error=found.is_error)

    return Server("scenario-" + str(scenario.get("id", "unknown")), on_list_tools=list_tools, on_call_tool=call_tool)


def build_app(
    scenario: dict[str, Any],
    *,
    delay_s: float = 0.0,
    required_headers: dict[str, str] | None = None,
    seen: list[dict[str, str]] | None = None,
) -> ASGIApp:
    """The ASGI app: the MCP endpoint at /mcp (stateless, JSON responses), wrapped by the header recorder."""
    app = build_server(scenario, delay_s=delay_s).streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host="127.0.0.1"
    )
    return _Recorder(app, seen if seen is not None else [], required_headers or {})


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
    delay_s: float = 0.0,
    required_headers: dict[str, str] | None = None,
) -> Iterator[ScenarioServer]:
    """Serve a scenario (a loaded dict) on 127.0.0.1 until the block ends."""
    seen: list[dict[str, str]] = []
    app = build_app(served_scenario(scenario, toolset), delay_s=delay_s, required_headers=required_headers, seen=seen)
    with serve_app(app, port) as bound:
        yield ScenarioServer(url=f"http://127.0.0.1:{bound}/mcp", port=bound, requests=seen)


def main(argv: list[str] | None = None) -> int:
    """Serve one scenario file (and its runbook) until interrupted; prints both URLs as one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.scenario_mcp_server", description=__doc__)
    parser.add_argument("file", type=Path, help="a scenario file (NN_slug.json)")
    parser.add_argument("--port", type=int, default=0, help="MCP port (0: a free one)")
    parser.add_argument("--runbook-port", type=int, default=0, help="runbook server port (0: a free one)")
    parser.add_argument("--toolset", choices=["kubernetes", "extras"], default="kubernetes")
    args = parser.parse_args(argv)
    scenario = scenarios.load(args.file)
    with (
        serve_scenario(scenario, port=args.port, toolset=args.toolset) as mcp,
        serve_runbook(scenario, port=args.runbook_port) as runbook,
    ):
        print(json.dumps({"mcp_url": mcp.url, "runbook_url": runbook.runbook_url}), flush=True)
        with suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
