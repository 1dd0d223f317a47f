"""The chat tools end to end on the local host: over MCP (the real client) and over per-tool HTTP."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from mcp import Client

from devhost.processes import HostProcess
from tests.support.mcp_http import mcp_client


def who(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": user}


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, result.structured_content
    assert result.structured_content is not None
    return result.structured_content


def post(host: HostProcess, tool: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=30)


async def test_chat_session_over_mcp(host: HostProcess) -> None:
    workspace = f"ws-chat-{uuid.uuid4().hex[:8]}"
    async with mcp_client(host, who(workspace)) as client:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        for name in ("store_chat_message", "get_chat_history", "create_chat_session", "get_recent_chat_sessions"):
            assert name in tools
        assert tools["get_chat_history"].annotations is not None
        assert tools["get_chat_history"].annotations.read_only_hint is True

        created = await call(client, "create_chat_session", session_name="Task planning - Dec 7", user_id="alice")
        assert created["success"] is True
        chat_id = created["chat_id"]
        assert created["session"]["message_count"] == 0
        for i, role in enumerate(["user", "assistant", "user"]):
            stored = await call(
                client, "store_chat_message", chat_id=chat_id, message=f"m{i}", role=role, metadata={"task_ids": []}
            )
            assert stored == {
                "success": True,
                "message_id": stored["message_id"],
                "chat_id": chat_id,
                "timestamp": stored["timestamp"],
                "message_count": i + 1,
            }
        history = await call(client, "get_chat_history", chat_id=chat_id, limit=2)
        assert history["message_count"] == 3
        assert [(m["role"], m["message"]) for m in history["messages"]] == [("assistant", "m1"), ("user", "m2")]
        assert history["messages"][0]["metadata"] == {"task_ids": []}
        older = await call(client, "get_chat_history", chat_id=chat_id, limit=2, continuation=history["continuation"])
        assert [m["message"] for m in older["messages"]] == ["m0"]

        second = await call(client, "create_chat_session")
        sessions = await call(client, "get_recent_chat_sessions")
        # Most recently active first: the session with messages was active after the new one was created.
        assert {s["chat_id"] for s in sessions["sessions"]} == {chat_id, second["chat_id"]}
        by_id = {s["chat_id"]: s for s in sessions["sessions"]}
        assert by_id[chat_id]["message_count"] == 3
        assert by_id[chat_id]["session_name"] == "Task planning - Dec 7"

        # Another user's id is refused; a chat id that is no uuid is a validation error.
        refused = await client.call_tool("get_recent_chat_sessions", {"user_id": "bob"})
        assert refused.is_error
        assert refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "FORBIDDEN"
        bad = await client.call_tool("get_chat_history", {"chat_id": "sessions~" + "0" * 32})
        assert bad.is_error
        assert bad.structured_content is not None
        assert bad.structured_content["error"]["code"] == "VALIDATION_ERROR"

    # Another user of the workspace, and the same user name in another workspace: NOT_FOUND, as a guess.
    for other in (who(workspace, "bob"), who(f"ws-chat-{uuid.uuid4().hex[:8]}", "alice")):
        async with mcp_client(host, other) as client:
            for args in ({"chat_id": chat_id}, {"chat_id": str(uuid.uuid4())}):
                theirs = await client.call_tool("get_chat_history", args)
                assert theirs.is_error
                assert theirs.structured_content is not None
                assert theirs.structured_content["error"]["code"] == "NOT_FOUND"
            assert (await call(client, "get_recent_chat_sessions"))["sessions"] == []


def test_chat_tools_over_http(host: HostProcess) -> None:
    workspace = f"ws-chat-{uuid.uuid4().hex[:8]}"
    alice, bob = who(workspace), who(workspace, "bob")
    created = post(host, "create_chat_session", {"metadata": {"device": "mobile"}}, alice)
    assert created.status_code == 200, created.text
    chat_id = created.json()["chat_id"]
    assert created.json()["session"]["metadata"] == {"device": "mobile"}

    stored = post(host, "store_chat_message", {"chat_id": chat_id, "message": "hello", "role": "user"}, alice)
    assert stored.status_code == 200, stored.text

    # Bad input is a 400 that writes nothing.
    for body, field in [
        ({"chat_id": chat_id, "message": "x" * 4001, "role": "user"}, "message"),
        ({"chat_id": chat_id, "message": "", "role": "user"}, "message"),
        ({"chat_id": chat_id, "message": "hi", "role": "system"}, "role"),
        ({"chat_id": chat_id, "message": "hi", "role": "user", "metadata": {"x": "y" * 5000}}, "metadata"),
        ({"chat_id": "not-a-uuid", "message": "hi", "role": "user"}, "chat_id"),
    ]:
        r = post(host, "store_chat_message", body, alice)
        assert r.status_code == 400, r.text
        assert field in [e["field"] for e in r.json()["error"]["details"]["errors"]]
    r = post(host, "get_chat_history", {"chat_id": chat_id, "limit": 101}, alice)
    assert r.status_code == 400

    # Someone else: 404 for the chat (the same as for a guessed id), 403 for naming another user.
    for tool, body in [
        ("get_chat_history", {"chat_id": chat_id}),
        ("store_chat_message", {"chat_id": chat_id, "message": "let me in", "role": "user"}),
        ("store_chat_message", {"chat_id": str(uuid.uuid4()), "message": "guess", "role": "user"}),
    ]:
        r = post(host, tool, body, bob)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "NOT_FOUND"
    r = post(host, "create_chat_session", {"user_id": "alice"}, bob)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "FORBIDDEN"

    history = post(host, "get_chat_history", {"chat_id": chat_id, "include_metadata": False}, alice).json()
    assert [m["message"] for m in history["messages"]] == ["hello"]
    assert history["messages"][0]["metadata"] is None
    assert history["message_count"] == 1
