"""The mobile app's task REST API (`/api/tasks`, `/api/tasks/{task_id}`) on the local host: the whole
lifecycle, paging, isolation between users and workspaces, and bad input as a 400 that changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from devhost.processes import HostProcess


def who(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": user}


def ws() -> str:
    return f"ws-tasksrest-{uuid.uuid4().hex[:8]}"


def req(host: HostProcess, method: str, path: str, headers: dict[str, str], body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=60)


def test_task_lifecycle_over_rest(host: HostProcess) -> None:
    me = who(ws())
    made = req(host, "POST", "/api/tasks", me, {"title": "Call dentist", "priority": "high", "category": "Health"})
    assert made.status_code == 201, made.text
    task = made.json()["task"]
    assert made.headers["location"] == f"/api/tasks/{task['id']}"
    assert (task["title"], task["priority"], task["status"]) == ("Call dentist", "high", "pending")

    got = req(host, "GET", f"/api/tasks/{task['id']}", me)
    assert got.status_code == 200
    assert got.json()["task"] == task

    # PATCH changes only what is sent; null clears.
    patched = req(host, "PATCH", f"/api/tasks/{task['id']}", me, {"status": "completed", "due_date": "2026-12-01"})
    assert patched.status_code == 200, patched.text
    after = patched.json()["task"]
    assert after["status"] == "completed"
    assert after["completed_at"]
    assert after["title"] == "Call dentist"
    assert after["priority"] == "high"
    assert after["due_date"]
    cleared = req(host, "PATCH", f"/api/tasks/{task['id']}", me, {"due_date": None, "status": "pending"})
    assert cleared.json()["task"]["due_date"] is None
    assert cleared.json()["task"]["completed_at"] is None

    listed = req(host, "GET", "/api/tasks?status=pending&category=health", me)
    assert listed.status_code == 200, listed.text
    assert [t["id"] for t in listed.json()["tasks"]] == [task["id"]]

    gone = req(host, "DELETE", f"/api/tasks/{task['id']}", me)
    assert gone.status_code == 200, gone.text
    assert gone.json()["success"] is True
    assert req(host, "GET", f"/api/tasks/{task['id']}", me).status_code == 404
    assert req(host, "GET", f"/api/tasks/{task['id']}?include_deleted=true", me).json()["task"]["deleted"] is True
    assert req(host, "GET", "/api/tasks", me).json()["tasks"] == []
    assert len(req(host, "GET", "/api/tasks?include_deleted=1", me).json()["tasks"]) == 1
    assert req(host, "DELETE", f"/api/tasks/{task['id']}", me).status_code == 404


def test_list_pages_with_continuation(host: HostProcess) -> None:
    me = who(ws())
    for i in range(7):
        assert req(host, "POST", "/api/tasks", me, {"title": f"task {i}"}).status_code == 201
    seen: list[str] = []
    url = "/api/tasks?limit=3"
    pages = 0
    while True:
        page = req(host, "GET", url, me).json()
        seen += [t["id"] for t in page["tasks"]]
        pages += 1
        if not page["continuation"]:
            break
        url = "/api/tasks?" + str(httpx.QueryParams({"limit": 3, "continuation": page["continuation"]}))
    assert pages == 3
    assert len(seen) == len(set(seen)) == 7


def test_nobody_reads_or_changes_another_users_task(host: HostProcess) -> None:
    workspace = ws()
    alice = who(workspace)
    task_id = req(host, "POST", "/api/tasks", alice, {"title": "private"}).json()["task"]["id"]
    for other in (who(workspace, "bob"), who(ws(), "alice")):
        for method, body in (("GET", None), ("PATCH", {"title": "mine now"}), ("DELETE", None)):
            r = req(host, method, f"/api/tasks/{task_id}", other, body)
            assert r.status_code == 404, (method, r.text)
            assert r.json()["error"]["code"] == "NOT_FOUND"
        assert req(host, "GET", "/api/tasks", other).json()["tasks"] == []
    # user_id naming someone else: 403, nothing written.
    assert req(host, "POST", "/api/tasks", who(workspace, "bob"), {"title": "x", "user_id": "alice"}).status_code == 403
    assert req(host, "GET", "/api/tasks", who(workspace, "bob")).json()["tasks"] == []
    assert req(host, "GET", f"/api/tasks/{task_id}", alice).json()["task"]["title"] == "private"


def test_bad_input_is_a_400_naming_the_field(host: HostProcess) -> None:
    me = who(ws())
    task_id = req(host, "POST", "/api/tasks", me, {"title": "keep me"}).json()["task"]["id"]
    cases: list[tuple[str, str, Any, str]] = [
        ("POST", "/api/tasks", {}, "title"),
        ("POST", "/api/tasks", {"title": "x" * 201}, "title"),
        ("POST", "/api/tasks", {"title": "ok", "priority": "urgent"}, "priority"),
        ("POST", "/api/tasks", {"title": "ok", "due_date": "next blursday"}, "due_date"),
        ("POST", "/api/tasks", {"title": "ok", "tags": ["t"] * 21}, "tags"),
        ("POST", "/api/tasks", {"title": "ok", "owner": "someone"}, "owner"),
        ("PATCH", f"/api/tasks/{task_id}", {"priority": 3}, "priority"),
        ("PATCH", f"/api/tasks/{task_id}", {"title": ""}, "title"),
        ("PATCH", f"/api/tasks/{task_id}", {"task_id": "other"}, "task_id"),
        ("GET", "/api/tasks?limit=0", None, "limit"),
        ("GET", "/api/tasks?limit=1000", None, "limit"),
        ("GET", "/api/tasks?status=done", None, "status"),
        ("GET", "/api/tasks?include_deleted=perhaps", None, "include_deleted"),
        ("GET", "/api/tasks?continuation=not-a-token", None, "continuation"),
        ("GET", f"/api/tasks/{'x' * 65}", None, "task_id"),
    ]
    for method, path, body, field in cases:
        r = req(host, method, path, me, body)
        assert r.status_code == 400, (method, path, r.text[:300])
        err = r.json()["error"]
        assert err["code"] == "VALIDATION_ERROR", err
        assert any(field in e["field"] for e in err["details"].get("errors", [])), (field, err)
    tasks = req(host, "GET", "/api/tasks", me).json()["tasks"]
    assert [(t["id"], t["title"], t["priority"]) for t in tasks] == [(task_id, "keep me", "medium")]
