"""Tasks against the local Cosmos: owners, soft delete, paging, summary, search, status changes."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from shared.core.errors import Forbidden, NotFound, ValidationFailed
from shared.tasks.models import (
    CreateTaskRequest,
    GetAllTasksRequest,
    GetCompletedTasksRequest,
    GetTaskRequest,
    GetTasksSummaryRequest,
    SearchTasksRequest,
    TaskIdRequest,
    UpdateTaskRequest,
    UpdateTaskStatusRequest,
)
from shared.tasks.service import TaskService
from shared.tasks.store import owner_key
from shared.tools.deps import Deps
from tests.integration.tasks.conftest import Clock, principal


async def _new(service: TaskService, who, title: str = "Buy milk", **kw) -> str:
    return (await service.create_task(who, CreateTaskRequest(title=title, **kw))).task.id


async def test_same_user_id_in_two_workspaces_are_two_owners(service: TaskService) -> None:
    alice1, alice2 = principal(user="alice"), principal(user="alice")
    mine = await _new(service, alice1, "Workspace one task")
    await _new(service, alice2, "Workspace two task")
    one = await service.get_all_tasks(alice1, GetAllTasksRequest())
    two = await service.get_all_tasks(alice2, GetAllTasksRequest())
    assert [t.title for t in one.tasks] == ["Workspace one task"]
    assert [t.title for t in two.tasks] == ["Workspace two task"]
    assert one.tasks[0].user_id == two.tasks[0].user_id == "alice"
    # The other workspace's id, and a guessed one, are NOT_FOUND for every tool that takes an id.
    for task_id in (mine, str(uuid.uuid4()), "../profile", "profile"):
        with pytest.raises(NotFound):
            await service.get_task(alice2, GetTaskRequest(task_id=task_id))
        with pytest.raises(NotFound):
            await service.update_task(alice2, UpdateTaskRequest(task_id=task_id, title="stolen"))
        with pytest.raises(NotFound):
            await service.delete_task(alice2, TaskIdRequest(task_id=task_id))
    changed = await service.update_task_status(alice2, UpdateTaskStatusRequest(task_ids=[mine], new_status="completed"))
    assert changed.not_found == [mine]
    assert changed.updated == 0
    assert (await service.get_task(alice1, GetTaskRequest(task_id=mine))).task.title == "Workspace one task"
    assert (await service.get_task(alice1, GetTaskRequest(task_id=mine))).task.status == "pending"
    assert owner_key(alice1.workspace_id, "alice") != owner_key(alice2.workspace_id, "alice")


async def test_user_id_must_be_the_caller(service: TaskService) -> None:
    who = principal()
    with pytest.raises(Forbidden):
        await service.create_task(who, CreateTaskRequest(title="x", user_id="bob"))
    with pytest.raises(Forbidden):
        await service.get_all_tasks(who, GetAllTasksRequest(user_id="bob"))
    assert (await service.get_all_tasks(who, GetAllTasksRequest(user_id="alice"))).count == 0


async def test_soft_delete_and_include_deleted(service: TaskService, clock: Clock) -> None:
    who = principal()
    gone = await _new(service, who, "Old task")
    kept = await _new(service, who, "Kept task")
    deleted = await service.delete_task(who, TaskIdRequest(task_id=gone))
    assert deleted.success
    assert deleted.deleted_at == "2026-11-23T12:00:00.000000Z"
    with pytest.raises(NotFound):
        await service.get_task(who, GetTaskRequest(task_id=gone))
    with pytest.raises(NotFound):
        await service.delete_task(who, TaskIdRequest(task_id=gone))
    shown = await service.get_task(who, GetTaskRequest(task_id=gone, include_deleted=True))
    assert shown.task.deleted
    assert shown.task.deleted_at is not None
    assert [t.id for t in (await service.get_all_tasks(who, GetAllTasksRequest())).tasks] == [kept]
    everything = await service.get_all_tasks(who, GetAllTasksRequest(include_deleted=True))
    assert {t.id for t in everything.tasks} == {gone, kept}
    found = await service.search_tasks(who, SearchTasksRequest(query="task"))
    assert [t.id for t in found.tasks] == [kept]


async def test_update_is_partial_and_status_sets_and_clears_completed_at(service: TaskService, clock: Clock) -> None:
    who = principal()
    task_id = await _new(
        service,
        who,
        "Call dentist",
        description="about the crown",
        category="  Health  Care ",
        priority="high",
        due_date="2026-11-30",
        tags=["Phone", "phone", "teeth"],
    )
    task = (await service.get_task(who, GetTaskRequest(task_id=task_id))).task
    assert task.category == "Health Care"
    assert task.tags == ["Phone", "teeth"]
    assert task.due_all_day
    clock.now += timedelta(hours=1)
    updated = (await service.update_task(who, UpdateTaskRequest(task_id=task_id, status="completed"))).task
    assert updated.status == "completed"
    assert updated.completed_at == "2026-11-23T13:00:00.000000Z"
    assert (updated.title, updated.description, updated.priority, updated.tags) == (
        "Call dentist",
        "about the crown",
        "high",
        ["Phone", "teeth"],
    )
    reopened = (
        await service.update_task(who, UpdateTaskRequest(task_id=task_id, status="pending", due_date=None))
    ).task
    assert reopened.status == "pending"
    assert reopened.completed_at is None
    assert reopened.due_date is None
    same = await service.update_task(who, UpdateTaskRequest(task_id=task_id, priority="high"))
    assert same.message == "Nothing changed."
    with pytest.raises(ValidationFailed):
        await service.update_task(who, UpdateTaskRequest(task_id=task_id))
    with pytest.raises(ValidationFailed):
        await service.update_task(who, UpdateTaskRequest(task_id=task_id, title=None))
    # category filters ignore case and spacing; the display form is kept
    listed = await service.get_all_tasks(who, GetAllTasksRequest(category="health care"))
    assert [t.category for t in listed.tasks] == ["Health Care"]


async def test_paging_250_tasks_with_continuation(service: TaskService, clock: Clock) -> None:
    who = principal()
    clock.step = timedelta(seconds=1)
    for chunk in range(5):
        await asyncio.gather(*(_new(service, who, f"task {chunk * 50 + i:03d}") for i in range(50)))
    seen: list[str] = []
    created: list[str] = []
    token = None
    pages = 0
    while True:
        page = await service.get_all_tasks(who, GetAllTasksRequest(limit=100, continuation=token))
        pages += 1
        seen += [t.id for t in page.tasks]
        created += [t.created_at for t in page.tasks]
        token = page.continuation
        if not token:
            break
    assert pages == 3
    assert len(seen) == 250
    assert len(set(seen)) == 250
    assert created == sorted(created, reverse=True)  # newest first, across pages
    # The same walk with a filter and a page size of 7 sees exactly the matching tasks once.
    token, got = None, []
    while True:
        page = await service.search_tasks(who, SearchTasksRequest(query="TASK 1", limit=7, continuation=token))
        got += [t.title for t in page.tasks]
        token = page.continuation
        if not token:
            break
    assert sorted(got) == [f"task {i:03d}" for i in range(100, 200)]


async def test_search_matches_title_description_and_tags_ignoring_case(service: TaskService) -> None:
    who = principal()
    a = await _new(service, who, "Email JOHN about invoices")
    b = await _new(service, who, "Pay rent", description="ask john for the receipt")
    c = await _new(service, who, "Groceries", tags=["Johnson-family"])
    await _new(service, who, "Unrelated")
    found = await service.search_tasks(who, SearchTasksRequest(query="John"))
    assert {t.id for t in found.tasks} == {a, b, c}
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[a], new_status="completed"))
    pending = await service.search_tasks(who, SearchTasksRequest(query="john", status="pending"))
    assert {t.id for t in pending.tasks} == {b, c}
    assert (await service.search_tasks(who, SearchTasksRequest(query="100%_"))).tasks == []


async def test_summary_numbers(service: TaskService, clock: Clock) -> None:
    who = principal()
    ids = [
        await _new(service, who, "a", priority="high", category="Work", due_date="2026-11-20T09:00:00Z"),  # overdue
        await _new(service, who, "b", priority="high", category="work", due_date="2026-11-23"),  # today
        await _new(service, who, "c", priority="low", category="Home", due_date="2026-11-24T10:00:00Z"),
        await _new(service, who, "d", priority="medium", category="Home", due_date="2026-12-20"),
        await _new(service, who, "e", priority="high"),
        await _new(service, who, "f", priority="medium", due_date="2026-11-01"),
    ]
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[ids[4], ids[5]], new_status="completed"))
    gone = await _new(service, who, "deleted", priority="high")
    await service.delete_task(who, TaskIdRequest(task_id=gone))

    by_status = await service.get_tasks_summary(who, GetTasksSummaryRequest())
    assert by_status.totals.model_dump() == {
        "total": 6,
        "total_pending": 4,
        "total_completed": 2,
        "pending_high_priority": 2,
        "overdue": 1,
    }
    assert [(g.status, g.count, g.high_priority) for g in by_status.grouped_data] == [
        ("pending", 4, 2),
        ("completed", 2, 0),
    ]
    by_category = await service.get_tasks_summary(who, GetTasksSummaryRequest(group_by="category"))
    assert [(g.group, g.count) for g in by_category.grouped_data] == [
        ("Home", 2),
        ("uncategorised", 2),
        ("Work", 2),  # "Work" and "work" are one group; on a tie the spelling that sorts first
    ]
    by_priority = await service.get_tasks_summary(who, GetTasksSummaryRequest(group_by="priority"))
    assert [(g.priority, g.count, g.pending) for g in by_priority.grouped_data] == [
        ("high", 3, 2),
        ("medium", 2, 1),
        ("low", 1, 1),
    ]
    by_date = await service.get_tasks_summary(who, GetTasksSummaryRequest(group_by="date"))
    assert [(g.date, g.count) for g in by_date.grouped_data] == [
        ("overdue", 1),
        ("today", 1),
        ("tomorrow", 1),
        ("later", 1),
        ("past", 1),
        ("no_due_date", 1),
    ]


async def test_completed_tasks_in_a_range(service: TaskService, clock: Clock) -> None:
    who = principal()
    early, late = await _new(service, who, "early"), await _new(service, who, "late")
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[early], new_status="completed"))
    clock.now = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[late], new_status="completed"))
    today = await service.get_completed_tasks(who, GetCompletedTasksRequest(date_range="today"))
    assert [t.id for t in today.tasks] == [late]
    week = await service.get_completed_tasks(who, GetCompletedTasksRequest(date_range="this_week"))
    assert [t.id for t in week.tasks] == [late, early]
    custom = await service.get_completed_tasks(
        who, GetCompletedTasksRequest(date_range="custom", custom_start="2026-11-23", custom_end="2026-11-23")
    )
    assert [t.id for t in custom.tasks] == [early]
    assert custom.window is not None
    assert custom.window.end == "2026-11-24T00:00:00.000000Z"


async def test_update_task_status_reports_per_id(service: TaskService) -> None:
    who = principal()
    a, b = await _new(service, who, "a"), await _new(service, who, "b")
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[b], new_status="completed"))
    ghost = str(uuid.uuid4())
    r = await service.update_task_status(
        who, UpdateTaskStatusRequest(task_ids=[a, b, ghost, a], new_status="completed")
    )
    assert (r.updated, r.unchanged, r.not_found) == (1, 1, [ghost])
    assert len(r.results) == 3  # duplicates collapse


async def test_profile_zone_is_validated(service: TaskService, deps: Deps) -> None:
    from shared.tasks.models import SetPreferencesRequest

    who = principal()
    with pytest.raises(ValidationFailed) as err:
        await service.set_preferences(who, SetPreferencesRequest(tz="Mars/Olympus"))
    assert err.value.details["errors"][0]["field"] == "tz"
    assert (await service.set_preferences(who, SetPreferencesRequest(tz="Europe/Berlin"))).tz == "Europe/Berlin"
    profile = await (await deps.cosmos.container("tasks")).read("profile", owner_key(who.workspace_id, "alice"))
    assert profile is not None
    assert profile["tz"] == "Europe/Berlin"
    assert len(profile["confirm_key"]) == 64


async def test_concurrent_partial_updates_keep_every_change(service: TaskService) -> None:
    who = principal()
    task_id = await _new(service, who, "contended")
    await asyncio.gather(
        service.update_task(who, UpdateTaskRequest(task_id=task_id, priority="high")),
        service.update_task(who, UpdateTaskRequest(task_id=task_id, category="Work")),
        service.update_task(who, UpdateTaskRequest(task_id=task_id, tags=["x"])),
        service.update_task(who, UpdateTaskRequest(task_id=task_id, description="details")),
    )
    task = (await service.get_task(who, GetTaskRequest(task_id=task_id))).task
    assert (task.priority, task.category, task.tags, task.description) == ("high", "Work", ["x"], "details")
