"""Reviewer: tasks and chat REST on a host configured like Azure (dev mode off, function keys on, API keys)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from shared.tools.deps import Deps

FUNCTION_KEY = "fk-review-i14-keyed"


@pytest.fixture(scope="module")
def keyed_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({"FIREBREAK_DEV_MODE": "false", "DEVHOST_FUNCTION_KEY": FUNCTION_KEY})


def call(host: HostProcess, method: str, path: str, headers: dict[str, str], body: object = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=60)


async def test_tasks_and_chat_need_key_and_credentials_and_stay_with_the_workspace(
    keyed_host: HostProcess, deps: Deps
) -> None:
    key_a = (await deps.api_keys.mint("ws-review-keyed-a", "alice", "a")).key
    key_b = (await deps.api_keys.mint("ws-review-keyed-b", "alice", "b")).key
    as_a = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {key_a}"}
    as_b = {"x-functions-key": FUNCTION_KEY, "authorization": f"Bearer {key_b}"}
    dev_only = {"x-functions-key": FUNCTION_KEY, "x-dev-workspace": "ws-review-keyed-a", "x-dev-user": "alice"}
    # App routes are anonymous at the host: the API key alone answers, the public docs need nothing at all.
    for path in ("/api/tasks", "/api/chat/sessions"):
        assert call(keyed_host, "GET", path, {"authorization": f"Bearer {key_a}"}).status_code == 200, path
        assert call(keyed_host, "GET", path, {}).status_code == 401, path
    for path in ("/api/docs", "/api/openapi.json"):
        assert call(keyed_host, "GET", path, {}).status_code == 200, path
    for path in ("/api/tasks", "/api/chat/sessions"):
        r = call(keyed_host, "GET", path, dev_only)
        assert r.status_code == 401, (path, r.text)
    made = call(keyed_host, "POST", "/api/tasks", as_a, {"title": "secret plan"})
    assert made.status_code == 201, made.text
    task_id = made.json()["task"]["id"] if "task" in made.json() else made.json()["id"]
    sent = call(keyed_host, "POST", "/api/chat/message", as_a, {"message": "list my tasks"})
    assert sent.status_code == 200, sent.text
    chat_id = sent.json()["chat_id"]
    for method, path in (
        ("GET", f"/api/tasks/{task_id}"),
        ("DELETE", f"/api/tasks/{task_id}"),
        ("GET", f"/api/chat/{chat_id}/history"),
    ):
        r = call(keyed_host, method, path, as_b)
        assert r.status_code == 404, (path, r.text)
    r = call(keyed_host, "POST", "/api/chat/message", as_b, {"chat_id": chat_id, "message": "list my tasks"})
    assert r.status_code == 404, r.text
    assert "secret plan" not in call(keyed_host, "GET", "/api/tasks", as_b).text
    assert call(keyed_host, "GET", f"/api/tasks/{task_id}", as_a).status_code == 200
    # The key of a workspace never appears in any response.
    assert key_a not in sent.text
    assert key_a not in made.text
