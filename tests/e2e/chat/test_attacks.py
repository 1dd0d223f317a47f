"""Reviewer attacks on issue #14 (chat + tasks REST on the local host). Failing tests here are findings."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from devhost.processes import HostProcess

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def who(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": user}


def ws(tag: str) -> str:
    return f"ws-review-{tag}-{uuid.uuid4().hex[:8]}"


def req(host: HostProcess, method: str, path: str, headers: dict[str, str], body: Any = None) -> httpx.Response:
    content = None if body is None else json.dumps(body)  # ensure_ascii: lone surrogates go as \\ud800 escapes
    hdrs = {**headers, "content-type": "application/json"}
    return httpx.request(method, f"{host.base_url}{path}", content=content, headers=hdrs, timeout=60)


def test_a_secret_in_a_task_title_is_not_stored_unredacted_in_chat_history(host: HostProcess) -> None:
    me = who(ws("secret"))
    made = req(host, "POST", "/api/tasks", me, {"title": f"rotate {SECRET}"})
    assert made.status_code == 201, made.text
    sent = req(host, "POST", "/api/chat/message", me, {"message": "list my tasks"})
    assert sent.status_code == 200, sent.text
    chat_id = sent.json()["chat_id"]
    history = req(host, "GET", f"/api/chat/{chat_id}/history?include_metadata=true", me)
    assert history.status_code == 200, history.text
    assert SECRET not in history.text


def test_twenty_concurrent_messages_in_one_chat_are_all_counted(host: HostProcess) -> None:
    me = who(ws("conc"))
    chat_id = req(host, "POST", "/api/chat/session", me, {}).json()["chat_id"]
    with ThreadPoolExecutor(20) as pool:
        codes = list(
            pool.map(
                lambda i: req(host, "POST", "/api/chat/message", me, {"chat_id": chat_id, "message": f"hello {i}"}),
                range(20),
            )
        )
    assert [r.status_code for r in codes] == [200] * 20, [r.text for r in codes if r.status_code != 200][:3]
    history = req(host, "GET", f"/api/chat/{chat_id}/history?limit=100", me).json()
    assert history["message_count"] == 40
    assert len(history["messages"]) == 40
    sessions = req(host, "GET", "/api/chat/sessions?limit=10", me).json()["sessions"]
    assert [s["message_count"] for s in sessions if s["chat_id"] == chat_id] == [40]


def test_hostile_shapes_are_4xx_not_5xx(host: HostProcess) -> None:
    me = who(ws("shape"))
    chat_id = req(host, "POST", "/api/chat/session", me, {}).json()["chat_id"]
    bodies: list[tuple[str, str, Any]] = [
        ("POST", "/api/chat/message", {"message": "x", "chat_id": "sessions~" + "0" * 32}),
        ("POST", "/api/chat/message", {"message": "x", "chat_id": chat_id, "user_id": ["alice"]}),
        ("POST", "/api/chat/message", {"message": "\u0000\ud800"}),
        ("POST", "/api/chat/message", {"message": "a" * 1_000_000}),
        ("POST", "/api/chat/session", {"metadata": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {}}}}}}}}}),
        ("POST", "/api/chat/session", {"metadata": {"k": "v" * 500_000}}),
        ("POST", "/api/tasks", {"title": "x", "due_date": "99999-01-01"}),
        ("POST", "/api/tasks", {"title": "x", "priority": 10**400}),
        ("GET", "/api/tasks?limit=99999999999999999999999", None),
        ("GET", "/api/tasks?limit=1&limit=2", None),
        ("GET", "/api/chat/sessions?limit=-1", None),
        ("GET", f"/api/chat/{chat_id}/history?limit=0", None),
        ("GET", "/api/tasks/" + "%2e%2e", None),
        ("GET", "/api/tasks/" + "a" * 5000, None),
        ("PATCH", "/api/tasks/x", [1, 2]),
        ("DELETE", "/api/tasks/%F0%9F%92%A9", None),
    ]
    bad = []
    for method, path, body in bodies:
        r = req(host, method, path, me, body)
        if r.status_code >= 500 or SECRET in r.text:
            bad.append((method, path[:60], r.status_code, r.text[:200]))
    assert bad == []


def test_two_concurrent_yes_delete_the_previewed_set_once(host: HostProcess) -> None:
    me = who(ws("yes"))
    ids = []
    for i in range(3):
        made = req(host, "POST", "/api/tasks", me, {"title": f"old chore {i}", "category": "shopping"})
        assert made.status_code == 201, made.text
        ids.append(made.json()["task"]["id"] if "task" in made.json() else made.json()["id"])
        done = req(host, "PATCH", f"/api/tasks/{ids[-1]}", me, {"status": "completed"})
        assert done.status_code == 200, done.text
    keep = req(host, "POST", "/api/tasks", me, {"title": "keep me", "category": "shopping"})
    assert keep.status_code == 201
    preview = req(host, "POST", "/api/chat/message", me, {"message": "delete all completed shopping tasks"})
    assert preview.status_code == 200, preview.text
    chat_id = preview.json()["chat_id"]
    with ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(
                lambda _: req(host, "POST", "/api/chat/message", me, {"chat_id": chat_id, "message": "yes"}), [0, 1]
            )
        )
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    texts = [a.json()["response"] for a in answers]
    assert sum("deleted 3" in t for t in texts) == 1, texts
    left = req(host, "GET", "/api/tasks?limit=50", me).json()
    titles = sorted(t["title"] for t in left["tasks"])
    assert titles == ["keep me"], (titles, texts)
    # The same token replayed from another workspace's alice: nothing found to confirm.
    other = who(ws("yes-other"))
    victim_history = req(host, "GET", f"/api/chat/{chat_id}/history?include_metadata=true", other)
    assert victim_history.status_code == 404


def test_per_tool_http_cross_owner_ids_and_tokens(host: HostProcess) -> None:
    a, b = who(ws("tool-a")), who(ws("tool-b"))  # both "alice", different workspaces
    chat_id = req(host, "POST", "/api/tools/create_chat_session", a, {}).json()["chat_id"]
    r = req(host, "POST", "/api/tools/store_chat_message", b, {"chat_id": chat_id, "message": "x", "role": "user"})
    assert r.status_code == 404, r.text
    r = req(host, "POST", "/api/tools/get_chat_history", b, {"chat_id": chat_id})
    assert r.status_code == 404, r.text
    for i in range(2):
        assert req(host, "POST", "/api/tools/create_task", a, {"title": f"a{i}"}).status_code == 200
    preview = req(host, "POST", "/api/tools/bulk_delete_tasks", a, {"status": "pending"}).json()
    token = preview["confirmation_token"]
    assert req(host, "POST", "/api/tools/create_task", b, {"title": "b0"}).status_code == 200
    replay = {"status": "pending", "require_confirmation": False, "confirmation_token": token}
    r = req(host, "POST", "/api/tools/bulk_delete_tasks", b, replay)
    assert r.status_code in (400, 404, 409), r.text
    assert [t["title"] for t in req(host, "GET", "/api/tasks", b).json()["tasks"]] == ["b0"]
    ok = req(host, "POST", "/api/tools/bulk_delete_tasks", a, replay)
    assert ok.status_code == 200, ok.text
    assert ok.json()["deleted_count"] == 2
    again = req(host, "POST", "/api/tools/bulk_delete_tasks", a, replay)
    assert again.status_code == 409, again.text
