"""A real Streamable HTTP MCP server on 127.0.0.1 that serves one scenario file as its fixtures' README says.

The server lives in devhost/scenario_servers.py (the scenario command uses it; devhost never imports
tests); this module re-exports it and keeps the shell entry point. Built with the mcp SDK's low-level server,
stateless, JSON responses: `tools/list` is `scenarios.tools_for` with the real servers' annotations
(`annotations_for`: readOnlyHint true and the rest, as kubernetes-mcp-server declares them),
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
import json
import sys
import threading
from contextlib import suppress
from pathlib import Path

from devhost.scenario_servers import (
    EXTRA_PREFIXES,
    ScenarioServer,
    Toolset,
    build_app,
    build_server,
    extra_tool_names,
    serve_app,
    serve_scenario,
    served_scenario,
)
from tests.support import scenarios
from tests.support.runbook_server import serve_runbook

__all__ = [
    "EXTRA_PREFIXES",
    "ScenarioServer",
    "Toolset",
    "build_app",
    "build_server",
    "extra_tool_names",
    "main",
    "serve_app",
    "serve_scenario",
    "served_scenario",
]


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
