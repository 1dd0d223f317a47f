"""A Cosmos outage answers every route and tool with a retryable 503 in the envelope, never a 500, and writes nothing.

The host talks to a real Cosmos-API server of its own through a TCP switch (tests/support/cosmos_outage.py):
`down()` is a stopped server (connections refused, open ones reset), `stall()` a hung one (accepted, never
answered). After the outage the switch forwards again and the test reads back what the outage left.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from devhost.stack import Stack
from tests.support.cosmos_outage import cosmos_behind_switch
from tests.support.mcp_http import rpc_reply
from tests.support.tcp_switch import TcpSwitch

# A hang guard only (no timing claim): an outage answer must come long before this.
TIMEOUT = httpx.Timeout(120.0)
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
# Well-formed but unknown: verifying it needs a Cosmos read.
UNKNOWN_API_KEY = "fbk_0123456789abcdef_" + "A" * 43


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TcpSwitch]:
    with cosmos_behind_switch(tmp_path_factory.mktemp("cosmos") / "cosmos.log") as s:
        yield s


@pytest.fixture(scope="module")
def outage_host(start_host: Callable[..., HostProcess], switch: TcpSwitch) -> HostProcess:
    # A short store timeout keeps the hung-store case quick; the default's bound is measured, not asserted.
    return start_host({"COSMOS_ENDPOINT": f"https://127.0.0.1:{switch.port}", "FIREBREAK_STORE_TIMEOUT_S": "2"})


def who(workspace: str) -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": "alice"}


def call(host: HostProcess, method: str, path: str, headers: dict[str, str], body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=TIMEOUT)


def mcp_call(host: HostProcess, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    return httpx.post(
        f"{host.base_url}/api/mcp",
        content=json.dumps(message),
        headers={**ACCEPT, **headers, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )


def assert_unavailable(r: httpx.Response, what: str) -> None:
    assert r.status_code == 503, (what, r.status_code, r.text[:500])
    retry_after = r.headers.get("retry-after", "")
    assert retry_after.isdigit(), (what, r.headers)
    assert int(retry_after) > 0, (what, r.headers)
    error = r.json()["error"]
    assert error["code"] == "SERVICE_UNAVAILABLE", (what, error)
    assert error["details"]["retryable"] is True, (what, error)
    assert error["correlation_id"], what
    assert error["recovery_suggestions"], what


def _state(host: HostProcess, me: dict[str, str]) -> dict[str, Any]:
    tasks = call(host, "GET", "/api/tasks", me)
    sessions = call(host, "GET", "/api/chat/sessions", me)
    investigations = call(host, "GET", "/api/investigations?limit=100", me)
    for r in (tasks, sessions, investigations):
        assert r.status_code == 200, r.text[:500]
    return {
        "tasks": sorted(t["id"] for t in tasks.json()["tasks"]),
        "sessions": sorted((s["chat_id"], s.get("message_count")) for s in sessions.json()["sessions"]),
        "investigations": sorted(i["id"] for i in investigations.json()["investigations"]),
    }


def _outage_requests(host: HostProcess, me: dict[str, str], task_id: str, chat_id: str) -> None:
    """Every kind of caller during the outage: REST routes, a tool over HTTP, a tool over MCP, an API key."""
    for method, path, body in (
        ("GET", "/api/tasks", None),
        ("POST", "/api/tasks", {"title": "written during the outage"}),
        ("GET", f"/api/tasks/{task_id}", None),
        ("POST", "/api/chat/message", {"message": "add a task: written during the outage"}),
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": "add a task: also during the outage"}),
        ("GET", "/api/chat/sessions", None),
        ("GET", f"/api/chat/{chat_id}/history", None),
        ("GET", "/api/investigations", None),
        ("POST", "/api/investigations", {"title": "DiskFull", "description": "during the outage"}),
        ("POST", "/api/tools/get_all_tasks", {}),
        ("POST", "/api/tools/create_task", {"title": "written during the outage"}),
    ):
        assert_unavailable(call(host, method, path, me, body), f"{method} {path}")
    assert_unavailable(
        call(host, "GET", "/api/tasks", {"authorization": f"Bearer {UNKNOWN_API_KEY}"}), "an API key to verify"
    )
    r = mcp_call(host, me, "create_task", {"title": "written during the outage"})
    assert r.status_code == 200, r.text[:500]
    result = rpc_reply(r)["result"]
    assert result["isError"] is True, result
    error = result["structuredContent"]["error"]
    assert error["code"] == "SERVICE_UNAVAILABLE", error
    assert error["details"]["retryable"] is True
    assert error["details"]["retry_after_seconds"] > 0
    assert "retry" in result["content"][0]["text"].lower(), result


@pytest.mark.parametrize("kind", ["down", "stall"])
def test_a_store_outage_is_a_retryable_503_everywhere_and_writes_nothing(
    outage_host: HostProcess, switch: TcpSwitch, kind: str
) -> None:
    me = who(f"ws-outage-{kind}-{uuid.uuid4().hex[:8]}")
    task = call(outage_host, "POST", "/api/tasks", me, {"title": "before the outage"})
    assert task.status_code == 201, task.text
    chat = call(outage_host, "POST", "/api/chat/message", me, {"message": "show my tasks"})
    assert chat.status_code == 200, chat.text
    before = _state(outage_host, me)
    getattr(switch, kind)()
    try:
        _outage_requests(outage_host, me, task.json()["task"]["id"], chat.json()["chat_id"])
    finally:
        switch.up()
    assert _state(outage_host, me) == before
    # And the host serves again once the store is back.
    assert call(outage_host, "POST", "/api/tools/get_all_tasks", me, {}).status_code == 200


# ---- Blob storage (Azurite behind a switch; Durable and Cosmos keep using the session's stack) ---------------

SLOW_LOG = (
    b"# Time: 2026-01-01T00:00:00.000000Z\n"
    b"# Query_time: 1.5  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 10\nSELECT 1;\n"
)


@pytest.fixture(scope="module")
def blob_switch(stack: Stack) -> Iterator[TcpSwitch]:
    s = TcpSwitch(stack.blob_port)
    yield s
    s.close()


@pytest.fixture(scope="module")
def blob_outage_host(start_host: Callable[..., HostProcess], stack: Stack, blob_switch: TcpSwitch) -> HostProcess:
    storage = stack.blob_connection_string().replace(f":{stack.blob_port}/", f":{blob_switch.port}/")
    return start_host({"AzureWebJobsStorage": storage, "FIREBREAK_STORE_TIMEOUT_S": "2"})


def upload(host: HostProcess, me: dict[str, str], name: str) -> httpx.Response:
    return httpx.post(
        f"{host.base_url}/api/artifacts",
        params={"name": name},
        content=SLOW_LOG,
        headers={**me, "content-type": "application/octet-stream"},
        timeout=TIMEOUT,
    )


@pytest.mark.parametrize("kind", ["down", "stall"])
def test_a_blob_outage_is_a_retryable_503_and_writes_nothing(
    blob_outage_host: HostProcess, blob_switch: TcpSwitch, kind: str
) -> None:
    me = who(f"ws-blob-outage-{kind}-{uuid.uuid4().hex[:8]}")
    assert upload(blob_outage_host, me, "before.log").status_code == 201
    getattr(blob_switch, kind)()
    try:
        r = upload(blob_outage_host, me, "during.log")
        assert_unavailable(r, "POST /api/artifacts")
        assert r.json()["error"]["details"]["store"] == "Blob storage"
        assert_unavailable(
            call(
                blob_outage_host, "POST", "/api/tools/artifacts.validate", me, {"artifacts": [{"blob": "before.log"}]}
            ),
            "a tool",
        )
        result = rpc_reply(
            mcp_call(blob_outage_host, me, "artifacts.validate", {"artifacts": [{"blob": "before.log"}]})
        )["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["error"]["code"] == "SERVICE_UNAVAILABLE"
    finally:
        blob_switch.up()

    def validated(name: str) -> dict[str, Any]:
        r = call(blob_outage_host, "POST", "/api/tools/artifacts.validate", me, {"artifacts": [{"blob": name}]})
        assert r.status_code == 200, r.text
        [result] = r.json()["results"]
        return dict(result)

    assert validated("before.log")["ok"] is True
    assert "not found" in validated("during.log")["errors"][0]
