"""Tasks and chat on a host configured like Azure: dev mode off, a function key configured (it guards only the
host's own endpoints: app routes are anonymous at the host), users known only
from their API keys. The dev headers mean nothing there; each user reaches only their own tasks and chats,
over REST, per-tool HTTP and MCP, and the assistant acts only for the key's user."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from shared.tools.deps import Deps
from tests.support.mcp_http import mcp_client

FUNCTION_KEY = "fk-chat-keyed-6d1a"


@pytest.fixture(scope="module")
def keyed_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({"FIREBREAK_DEV_MODE": "false", "DEVHOST_FUNCTION_KEY": FUNCTION_KEY})


def req(host: HostProcess, method: str, path: str, headers: dict[str, str], body: object = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=60)


async def test_keys_decide_whose_tasks_and_chats(keyed_host: HostProcess, deps: Deps) -> None:
    ann = await deps.api_keys.mint("ws-keyed-chat", "ann", "ann")
    ben = await deps.api_keys.mint("ws-keyed-chat", "ben", "ben")
    as_ann = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {ann.key}"}
    as_ben = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {ben.key}"}

    # No function key: the app route answers (anonymous at the host; the API key is what counts). The
    # function key alone, or with dev headers naming ann: 401 from the app.
    assert req(keyed_host, "GET", "/api/tasks", {"authorization": f"Bearer {ann.key}"}).status_code == 200
    for headers in (
        {"x-functions-key": FUNCTION_KEY},
        {"x-functions-key": FUNCTION_KEY, "x-dev-workspace": "ws-keyed-chat", "x-dev-user": "ann"},
    ):
        r = req(keyed_host, "GET", "/api/tasks", headers)
        assert r.status_code == 401, r.text
        assert r.json()["error"]["code"] == "UNAUTHORIZED"
    # The docs are public (they hold no data): no function key, no credentials.
    assert req(keyed_host, "GET", "/api/openapi.json", {}).status_code == 200

    task = req(keyed_host, "POST", "/api/tasks", as_ann, {"title": "Ann's dentist"}).json()["task"]
    sent = req(keyed_host, "POST", "/api/chat/message", as_ann, {"message": "show my pending tasks"})
    assert sent.status_code == 200, sent.text
    chat_id = sent.json()["chat_id"]
    assert "Ann's dentist" in sent.json()["response"]

    # Ben, same workspace, with dev headers claiming to be ann: nothing of ann's.
    spoof = {**as_ben, "x-dev-user": "ann", "x-dev-workspace": "ws-keyed-chat"}
    for method, path, body in (
        ("GET", f"/api/tasks/{task['id']}", None),
        ("PATCH", f"/api/tasks/{task['id']}", {"title": "mine"}),
        ("DELETE", f"/api/tasks/{task['id']}", None),
        ("GET", f"/api/chat/{chat_id}/history", None),
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": "delete all my tasks"}),
    ):
        r = req(keyed_host, method, path, spoof, body)
        assert r.status_code == 404, (path, r.text)
    assert req(keyed_host, "GET", "/api/tasks", spoof).json()["tasks"] == []
    assert req(keyed_host, "GET", "/api/chat/sessions", spoof).json()["sessions"] == []
    mine = req(keyed_host, "POST", "/api/chat/message", as_ben, {"message": "show my tasks"}).json()
    assert "Ann" not in mine["response"]
    r = req(keyed_host, "POST", "/api/tools/get_task", as_ben, {"task_id": task["id"]})
    assert r.status_code == 404
    async with mcp_client(keyed_host, as_ben) as client:
        result = await client.call_tool("get_chat_history", {"chat_id": chat_id})
    assert result.is_error
    assert (result.structured_content or {})["error"]["code"] == "NOT_FOUND"

    # Ann's things are untouched, and no answer carried a key.
    assert req(keyed_host, "GET", f"/api/tasks/{task['id']}", as_ann).json()["task"]["title"] == "Ann's dentist"
    assert req(keyed_host, "GET", f"/api/chat/{chat_id}/history", as_ann).json()["message_count"] == 2
    for r in (sent,):
        assert ann.key not in r.text
        assert FUNCTION_KEY not in r.text
