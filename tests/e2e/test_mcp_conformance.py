"""The official MCP conformance suite (npm @modelcontextprotocol/conformance on Node 22) against our endpoint."""

from __future__ import annotations

import re
import subprocess

import pytest

from devhost.processes import HostProcess
from devhost.stack import ROOT

NODE22 = ROOT / "node_modules" / ".bin" / "node"  # npm's node@22 package; the machine's Node 20 is too old
CONFORMANCE = ROOT / "node_modules" / ".bin" / "conformance"
# The scenarios that apply to a server without test fixtures (the others need the suite's own demo tools).
SCENARIOS = ["server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection"]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(host: HostProcess, scenario: str) -> None:
    done = subprocess.run(
        [str(NODE22), str(CONFORMANCE), "server", "--url", f"{host.base_url}/api/mcp", "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    output = _ANSI.sub("", done.stdout + done.stderr)
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert summary, output
    passed, total, failed = map(int, summary.groups())
    assert done.returncode == 0, output
    assert failed == 0, output
    assert passed == total > 0, output
