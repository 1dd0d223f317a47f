"""The MCP endpoint with the real mcp v2 client over real HTTP, for both protocol generations."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from devhost.processes import HostProcess
from shared.app.capabilities import catalogue

MODES = ["legacy", "2026-07-28"]


@pytest.mark.parametrize("mode", MODES)
async def test_list_tools_matches_the_registry(host: HostProcess, mode: str) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode=mode) as client:
        listed = (await client.list_tools()).tools
    registry = {t.name: t for t in catalogue().registry}
    assert [t.name for t in listed] == list(registry)
    health = next(t for t in listed if t.name == "health.check")
    assert health.input_schema == registry["health.check"].input_schema
    assert health.output_schema == registry["health.check"].output_schema
    assert health.annotations is not None
    assert health.annotations.read_only_hint is True
    assert health.description is not None
    assert health.description.startswith("Check that Firebreak")


@pytest.mark.parametrize("mode", MODES)
async def test_call_health_check(host: HostProcess, mode: str) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode=mode) as client:
        result = await client.call_tool("health.check", {"include_versions": False})
    assert result.is_error is False
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["versions"] == {}
    text = result.content[0]
    assert isinstance(text, TextContent)
    assert "cosmos ok" in text.text


@pytest.mark.parametrize("mode", MODES)
async def test_failing_call_is_an_error_result_with_the_envelope(host: HostProcess, mode: str) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode=mode) as client:
        result = await client.call_tool("health.check", {"include_versions": "sometimes"})
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["correlation_id"]
    assert error["details"]["errors"][0]["field"] == "include_versions"
    assert set(error) == {"code", "message", "details", "recovery_suggestions", "correlation_id"}


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_is_a_jsonrpc_error(host: HostProcess, mode: str) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode=mode) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("no.such.tool", {})
    assert info.value.code == -32602
    assert "no.such.tool" in info.value.message


def test_handshake_declares_tools_and_logging_and_no_session(host: HostProcess) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        headers={"accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    result = r.json()["result"]
    assert result["protocolVersion"] == "2025-03-26"
    assert result["serverInfo"]["name"] == "firebreak"
    assert "tools" in result["capabilities"]
    assert "logging" in result["capabilities"]
    assert "mcp-session-id" not in {k.lower() for k in r.headers}  # stateless: no sessions
    set_level = httpx.post(
        f"{host.base_url}/api/mcp",
        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26"},
        json={"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}},
    )
    assert set_level.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_allow_post(host: HostProcess, method: str) -> None:
    r = httpx.request(method, f"{host.base_url}/api/mcp", headers={"accept": "text/event-stream"})
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"


@pytest.mark.parametrize("bad_host", ["evil.example", "attacker.example:7071"])
def test_dns_rebinding_guard_rejects_foreign_hosts(host: HostProcess, bad_host: str) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        headers={"host": bad_host, "accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    )
    assert r.status_code == 421


def test_foreign_origin_is_rejected(host: HostProcess) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        headers={
            "origin": "https://evil.example",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    )
    assert r.status_code == 403
