"""The task tools over their per-tool HTTP functions: the workflow, ownership, hostile input -> envelope, no 5xx."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess

HUGE = "x" * 100_000


def ws() -> str:
    return f"ws-tasks-{uuid.uuid4().hex[:8]}"


def post(host: HostProcess, tool: str, body: Any, workspace: str, user: str = "alice") -> httpx.Response:
    headers = {"x-dev-workspace": workspace, "x-dev-user": user}
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=60)


def ok(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 200, r.text
    return r.json()


def snapshot(host: HostProcess, workspace: str) -> list[dict[str, Any]]:
    return ok(post(host, "get_all_tasks", {"include_deleted": True}, workspace))["tasks"]


def test_workflow_over_http(host: HostProcess) -> None:
    w = ws()
    created = ok(
        post(
            host,
            "create_task",
            {"title": "Buy groceries", "category": "Shopping", "priority": "high", "due_date": "2026-12-01"},
            w,
        )
    )["task"]
    assert created["status"] == "pending"
    assert created["due_all_day"] is True
    task_id = created["id"]
    assert ok(post(host, "get_task", {"task_id": task_id}, w))["task"]["title"] == "Buy groceries"
    done = ok(post(host, "update_task_status", {"task_ids": [task_id], "new_status": "completed"}, w))
    assert done["updated"] == 1
    assert ok(post(host, "get_completed_tasks", {}, w))["tasks"][0]["id"] == task_id
    summary = ok(post(host, "get_tasks_summary", {}, w))
    assert summary["totals"]["total_completed"] == 1
    assert summary["grouped_data"] == [
        {
            "group": "completed",
            "count": 1,
            "pending": 0,
            "completed": 1,
            "high_priority": 0,
            "status": "completed",
            "category": None,
            "priority": None,
            "date": None,
        }
    ]
    assert ok(post(host, "search_tasks", {"query": "GROCER"}, w))["count"] == 1
    preview = ok(post(host, "bulk_delete_tasks", {"status": "completed"}, w))
    assert preview["count"] == 1
    assert snapshot(host, w)[0]["deleted"] is False
    confirmed = ok(
        post(
            host,
            "bulk_delete_tasks",
            {"status": "completed", "require_confirmation": False, "confirmation_token": preview["confirmation_token"]},
            w,
        )
    )
    assert confirmed["deleted_ids"] == [task_id]
    replay = post(
        host,
        "bulk_delete_tasks",
        {"status": "completed", "require_confirmation": False, "confirmation_token": preview["confirmation_token"]},
        w,
    )
    assert replay.status_code == 409
    assert replay.json()["error"]["code"] == "CONFLICT"
    assert ok(post(host, "get_all_tasks", {}, w))["tasks"] == []


def test_ownership_over_http(host: HostProcess) -> None:
    w1, w2 = ws(), ws()
    task_id = ok(post(host, "create_task", {"title": "mine"}, w1))["task"]["id"]
    for workspace, user in [(w2, "alice"), (w1, "bob")]:  # same user elsewhere; another user here
        for tool, body in [
            ("get_task", {"task_id": task_id}),
            ("update_task", {"task_id": task_id, "title": "stolen"}),
            ("delete_task", {"task_id": task_id}),
        ]:
            r = post(host, tool, body, workspace, user)
            assert r.status_code == 404, (tool, r.text)
            assert r.json()["error"]["code"] == "NOT_FOUND"
    r = post(host, "get_all_tasks", {"user_id": "bob"}, w1)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "FORBIDDEN"
    preview = ok(post(host, "bulk_delete_tasks", {"task_ids": [task_id]}, w1))
    stolen = post(
        host,
        "bulk_delete_tasks",
        {"task_ids": [task_id], "require_confirmation": False, "confirmation_token": preview["confirmation_token"]},
        w1,
        "bob",
    )
    assert stolen.status_code == 400
    assert stolen.json()["error"]["details"]["errors"][0]["field"] == "confirmation_token"
    assert [t["title"] for t in snapshot(host, w1)] == ["mine"]


GOOD_ID = "00000000-0000-4000-8000-000000000000"
HOSTILE: list[tuple[str, Any, str]] = [
    ("create_task", {"title": HUGE}, "title"),
    ("create_task", {"title": ""}, "title"),
    ("create_task", {"title": "   "}, "title"),
    ("create_task", {"title": 42}, "title"),
    ("create_task", {"title": ["a"]}, "title"),
    ("create_task", {"title": "nul\x00byte"}, "title"),
    ("create_task", {"title": "line\nbreak"}, "title"),
    ("create_task", {"title": "ok", "description": HUGE}, "description"),
    ("create_task", {"title": "ok", "description": "bell\x07"}, "description"),
    ("create_task", {"title": "ok", "category": "c" * 51}, "category"),
    ("create_task", {"title": "ok", "priority": "urgent"}, "priority"),
    ("create_task", {"title": "ok", "due_date": "next tuesday"}, "due_date"),
    ("create_task", {"title": "ok", "due_date": HUGE}, "due_date"),
    ("create_task", {"title": "ok", "due_date": "9999-12-31T23:59:59-05:00"}, "due_date"),
    ("create_task", {"title": "ok", "due_date": "0001-01-01T00:00:00+05:00"}, "due_date"),
    ("create_task", {"title": "ok", "tags": ["t"] * 21}, "tags"),
    ("create_task", {"title": "ok", "tags": ["t" * 41]}, "tags"),
    ("create_task", {"title": "ok", "tags": [""]}, "tags"),
    ("create_task", {"title": "ok", "tags": "not-a-list"}, "tags"),
    ("create_task", {"title": "ok", "status": "completed"}, "status"),
    ("create_task", {"title": "ok", "owner": "someone"}, "owner"),
    ("get_task", {"task_id": HUGE}, "task_id"),
    ("get_task", {"task_id": 12}, "task_id"),
    ("get_task", {"task_id": GOOD_ID, "include_deleted": "yes"}, "include_deleted"),
    ("update_task", {"task_id": GOOD_ID}, "(root)"),
    ("update_task", {"task_id": GOOD_ID, "title": None}, "title"),
    ("update_task", {"task_id": GOOD_ID, "status": "done"}, "status"),
    ("get_all_tasks", {"limit": 0}, "limit"),
    ("get_all_tasks", {"limit": 1000}, "limit"),
    ("get_all_tasks", {"limit": "many"}, "limit"),
    ("get_all_tasks", {"status": "archived"}, "status"),
    ("get_all_tasks", {"continuation": "garbage-token"}, "continuation"),
    ("get_all_tasks", {"continuation": HUGE}, "continuation"),
    ("get_all_tasks", {"continuation": "bad\x01"}, "continuation"),
    ("search_tasks", {"query": ""}, "query"),
    ("search_tasks", {"query": HUGE}, "query"),
    ("search_tasks", {"query": "a", "limit": 101}, "limit"),
    ("get_completed_tasks", {"date_range": "forever"}, "date_range"),
    ("get_completed_tasks", {"date_range": "custom"}, "custom_start"),
    (
        "get_completed_tasks",
        {"date_range": "custom", "custom_start": "2026-01-01", "custom_end": "2028-01-01"},
        "custom_end",
    ),
    ("get_tasks_by_date", {}, "date_range"),
    ("get_tasks_by_date", {"date_range": "custom", "custom_start": "x", "custom_end": "y"}, "custom_start"),
    (
        "get_tasks_by_date",
        {"date_range": "custom", "custom_start": "2026-01-02", "custom_end": "2026-01-01"},
        "custom_end",
    ),
    (
        "get_tasks_by_date",
        {"date_range": "custom", "custom_start": "9999-12-30", "custom_end": "9999-12-31"},
        "custom_end",
    ),
    ("get_tasks_by_date", {"date_range": "today", "date_type": "deleted_at"}, "date_type"),
    ("get_tasks_summary", {"group_by": "owner"}, "group_by"),
    ("set_task_preferences", {"tz": "Mars/Olympus"}, "tz"),
    ("set_task_preferences", {"tz": "../../etc/passwd"}, "tz"),
    ("set_task_preferences", {"tz": HUGE}, "tz"),
    ("bulk_delete_tasks", {}, "task_ids"),
    ("bulk_delete_tasks", {"task_ids": [GOOD_ID] * 10_000}, "task_ids"),
    ("bulk_delete_tasks", {"task_ids": [f"id-{i}" for i in range(10_000)]}, "task_ids"),
    ("bulk_delete_tasks", {"task_ids": []}, "task_ids"),
    ("bulk_delete_tasks", {"status": "pending", "require_confirmation": "false"}, "require_confirmation"),
    ("bulk_delete_tasks", {"status": "pending", "require_confirmation": False}, "confirmation_token"),
    (
        "bulk_delete_tasks",
        {"status": "pending", "require_confirmation": False, "confirmation_token": HUGE},
        "confirmation_token",
    ),
    (
        "bulk_delete_tasks",
        {"status": "pending", "require_confirmation": False, "confirmation_token": "a.b"},
        "confirmation_token",
    ),
    ("bulk_delete_tasks", {"completed_before": "someday"}, "completed_before"),
    ("update_task_status", {"task_ids": [], "new_status": "completed"}, "task_ids"),
    ("update_task_status", {"task_ids": [f"id-{i}" for i in range(10_000)], "new_status": "completed"}, "task_ids"),
    ("update_task_status", {"task_ids": ["a"], "new_status": "archived"}, "new_status"),
    ("update_task_status", {"task_ids": "a", "new_status": "completed"}, "task_ids"),
]


@pytest.fixture(scope="module")
def seeded(host: HostProcess) -> tuple[str, list[dict[str, Any]]]:
    w = ws()
    for title in ("one", "two", "three"):
        ok(post(host, "create_task", {"title": title, "category": "keep"}, w))
    return w, snapshot(host, w)


@pytest.mark.parametrize(
    ("tool", "body", "field"), HOSTILE, ids=[f"{t}-{f}-{i}" for i, (t, _, f) in enumerate(HOSTILE)]
)
def test_hostile_input_is_a_400_naming_the_field_and_changes_nothing(
    host: HostProcess, seeded: tuple[str, list[dict[str, Any]]], tool: str, body: Any, field: str
) -> None:
    w, before = seeded
    r = post(host, tool, body, w)
    assert r.status_code == 400, r.text[:500]
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["recovery_suggestions"]
    fields = [e["field"].split(".")[0] for e in error["details"].get("errors", [])]
    assert field in fields, error
    assert snapshot(host, w) == before


def test_a_body_that_is_not_an_object_is_a_400(host: HostProcess, seeded: tuple[str, list[dict[str, Any]]]) -> None:
    w, before = seeded
    for body in ([1, 2, 3], "title", None):
        r = post(host, "create_task", body, w)
        assert r.status_code == 400
        assert r.json()["error"]["code"] in {"INVALID_REQUEST", "VALIDATION_ERROR"}
    assert snapshot(host, w) == before


def test_a_continuation_only_continues_its_own_query(host: HostProcess) -> None:
    w, other = ws(), ws()
    for i in range(3):
        ok(post(host, "create_task", {"title": f"task {i}"}, w))
        ok(post(host, "create_task", {"title": f"task {i}"}, other))
    first = ok(post(host, "get_all_tasks", {"limit": 2}, w))
    token = first["continuation"]
    assert token
    second = ok(post(host, "get_all_tasks", {"limit": 2, "continuation": token}, w))
    assert second["count"] == 1
    assert second["continuation"] is None
    for workspace, body in [
        (other, {"limit": 2, "continuation": token}),  # another owner's
        (w, {"limit": 2, "status": "pending", "continuation": token}),  # another query's
        (w, {"limit": 2, "continuation": token[:-3] + "é!!"}),
        (w, {"limit": 2, "continuation": "x" + token}),
    ]:
        r = post(host, "get_all_tasks", body, workspace)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["details"]["errors"][0]["field"] == "continuation"


def test_a_set_changed_after_the_preview_is_a_409_over_http(host: HostProcess) -> None:
    w = ws()
    ok(post(host, "create_task", {"title": "a", "category": "old"}, w))
    preview = ok(post(host, "bulk_delete_tasks", {"category": "old"}, w))
    ok(post(host, "create_task", {"title": "b", "category": "Old"}, w))
    r = post(
        host,
        "bulk_delete_tasks",
        {"category": "old", "require_confirmation": False, "confirmation_token": preview["confirmation_token"]},
        w,
    )
    assert r.status_code == 409
    assert r.json()["error"]["details"]["reason"] == "changed"
    assert sorted(t["title"] for t in snapshot(host, w) if not t["deleted"]) == ["a", "b"]
