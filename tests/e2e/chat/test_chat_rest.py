"""The mobile app's chat REST API on the local host: sessions, history, the message flow, isolation.

The assistant runs on its rule path here (no LLM configured on the shared host); the LLM path over the
REST route is in test_chat_llm_rest.py with the OpenAI-compatible test server.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from devhost.processes import HostProcess


def who(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": user}


def ws(tag: str) -> str:
    return f"ws-chatrest-{tag}-{uuid.uuid4().hex[:8]}"


def req(host: HostProcess, method: str, path: str, headers: dict[str, str], body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=60)


def test_sessions_and_history_over_rest(host: HostProcess) -> None:
    me = who(ws("a"))
    made = req(host, "POST", "/api/chat/session", me, {"user_id": "alice", "session_name": "Mobile Chat - Dec 7"})
    assert made.status_code == 201, made.text
    chat_id = made.json()["chat_id"]
    assert made.json()["success"] is True
    assert made.headers["location"] == f"/api/chat/{chat_id}/history"
    assert made.json()["session"]["session_name"] == "Mobile Chat - Dec 7"
    second = req(host, "POST", "/api/chat/session", me, {})
    assert second.status_code == 201
    listed = req(host, "GET", "/api/chat/sessions?limit=1", me)
    assert listed.status_code == 200, listed.text
    assert len(listed.json()["sessions"]) == 1
    assert listed.json()["continuation"]
    token = listed.json()["continuation"]
    rest = req(host, "GET", "/api/chat/sessions?" + str(httpx.QueryParams({"limit": 10, "continuation": token})), me)
    assert rest.status_code == 200, (token, rest.text)
    ids = {s["chat_id"] for s in listed.json()["sessions"]} | {s["chat_id"] for s in rest.json()["sessions"]}
    assert ids == {chat_id, second.json()["chat_id"]}
    empty = req(host, "GET", f"/api/chat/{chat_id}/history", me)
    assert empty.status_code == 200, empty.text
    assert empty.json()["messages"] == []
    assert empty.json()["message_count"] == 0


def test_another_users_chat_is_not_found_and_user_id_is_checked(host: HostProcess) -> None:
    a, b = who(ws("own-a")), who(ws("own-b"))
    chat_id = req(host, "POST", "/api/chat/session", a, {}).json()["chat_id"]
    # Same user name, other workspace: another owner.
    same_name_other_ws = who(ws("own-c"), "alice")
    for headers in (b, same_name_other_ws, who(a["x-dev-workspace"], "mallory")):
        r = req(host, "GET", f"/api/chat/{chat_id}/history", headers)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "NOT_FOUND"
        sent = req(host, "POST", "/api/chat/message", headers, {"chat_id": chat_id, "message": "show my tasks"})
        assert sent.status_code == 404, sent.text
    # A guessed id looks the same as another user's.
    guess = req(host, "GET", f"/api/chat/{uuid.uuid4()}/history", b)
    assert guess.status_code == 404
    assert guess.json()["error"]["code"] == "NOT_FOUND"
    # user_id in a body or query that is not the caller's: 403, and nothing is created.
    before = req(host, "GET", "/api/chat/sessions", b).json()["sessions"]
    for method, path, body in (
        ("POST", "/api/chat/session", {"user_id": "alice"}),
        ("GET", "/api/chat/sessions?user_id=alice", None),
        ("POST", "/api/chat/message", {"message": "show my tasks", "user_id": "alice"}),
    ):
        r = req(host, method, path, who(b["x-dev-workspace"], "bob"), body)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["error"]["code"] == "FORBIDDEN"
    assert req(host, "GET", "/api/chat/sessions", b).json()["sessions"] == before
    # A's history is untouched by all of that.
    assert req(host, "GET", f"/api/chat/{chat_id}/history", a).json()["message_count"] == 0


def test_bad_input_is_a_clear_error_and_writes_nothing(host: HostProcess) -> None:
    me = who(ws("bad"))
    chat_id = req(host, "POST", "/api/chat/session", me, {}).json()["chat_id"]
    cases: list[tuple[str, str, Any, str]] = [
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": ""}, "message"),
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": "x" * 4001}, "message"),
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": 5}, "message"),
        ("POST", "/api/chat/message", {"chat_id": "../../etc", "message": "hi"}, "chat_id"),
        ("POST", "/api/chat/message", {"chat_id": chat_id, "message": "hi", "role": "assistant"}, "role"),
        ("POST", "/api/chat/session", {"session_name": "n" * 201}, "session_name"),
        ("POST", "/api/chat/session", {"metadata": {"k": "v" * 5000}}, "metadata"),
        ("GET", f"/api/chat/{chat_id}/history?limit=0", None, "limit"),
        ("GET", f"/api/chat/{chat_id}/history?limit=101", None, "limit"),
        ("GET", f"/api/chat/{chat_id}/history?limit=ten", None, "limit"),
        ("GET", f"/api/chat/{chat_id}/history?continuation=%00%01", None, "continuation"),
        ("GET", "/api/chat/sessions?limit=-1", None, "limit"),
        ("GET", f"/api/chat/{chat_id.upper()}/history", None, "chat_id"),
    ]
    for method, path, body, field in cases:
        r = req(host, method, path, me, body)
        assert r.status_code == 400, (path, body if not isinstance(body, dict) else list(body), r.text[:300])
        err = r.json()["error"]
        assert err["code"] == "VALIDATION_ERROR", err
        assert any(field in e["field"] for e in err["details"]["errors"]), (field, err)
    after = req(host, "GET", f"/api/chat/{chat_id}/history", me).json()
    assert after["message_count"] == 0
    assert len(req(host, "GET", "/api/chat/sessions", me).json()["sessions"]) == 1


def say(host: HostProcess, headers: dict[str, str], chat_id: str | None, message: str) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message}
    if chat_id:
        body["chat_id"] = chat_id
    r = req(host, "POST", "/api/chat/message", headers, body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["success"] is True
    assert out["user_message_id"] != out["assistant_message_id"]
    return out


def test_the_rule_path_serves_the_common_intents(host: HostProcess) -> None:
    me = who(ws("rules"))
    tomorrow = req(host, "POST", "/api/tasks", me, {"title": "Call dentist", "due_date": "2100-01-01"}).json()
    assert tomorrow["task"]["id"]
    for title, category in (("Buy milk", "shopping"), ("Buy bread", "shopping"), ("Write report", "work")):
        assert req(host, "POST", "/api/tasks", me, {"title": title, "category": category}).status_code == 201

    first = say(host, me, None, "Show my pending tasks")
    chat_id = first["chat_id"]
    assert first["mode"] == "rules"
    assert "4 pending task(s)" in first["response"]
    assert [c["name"] for c in first["tool_calls"]] == ["get_all_tasks"]
    assert len(first["task_ids"]) == 4
    assert "richer answers need an LLM" in first["response"]

    found = say(host, me, chat_id, "find milk")
    assert "Buy milk" in found["response"]
    assert "richer answers need an LLM" not in found["response"]  # said once per chat

    ambiguous = say(host, me, chat_id, "mark buy done")
    assert "Several tasks match 'buy'; which one?" in ambiguous["response"]
    assert [c["name"] for c in ambiguous["tool_calls"]] == ["search_tasks"]
    done = say(host, me, chat_id, "mark the milk task done")
    assert 'Marked "Buy milk" as done' in done["response"]
    assert [c["name"] for c in done["tool_calls"]] == ["search_tasks", "update_task_status"]

    created = say(host, me, chat_id, "add a task to pay rent tomorrow, high priority")
    assert 'Created "Pay rent" (high priority, due' in created["response"]

    summary = say(host, me, chat_id, "how many tasks do I have?")
    assert "You have 5 task(s): 4 pending" in summary["response"]

    weather = say(host, me, chat_id, "What's the weather like?")
    assert weather["mode"] == "refusal"
    assert weather["response"].startswith("I'm a task management assistant")
    assert weather["tool_calls"] == []

    # Delete with confirmation: a preview, then "yes" deletes exactly the previewed set.
    preview = say(host, me, chat_id, "delete all completed shopping tasks")
    assert "This would delete 1 task(s)" in preview["response"]
    assert "Buy milk" in preview["response"]
    assert len(req(host, "GET", "/api/tasks?status=completed", me).json()["tasks"]) == 1
    confirmed = say(host, me, chat_id, "yes")
    assert "Done: I deleted 1 task(s)." in confirmed["response"]
    assert req(host, "GET", "/api/tasks?status=completed", me).json()["tasks"] == []
    # The same "yes" again deletes nothing more (the preview was used).
    again = say(host, me, chat_id, "yes")
    assert "deleted" not in again["response"].lower() or "deleted nothing" in again["response"].lower()
    assert len(req(host, "GET", "/api/tasks", me).json()["tasks"]) == 4

    history = req(host, "GET", f"/api/chat/{chat_id}/history?limit=100", me).json()
    assert history["message_count"] == 2 * 10
    roles = [m["role"] for m in history["messages"]]
    assert roles == ["user", "assistant"] * 10
    # The preview's answer carries its pending confirmation in the stored metadata.
    stored = [m for m in history["messages"] if m["message"] == preview["response"]]
    assert stored[0]["metadata"]["pending_confirmation"]["count"] == 1
