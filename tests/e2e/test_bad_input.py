"""No input crashes a handler: every malformed request gets a clear 4xx or JSON-RPC error, never a 500 or a hang."""

from __future__ import annotations

import json

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support.mcp_http import rpc_reply

TIMEOUT = httpx.Timeout(20.0)
OVERSIZED = b'{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}'
DEEP = b"[" * 100_000 + b"]" * 100_000
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b'{"include_versions": ', 400, "INVALID_REQUEST"),
        (b"[1, 2]", 400, "INVALID_REQUEST"),
        (b"null", 400, "INVALID_REQUEST"),
        (b'"a string"', 400, "INVALID_REQUEST"),
        (b'{"include_versions": "yes please"}', 400, "VALIDATION_ERROR"),
        (b'{"include_versions": true, "unexpected": 1}', 400, "VALIDATION_ERROR"),
        (b"\xff\xfe\x00garbage", 400, "INVALID_REQUEST"),
        (b'{"a": "\xc3\x28"}', 400, "INVALID_REQUEST"),
        (b"1" * 5000, 400, "INVALID_REQUEST"),
        (DEEP, 400, "INVALID_REQUEST"),
        (OVERSIZED, 413, "INVALID_REQUEST"),
    ],
    ids=[
        "truncated",
        "array",
        "null",
        "string",
        "wrong-type",
        "extra-field",
        "binary",
        "bad-utf8",
        "huge-int",
        "deep-nesting",
        "oversized",
    ],
)
def test_tool_http_bad_bodies(host: HostProcess, body: bytes, status: int, code: str) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        content=body,
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == status, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert error["correlation_id"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/tools/health.check", 405),
        ("POST", "/api/tools/no.such.tool", 404),
        ("GET", "/api/nowhere", 404),
        ("PUT", "/api/health", 405),
        ("GET", "/", 404),
    ],
)
def test_unknown_routes_and_methods(host: HostProcess, method: str, path: str, status: int) -> None:
    r = httpx.request(method, f"{host.base_url}{path}", timeout=TIMEOUT)
    assert r.status_code == status
    assert r.json()["error"]["code"] in ("NOT_FOUND", "INVALID_REQUEST", "METHOD_NOT_FOUND")


def test_unknown_tool_over_http_is_method_not_found(host: HostProcess) -> None:
    """The perf spec's code for an unregistered tool, in the common envelope."""
    r = httpx.post(f"{host.base_url}/api/tools/runs.delete", json={"correlation_id": "c-1"}, timeout=TIMEOUT)
    error = r.json()["error"]
    assert r.status_code == 404
    assert error["code"] == "METHOD_NOT_FOUND"
    assert "analysis.run" in error["details"]["available"]
    # Literal routes still win over the catch-all.
    assert httpx.post(f"{host.base_url}/api/tools/health.check", json={}, timeout=TIMEOUT).status_code == 200


JSONRPC_CASES = [
    (b'{"jsonrpc":"2.0","id":1,', -32700),
    (b"\xff\xfe not json", -32700),
    (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600),
    (b'"just a string"', -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{}}', -32600),
    (b'{"jsonrpc":"2.0","id":[1],"method":"tools/list","params":{}}', -32600),
]


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
@pytest.mark.parametrize(
    ("body", "code"),
    JSONRPC_CASES,
    ids=["truncated", "binary", "batch", "string", "float-id", "null-id", "bool-id", "object-id", "array-id"],
)
def test_mcp_malformed_messages_get_jsonrpc_errors(host: HostProcess, body: bytes, code: int, version: str) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp", content=body, headers={**ACCEPT, "mcp-protocol-version": version}, timeout=TIMEOUT
    )
    assert r.status_code == 400
    reply = r.json()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] is None
    assert reply["error"]["code"] == code


@pytest.mark.parametrize(
    "request_id", ["abc", 0, -7, 2**53, ""], ids=["string", "zero", "negative", "big", "empty-string"]
)
def test_mcp_valid_ids_of_every_legal_type_are_echoed(host: HostProcess, request_id) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        content=json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}}),
        headers={**ACCEPT, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200
    assert r.json()["id"] == request_id
    assert r.json()["result"]["tools"]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}, -32601),
        ({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}}, -32602),
        (
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "health.check", "arguments": [1]}},
            -32602,
        ),
        (
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no.such.tool", "arguments": {}}},
            -32602,
        ),
    ],
)
def test_mcp_bad_requests_in_a_valid_envelope(host: HostProcess, message: dict, code: int) -> None:
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        json=message,
        headers={**ACCEPT, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )
    assert r.status_code < 500
    reply = rpc_reply(r)  # a tools/call may come back as an SSE stream (this client accepts one)
    assert reply["error"]["code"] == code
    assert reply["id"] == message["id"]


def test_mcp_tool_call_with_bad_arguments_is_an_error_result(host: HostProcess) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "health.check", "arguments": {"include_versions": []}},
    }
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        json=message,
        headers={**ACCEPT, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )
    result = rpc_reply(r)["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"content-type": "text/plain", "accept": "application/json, text/event-stream"}, 400),
        ({"content-type": "application/json", "accept": "text/html"}, 406),
    ],
    ids=["wrong-content-type", "unacceptable-accept"],
)
def test_mcp_transport_header_errors(host: HostProcess, headers: dict, status: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        content=body,
        headers={**headers, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )
    assert r.status_code == status


def test_mcp_oversized_body_is_413(host: HostProcess) -> None:
    r = httpx.post(f"{host.base_url}/api/mcp", content=OVERSIZED, headers=ACCEPT, timeout=TIMEOUT)
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "INVALID_REQUEST"


def test_host_survives_the_barrage(host: HostProcess) -> None:
    assert httpx.post(f"{host.base_url}/api/tools/health.check", json={}, timeout=TIMEOUT).status_code == 200
    assert '"level": "ERROR"' not in host.log()


SID = "e" * 64


@pytest.mark.parametrize(
    ("tool", "body"),
    [
        ("analysis.run", {"normalized_snapshot_id": "not-a-sha"}),
        ("analysis.run", {"normalized_snapshot_id": SID, "snapshot_id": "f" * 64}),
        ("analysis.run", {"normalized_snapshot_id": SID, "top_n": "five"}),
        ("report.export", {}),
        ("artifacts.ingest", {"artifacts": []}),
        ("artifacts.ingest", {"artifacts": [{"blob": "a.log", "path": "/b.log"}]}),
        ("artifacts.ingest", {"artifacts": [{}]}),
        ("artifacts.ingest", {"artifacts": [{"blob": "a.log"}], "environment_hints": {"x": "y" * 5000}}),
        ("artifacts.validate", {"artifacts": "slow.log"}),
        ("create_upload_url", {"name": "../../etc/passwd"}),
        ("runs.list", {"limit": 0}),
        ("runs.get", {}),
        ("collect.run", {"base_url": 5, "url_paths": ["/"]}),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_perf_tools_bad_arguments(host: HostProcess, tool: str, body: dict) -> None:
    r = httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, timeout=TIMEOUT)
    assert r.status_code == 400, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]
    assert error["correlation_id"]
