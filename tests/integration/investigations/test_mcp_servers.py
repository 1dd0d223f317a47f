"""The MCP client of investigations against real servers: the scenario server (ours, Streamable HTTP on 127.0.0.1)
and @modelcontextprotocol/server-everything (not ours) over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devhost.stack import ROOT
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.investigations.mcp_servers import (
    CatalogueTool,
    McpServerConfig,
    ServerStatus,
    ToolCatalogue,
    call_tool,
    list_tools,
    parse_servers,
)
from shared.investigations.tool_policy import ToolPolicy, offer
from tests.support import scenarios
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import extra_tool_names, serve_app, serve_scenario
from tests.support.target_site import self_signed

FILES = scenarios.scenario_files()
NODE22 = ROOT / "node_modules" / ".bin" / "node"  # npm's node@22 package; the machine's Node 20 is too old
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


@pytest.fixture(scope="module")
def guard() -> OutboundGuard:
    """The guard as a local deployment configures it: plain http and 127.0.0.1 allowed."""
    return OutboundGuard(Settings.from_env(LOCAL))


def http(name: str, url: str, **headers: str) -> McpServerConfig:
    return McpServerConfig.model_validate({"name": name, "url": url, "headers": headers})


def by_id(scenario_id: str) -> dict[str, Any]:
    return scenarios.load(next(f for f in FILES if f.stem == scenario_id))


# --- the scenario server ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_each_scenario_lists_its_tools_over_the_wire(path: Path, guard: OutboundGuard) -> None:
    scenario = scenarios.load(path)
    with serve_scenario(scenario) as server:
        catalogue = await list_tools([http("k8s", server.url)], guard=guard)
    expected = scenarios.tools_for(scenario)
    assert catalogue.servers == [
        ServerStatus(
            name="k8s",
            transport="http",
            ok=True,
            tool_count=len(expected),
            duration_ms=catalogue.servers[0].duration_ms,
        )
    ]
    assert [t.name for t in catalogue.tools] == [t["name"] for t in expected]
    assert [t.input_schema for t in catalogue.tools] == [t["inputSchema"] for t in expected]
    assert all(t.server == "k8s" and t.remote_name == t.name for t in catalogue.tools)
    # Annotated as the real kubernetes-mcp-server annotates them, so an investigation is offered every one.
    assert all((t.read_only, t.destructive) == (True, False) for t in catalogue.tools)
    assert all(t.title for t in catalogue.tools)
    assert offer(catalogue, ToolPolicy()).catalogue == catalogue


async def test_the_extras_server_lists_its_tools_annotated_read_only(guard: OutboundGuard) -> None:
    scenario = by_id("14_tempo")
    with serve_scenario(scenario, toolset="extras") as server:
        catalogue = await list_tools([http("extras", server.url)], guard=guard)
    assert [t.name for t in catalogue.tools] == extra_tool_names(scenario)
    assert any(t.name.startswith("tempo_") for t in catalogue.tools)
    assert all((t.read_only, t.destructive) == (True, False) for t in catalogue.tools)
    assert offer(catalogue, ToolPolicy()).withheld == {}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_each_scenario_answers_every_entry_over_the_wire(path: Path, guard: OutboundGuard) -> None:
    scenario = scenarios.load(path)
    listed = {t["name"] for t in scenarios.tools_for(scenario)}
    calls = [(e["tool"], e["match"]) for e in scenario["tool_responses"] if e["tool"] in listed]
    with serve_scenario(scenario) as server:
        servers = [http("k8s", server.url)]
        catalogue = await list_tools(servers, guard=guard)
        results = await asyncio.gather(*(call_tool(servers, catalogue, t, dict(a), guard=guard) for t, a in calls))
    for (tool, args), result in zip(calls, results, strict=True):
        expected = scenarios.answer(scenario, tool, args)  # the README's rules: the first matching entry
        assert (result.text, result.is_error) == (expected.text, expected.is_error), (tool, args)
        assert result.error_kind == ("tool" if expected.is_error else None)
        assert not result.truncated or result.output_bytes > 32 * 1024


def _first_match_pairs() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(scenario id, earlier entry, later entry) where the later entry's match is a strict subset of the earlier's."""
    pairs = []
    for path in FILES:
        entries = scenarios.load(path)["tool_responses"]
        for i, first in enumerate(entries):
            for later in entries[i + 1 :]:
                narrower = later["match"].items() < first["match"].items()
                if first["tool"] == later["tool"] and narrower and first["output"] != later["output"]:
                    pairs.append((path.stem, first, later))
    return pairs


async def test_the_first_matching_entry_wins_over_the_wire(guard: OutboundGuard) -> None:
    pairs = _first_match_pairs()
    assert {p[0] for p in pairs} >= {"02_crashloop_backoff", "06_job_failure"}
    for scenario_id in sorted({p[0] for p in pairs}):
        # (arguments, the output that must answer them): the specific entry for its own match; the general one for
        # its match and for its match plus a key no entry names (keys not in `match` are ignored).
        cases = []
        for sid, specific, general in pairs:
            if sid == scenario_id:
                cases.append((specific["tool"], dict(specific["match"]), specific["output"]))
                cases.append((general["tool"], dict(general["match"]), general["output"]))
                cases.append((general["tool"], {**general["match"], "tail": 50}, general["output"]))
        with serve_scenario(by_id(scenario_id)) as server:
            servers = [http("k8s", server.url)]
            catalogue = await list_tools(servers, guard=guard)
            results = await asyncio.gather(*(call_tool(servers, catalogue, t, a, guard=guard) for t, a, _ in cases))
        for (tool, args, output), result in zip(cases, results, strict=True):
            assert result.text == output, (scenario_id, tool, args)


async def test_unmatched_calls_get_the_real_servers_wording(guard: OutboundGuard) -> None:
    with serve_scenario(by_id("01_oom_kill")) as server:
        servers = [http("k8s", server.url)]
        catalogue = await list_tools(servers, guard=guard)
        pod = await call_tool(servers, catalogue, "pods_get", {"name": "ghost", "namespace": "prod"}, guard=guard)
        events = await call_tool(servers, catalogue, "events_list", {"namespace": "nowhere"}, guard=guard)
    assert (pod.is_error, pod.error_kind) == (True, "tool")
    assert pod.text == 'failed to get pod ghost in namespace prod: pods "ghost" not found'
    assert (events.is_error, events.text) == (False, "# No events found")


async def test_an_empty_available_tools_list_is_a_server_with_no_tools(guard: OutboundGuard) -> None:
    scenario = by_id("16_dns_resolution_no_tool")
    assert scenario["available_tools"] == []
    with serve_scenario(scenario) as server:
        servers = [http("k8s", server.url)]
        catalogue = await list_tools(servers, guard=guard)
        assert catalogue.tools == []
        assert (catalogue.servers[0].ok, catalogue.servers[0].tool_count) == (True, 0)
        planned = await call_tool(servers, catalogue, "pods_get", {"name": "x", "namespace": "y"}, guard=guard)
        # A catalogue that names a tool the server does not list: the server's unknown-tool protocol error.
        stale = ToolCatalogue(tools=[CatalogueTool(name="pods_get", server="k8s", remote_name="pods_get")])
        unknown = await call_tool(servers, stale, "pods_get", {"name": "x", "namespace": "y"}, guard=guard)
    assert (planned.is_error, planned.error_kind, planned.server) == (True, "unknown_tool", None)
    assert (unknown.is_error, unknown.error_kind) == (True, "tool")
    assert "Unknown tool: pods_get" in unknown.text


async def test_the_extra_tools_are_a_second_server(guard: OutboundGuard) -> None:
    scenario = by_id("14_tempo")
    extras = extra_tool_names(scenario)
    assert extras
    assert all(n.startswith(("prometheus_", "tempo_")) for n in extras)
    with serve_scenario(scenario) as k8s, serve_scenario(scenario, toolset="extras") as traces:
        servers = [http("k8s", k8s.url), http("traces", traces.url)]
        catalogue = await list_tools(servers, guard=guard)
        entry = next(e for e in scenario["tool_responses"] if e["tool"] in extras)
        result = await call_tool(servers, catalogue, entry["tool"], dict(entry["match"]), guard=guard)
    assert [t.name for t in catalogue.tools if t.server == "traces"] == extras
    assert (result.server, result.text) == ("traces", entry["output"])


async def test_clashing_tool_names_are_prefixed_and_routed_to_their_server(guard: OutboundGuard) -> None:
    oom, crash = by_id("01_oom_kill"), by_id("02_crashloop_backoff")
    with serve_scenario(oom) as a, serve_scenario(crash) as b, serve_scenario(oom, toolset="extras") as c:
        servers = [http("a", a.url), http("b", b.url), http("c", c.url)]
        catalogue = await list_tools(servers, guard=guard)
        entry = crash["tool_responses"][0]
        routed = await call_tool(servers, catalogue, f"b__{entry['tool']}", dict(entry["match"]), guard=guard)
    names = [t.name for t in catalogue.tools]
    k8s = [t["name"] for t in scenarios.all_tools()]
    assert names[: len(k8s)] == [f"a__{n}" for n in k8s]
    assert names[len(k8s) : 2 * len(k8s)] == [f"b__{n}" for n in k8s]
    assert names[2 * len(k8s) :] == extra_tool_names(oom)  # offered once: kept as they are
    assert catalogue.get(f"b__{entry['tool']}") == next(
        t for t in catalogue.tools if t.server == "b" and t.remote_name == entry["tool"]
    )
    assert (routed.server, routed.text) == ("b", scenarios.answer(crash, entry["tool"], entry["match"]).text)


# --- failures, limits, secrets, the outbound guard -------------------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) but never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


async def test_failing_servers_are_recorded_and_the_working_one_is_used(guard: OutboundGuard, silent_port: int) -> None:
    scenario = by_id("01_oom_kill")
    with serve_scenario(scenario) as good, serve_runbook(scenario) as not_mcp:
        servers = [
            http("down", f"http://localhost:{_closed_port()}/mcp"),
            http("k8s", good.url),
            http("notmcp", not_mcp.base_url + "/mcp"),
            http("private", "http://10.11.12.13/mcp"),
            http("silent", f"http://127.0.0.1:{silent_port}/mcp"),
            McpServerConfig(name="local", command="kubernetes-mcp-server"),
        ]
        catalogue = await list_tools(servers, guard=guard, timeout_s=2)
    status = {s.name: s for s in catalogue.servers}
    assert [s.name for s in catalogue.servers] == [s.name for s in servers]
    assert [s.name for s in catalogue.failed] == ["down", "notmcp", "private", "silent", "local"]
    assert {t.server for t in catalogue.tools} == {"k8s"}
    assert len(catalogue.tools) == 12
    assert "could not reach the server" in (status["down"].error or "")
    assert "127.0.0.1" not in (status["down"].error or "")  # errors name the configured host, never its address
    assert "the server answered HTTP 501" in (status["notmcp"].error or "")
    assert "non-public address" in (status["private"].error or "")
    assert status["silent"].error == "no answer within 2 s"
    assert "stdio servers are off" in (status["local"].error or "")


async def test_a_slow_tool_call_times_out(guard: OutboundGuard) -> None:
    with serve_scenario(by_id("01_oom_kill"), delay_s=30) as server:
        servers = [http("k8s", server.url)]
        catalogue = await list_tools(servers, guard=guard)
        result = await call_tool(servers, catalogue, "events_list", {"namespace": "default"}, guard=guard, timeout_s=1)
    assert (result.is_error, result.error_kind, result.retryable) == (True, "timeout", True)
    assert result.text == "no answer within 1 s"


async def test_long_output_is_cut_to_the_byte_limit(guard: OutboundGuard) -> None:
    scenario = by_id("07_job_syntax_error")
    entry = max(scenario["tool_responses"], key=lambda e: len(e["output"]))
    full = scenarios.answer(scenario, entry["tool"], entry["match"]).text
    with serve_scenario(scenario) as server:
        servers = [http("k8s", server.url)]
        catalogue = await list_tools(servers, guard=guard)
        cut = await call_tool(servers, catalogue, entry["tool"], entry["match"], guard=guard, max_output_bytes=100)
        whole = await call_tool(servers, catalogue, entry["tool"], entry["match"], guard=guard)
    assert len(full.encode()) > 100
    assert cut.truncated
    assert len(cut.text.encode()) <= 100
    assert full.startswith(cut.text)
    assert cut.output_bytes == whole.output_bytes == len(full.encode())
    assert (whole.truncated, whole.text) == (False, full)


async def test_a_response_over_the_size_cap_fails_without_being_read_whole(guard: OutboundGuard) -> None:
    scenario = by_id("07_job_syntax_error")
    with serve_scenario(scenario) as server:
        catalogue = await list_tools([http("k8s", server.url)], guard=guard, max_response_bytes=2_000)
    assert catalogue.tools == []
    assert "passed 2000 bytes" in (catalogue.servers[0].error or "")


SECRETS = {"Authorization": "Bearer s3cret-token-value-1", "X-Team-Key": "team-key-9f8e7d6c"}


async def test_headers_are_sent_and_never_appear_in_errors_logs_or_records(
    guard: OutboundGuard, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = {"Authorization": "Bearer wrong-token-value-2", "X-Team-Key": "wrong-key-1a2b3c4d"}
    with serve_scenario(by_id("01_oom_kill"), required_headers=SECRETS) as server:
        good, bad = http("k8s", server.url, **SECRETS), http("k8s_bad", server.url, **wrong)
        catalogue = await list_tools([good, bad], guard=guard)
        result = await call_tool([good, bad], catalogue, "events_list", {"namespace": "default"}, guard=guard)
        sent = list(server.requests)
    assert [s.ok for s in catalogue.servers] == [True, False]
    assert (catalogue.servers[1].error or "").startswith("the server answered HTTP 401 Unauthorized")
    assert result.text == scenarios.answer(by_id("01_oom_kill"), "events_list", {"namespace": "default"}).text
    good_requests = [r for r in sent if r.get("x-team-key") == SECRETS["X-Team-Key"]]
    assert good_requests
    assert all(r["authorization"] == SECRETS["Authorization"] for r in good_requests)
    records = [
        catalogue.model_dump_json(),
        result.model_dump_json(),
        repr(good),
        str(good.public()),
        repr(bad),
        str(bad.public()),
        caplog.text,
    ]
    for value in [*SECRETS.values(), *wrong.values()]:
        token = value.split()[-1]
        assert all(token not in text for text in records), value
    assert good.public()["header_names"] == ["Authorization", "X-Team-Key"]


async def test_the_outbound_guard_refuses_a_loopback_server_that_is_not_allow_listed() -> None:
    strict = OutboundGuard(Settings.from_env({"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true"}))
    https_only = OutboundGuard(Settings.from_env({"FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}))
    with serve_scenario(by_id("01_oom_kill")) as server:
        servers = [http("k8s", server.url)]
        refused = await list_tools(servers, guard=strict)
        plain = await list_tools(servers, guard=https_only)
        known = ToolCatalogue(tools=[CatalogueTool(name="events_list", server="k8s", remote_name="events_list")])
        call = await call_tool(servers, known, "events_list", {"namespace": "default"}, guard=strict)
        reached = list(server.requests)
    assert refused.tools == []
    assert "resolves to a non-public address" in (refused.servers[0].error or "")
    assert "plain http is not allowed" in (plain.servers[0].error or "")
    assert (call.is_error, call.error_kind, call.retryable) == (True, "refused", False)
    assert "non-public address" in call.text
    assert reached == []  # refused before any connection


async def test_https_connects_to_the_checked_address_and_verifies_the_host_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = socket.getaddrinfo("localhost", 443, type=socket.SOCK_STREAM)[0][4][0]
    if ipaddress.ip_address(first) != ipaddress.ip_address("127.0.0.1"):
        pytest.skip(f"localhost resolves to {first} first here; the server listens on 127.0.0.1")
    cert, key = self_signed(tmp_path, with_ip=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the transport's default context trusts it, as a CA bundle would
    from tests.support.scenario_mcp_server import build_app

    guard = OutboundGuard(Settings.from_env({"FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "localhost"}))
    with serve_app(build_app(by_id("01_oom_kill")), ssl_files=(cert, key)) as port:
        servers = [http("k8s", f"https://localhost:{port}/mcp")]
        catalogue = await list_tools(servers, guard=guard)
        by_address = await list_tools([http("k8s", f"https://127.0.0.1:{port}/mcp")], guard=guard)
    assert catalogue.servers[0].ok, catalogue.servers[0].error
    assert len(catalogue.tools) == 12
    # The certificate names localhost only; the TLS check uses the configured name, never the address.
    assert not by_address.servers[0].ok


# --- @modelcontextprotocol/server-everything: a server we did not write ------------------------------------------


def everything_stdio(**env: str) -> McpServerConfig:
    return parse_servers(
        [{"name": "everything", "command": str(NODE22), "args": [str(EVERYTHING), "stdio"], "env": env}],
        allow_stdio=True,
    )[0]


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """server-everything's Streamable HTTP mode (`index.js streamableHttp`, port from PORT; stateful sessions)."""
    port = _closed_port()
    process = subprocess.Popen(
        [str(NODE22), str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server-everything did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


EVERYTHING_TOOLS = {"echo", "get-sum", "get-env", "get-tiny-image", "trigger-long-running-operation"}


async def test_server_everything_over_stdio(guard: OutboundGuard) -> None:
    server = everything_stdio(FIREBREAK_PROBE="probe-value-1234")
    servers = [server]
    catalogue = await list_tools(servers, guard=guard, allow_stdio=True)
    assert catalogue.servers[0].ok, catalogue.servers[0].error
    assert {t.name for t in catalogue.tools} >= EVERYTHING_TOOLS
    echo_tool = catalogue.get("echo")
    assert echo_tool is not None
    assert echo_tool.read_only is True
    assert echo_tool.input_schema["properties"]["message"]["type"] == "string"

    echo = await call_tool(servers, catalogue, "echo", {"message": "héllo"}, guard=guard, allow_stdio=True)
    env = await call_tool(servers, catalogue, "get-env", {}, guard=guard, allow_stdio=True)
    bad = await call_tool(servers, catalogue, "get-sum", {"a": 1, "b": "two"}, guard=guard, allow_stdio=True)
    image = await call_tool(servers, catalogue, "get-tiny-image", {}, guard=guard, allow_stdio=True)
    cut = await call_tool(
        servers, catalogue, "echo", {"message": "é" * 50}, guard=guard, allow_stdio=True, max_output_bytes=15
    )
    off = await call_tool(servers, catalogue, "echo", {"message": "x"}, guard=guard)

    assert (echo.text, echo.is_error, echo.server) == ("Echo: héllo", False, "everything")
    assert '"FIREBREAK_PROBE": "probe-value-1234"' in env.text  # the configured environment reached the process
    assert "COSMOS" not in env.text  # and only the minimal inherited one besides
    assert (bad.is_error, bad.error_kind) == (True, "tool")
    assert "expected number" in bad.text
    assert "[image content, image/png, not shown]" in image.text
    assert (cut.truncated, cut.text, cut.output_bytes) == (True, "Echo: éééé", len(("Echo: " + "é" * 50).encode()))
    assert (off.is_error, off.error_kind) == (True, "refused")


async def test_a_stdio_server_that_dies_is_recorded_with_its_stderr_scrubbed(guard: OutboundGuard) -> None:
    dying = McpServerConfig.model_validate(
        {
            "name": "dying",
            "command": str(NODE22),
            "args": ["-e", "console.error('cannot start: token ' + process.env.K8S_TOKEN); process.exit(3)"],
            "env": {"K8S_TOKEN": "kube-token-5e6f7a8b"},
        }
    )
    catalogue = await list_tools([dying, everything_stdio()], guard=guard, allow_stdio=True)
    failed = catalogue.servers[0]
    assert not failed.ok
    assert "cannot start: token [REDACTED]" in (failed.error or "")
    assert "kube-token-5e6f7a8b" not in catalogue.model_dump_json()
    assert catalogue.servers[1].ok
    assert {t.server for t in catalogue.tools} == {"everything"}


async def test_server_everything_over_streamable_http(guard: OutboundGuard, everything_http: str) -> None:
    servers = [http("everything", everything_http, Authorization="Bearer not-checked-by-everything")]
    catalogue = await list_tools(servers, guard=guard)
    assert catalogue.servers[0].ok, catalogue.servers[0].error
    assert {t.name for t in catalogue.tools} >= EVERYTHING_TOOLS
    echo = await call_tool(servers, catalogue, "echo", {"message": "over http"}, guard=guard)
    total = await call_tool(servers, catalogue, "get-sum", {"a": 2, "b": 40}, guard=guard)
    slow = await call_tool(
        servers, catalogue, "trigger-long-running-operation", {"duration": 30, "steps": 3}, guard=guard, timeout_s=1
    )
    assert (echo.text, echo.is_error) == ("Echo: over http", False)
    assert "42" in total.text
    assert (slow.error_kind, slow.text) == ("timeout", "no answer within 1 s")


async def test_stdio_and_http_servers_listed_together(guard: OutboundGuard, everything_http: str) -> None:
    servers = [everything_stdio(), http("remote", everything_http)]
    catalogue = await list_tools(servers, guard=guard, allow_stdio=True)
    assert [s.ok for s in catalogue.servers] == [True, True]
    echo_names = sorted(t.name for t in catalogue.tools if t.remote_name == "echo")
    assert echo_names == ["everything__echo", "remote__echo"]
    remote = await call_tool(servers, catalogue, "remote__echo", {"message": "which"}, guard=guard, allow_stdio=True)
    assert (remote.server, remote.text) == ("remote", "Echo: which")


def test_the_scenario_server_runs_as_a_module_on_chosen_ports(guard: OutboundGuard) -> None:
    path = next(f for f in FILES if f.stem == "10_kube_deployment_replicas_mismatch")
    port, runbook_port = _closed_port(), _closed_port()
    module = ["-m", "tests.support.scenario_mcp_server", str(path)]
    command = [sys.executable, *module, "--port", str(port), "--runbook-port", str(runbook_port)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        urls = json.loads(process.stdout.readline())
        catalogue = asyncio.run(list_tools([http("k8s", urls["mcp_url"])], guard=guard))
        runbook = httpx.get(urls["runbook_url"])
        missing = httpx.get(f"http://127.0.0.1:{runbook_port}/runbooks/other")
    finally:
        process.terminate()
        process.wait(10)
    assert urls["mcp_url"] == f"http://127.0.0.1:{port}/mcp"
    assert urls["runbook_url"].startswith(f"http://127.0.0.1:{runbook_port}/runbooks/kubernetes/")
    assert len(catalogue.tools) == 12
    assert runbook.status_code == 200
    assert runbook.headers["content-type"] == "text/markdown; charset=utf-8"
    assert runbook.text == scenarios.load(path)["runbook_markdown"]
    assert missing.status_code == 404


def test_a_runbook_url_without_a_runbook_answers_404() -> None:
    scenario = {"alert": {"annotations": {"runbook_url": "https://runbooks.example/alerts/gone"}}}
    with serve_runbook(scenario) as server:
        answer = httpx.get(server.runbook_url)
    assert server.runbook_url.endswith("/alerts/gone")
    assert answer.status_code == 404
    assert server.requests == ["/alerts/gone"]


async def test_a_tool_output_schema_with_a_catastrophic_pattern_is_never_run(guard: OutboundGuard) -> None:
    """The SDK would check structured content against the server's outputSchema (jsonschema, on the event
    loop): `(a+)+$` over 40 a's and a '!' backtracks about 2^40 steps. The call reads the text and skips it."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tool = types.Tool(
        name="evil_get",
        description="answers structured content its own schema makes catastrophic to check",
        input_schema={"type": "object"},
        output_schema={"type": "object", "properties": {"v": {"type": "string", "pattern": "^(a+)+$"}}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )

    async def on_list(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def on_call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        value = "a" * 40 + "!"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=value)], structured_content={"v": value}
        )

    server = Server("evil", on_list_tools=on_list, on_call_tool=on_call)
    app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host="127.0.0.1"
    )
    with serve_app(app) as port:
        config = http("evil", f"http://127.0.0.1:{port}/mcp")
        catalogue = await list_tools([config], guard=guard)
        result = await asyncio.wait_for(call_tool([config], catalogue, "evil_get", {}, guard=guard), 60)
    assert not result.is_error, result.text
    assert result.text == "a" * 40 + "!"
