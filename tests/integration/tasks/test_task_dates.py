"""get_tasks_by_date in the user's zone, around midnight and a DST change, with a fixed clock; one query."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.tasks.models import (
    CreateTaskRequest,
    GetTasksByDateRequest,
    SetPreferencesRequest,
    UpdateTaskStatusRequest,
)
from shared.tasks.service import TaskService
from shared.tools.deps import Deps
from tests.integration.tasks.conftest import Clock, principal


async def _titles(service: TaskService, who, date_range: str, **kw) -> list[str]:
    r = await service.get_tasks_by_date(who, GetTasksByDateRequest.model_validate({"date_range": date_range, **kw}))
    return [t.title for t in r.tasks]


async def test_late_evening_in_new_york_is_still_today(service: TaskService, clock: Clock) -> None:
    who = principal()
    await service.set_preferences(who, SetPreferencesRequest(tz="America/New_York"))
    clock.now = datetime(2026, 11, 24, 4, 30, tzinfo=UTC)  # Monday 23 Nov, 23:30 in New York
    for title, due in [
        ("all day today", "2026-11-23"),  # a date alone: by the end of that local day
        ("this evening", "2026-11-23T20:00:00-05:00"),  # already past: today and overdue
        ("local naive 23:45", "2026-11-23T23:45:00"),  # no zone: read in New York
        ("after midnight", "2026-11-24T00:30:00-05:00"),
        ("utc tuesday morning", "2026-11-24T06:00:00Z"),  # 01:00 Tuesday in New York
        ("next monday", "2026-11-30"),
        ("no due date", None),
    ]:
        await service.create_task(who, CreateTaskRequest(title=title, due_date=due))
    assert await _titles(service, who, "today") == ["this evening", "local naive 23:45", "all day today"]
    assert await _titles(service, who, "tomorrow") == ["after midnight", "utc tuesday morning"]
    assert await _titles(service, who, "overdue") == ["this evening"]
    assert await _titles(service, who, "this_week") == [
        "this evening",
        "local naive 23:45",
        "all day today",
        "after midnight",
        "utc tuesday morning",
    ]
    assert await _titles(service, who, "next_week") == ["next monday"]
    r = await service.get_tasks_by_date(who, GetTasksByDateRequest(date_range="today"))
    assert r.window is not None
    assert (r.window.start, r.window.end, r.window.tz) == (
        "2026-11-23T05:00:00.000000Z",
        "2026-11-24T05:00:00.000000Z",
        "America/New_York",
    )
    # The same instant for a UTC user is already Tuesday: "all day today" (Monday in New York) is overdue.
    utc_user = principal()
    await service.create_task(utc_user, CreateTaskRequest(title="monday utc", due_date="2026-11-23"))
    await service.create_task(utc_user, CreateTaskRequest(title="tuesday utc", due_date="2026-11-24"))
    assert await _titles(service, utc_user, "today") == ["tuesday utc"]
    assert await _titles(service, utc_user, "overdue") == ["monday utc"]


async def test_the_day_daylight_saving_ends_has_25_hours(service: TaskService, clock: Clock) -> None:
    who = principal()
    await service.set_preferences(who, SetPreferencesRequest(tz="America/New_York"))
    clock.now = datetime(2026, 11, 1, 17, 0, tzinfo=UTC)  # Sunday 1 Nov 2026, 12:00 EST (DST ended at 02:00)
    for title, due in [
        ("just after midnight EDT", "2026-11-01T04:30:00Z"),  # 00:30 EDT
        ("late evening EST", "2026-11-02T04:30:00Z"),  # 23:30 EST, the 25th hour of the day
        ("monday midnight", "2026-11-02T05:00:00Z"),  # 00:00 EST Monday
        ("saturday night", "2026-11-01T03:59:00Z"),  # 23:59 EDT Saturday
    ]:
        await service.create_task(who, CreateTaskRequest(title=title, due_date=due))
    r = await service.get_tasks_by_date(who, GetTasksByDateRequest(date_range="today", status="all"))
    assert [t.title for t in r.tasks] == ["just after midnight EDT", "late evening EST"]
    assert r.window is not None
    assert (r.window.start, r.window.end) == ("2026-11-01T04:00:00.000000Z", "2026-11-02T05:00:00.000000Z")
    assert await _titles(service, who, "tomorrow") == ["monday midnight"]
    # Berlin, the day DST ends there (25 Oct 2026): a 25-hour day too, from 22:00Z to 23:00Z next day.
    berlin = principal()
    await service.set_preferences(berlin, SetPreferencesRequest(tz="Europe/Berlin"))
    clock.now = datetime(2026, 10, 25, 12, 0, tzinfo=UTC)
    await service.create_task(berlin, CreateTaskRequest(title="23:30 CET", due_date="2026-10-25T23:30:00"))
    r = await service.get_tasks_by_date(berlin, GetTasksByDateRequest(date_range="today"))
    assert [t.title for t in r.tasks] == ["23:30 CET"]
    assert r.tasks[0].due_date == "2026-10-25T22:30:00.000000Z"
    assert r.window is not None
    assert (r.window.start, r.window.end) == ("2026-10-24T22:00:00.000000Z", "2026-10-25T23:00:00.000000Z")


async def test_date_type_status_and_custom(service: TaskService, clock: Clock) -> None:
    who = principal()
    a = (await service.create_task(who, CreateTaskRequest(title="made monday", due_date="2026-12-01"))).task.id
    clock.now = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    await service.create_task(who, CreateTaskRequest(title="made tuesday"))
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[a], new_status="completed"))
    assert await _titles(service, who, "today", date_type="created_at") == ["made tuesday"]
    assert await _titles(service, who, "today", date_type="created_at", status="all") == ["made tuesday"]
    assert await _titles(service, who, "this_week", date_type="created_at", status="all") == [
        "made monday",
        "made tuesday",
    ]
    assert await _titles(service, who, "today", date_type="completed_at", status="completed") == ["made monday"]
    assert await _titles(
        service, who, "custom", custom_start="2026-12-01", custom_end="2026-12-01", status="completed"
    ) == ["made monday"]
    assert await _titles(service, who, "custom", custom_start="2026-12-01", custom_end="2026-12-01") == []


async def test_by_date_is_one_range_query_whatever_the_task_count(
    service: TaskService, clock: Clock, deps: Deps
) -> None:
    who = principal()
    container = await deps.cosmos.container("tasks")
    for day in range(1, 31):
        await service.create_task(who, CreateTaskRequest(title=f"due {day}", due_date=f"2026-11-{day:02d}"))
    before = container.requests
    r = await service.get_tasks_by_date(who, GetTasksByDateRequest(date_range="this_week"))
    # One point read of the profile (the zone) + one query page: no read of every task.
    assert container.requests - before == 2
    assert [t.title for t in r.tasks] == [f"due {d}" for d in range(23, 30)]


async def test_every_task_output_shows_its_times_in_the_users_zone(service: TaskService, clock: Clock) -> None:
    # Issue #27: a Berlin user's task due "2026-11-28" was shown as 2026-11-28 22:59 (UTC, no zone).
    who = principal()
    await service.set_preferences(who, SetPreferencesRequest(tz="Europe/Berlin"))
    made = await service.create_task(who, CreateTaskRequest(title="pay rent", due_date="2026-11-28"))
    assert made.tz == "Europe/Berlin"
    assert made.task.due_date == "2026-11-28T22:59:59.999999Z"
    assert made.task.due_date_local == "2026-11-28T23:59:59+01:00"
    summer = await service.create_task(who, CreateTaskRequest(title="summer", due_date="2026-07-01T09:00:00"))
    assert summer.task.due_date_local == "2026-07-01T09:00:00+02:00"
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[made.task.id], new_status="completed"))
    listed = await service.get_tasks_by_date(
        who, GetTasksByDateRequest(date_range="custom", custom_start="2026-11-28", status="all")
    )
    assert listed.tz == "Europe/Berlin"
    assert [(t.title, t.due_date_local) for t in listed.tasks] == [("pay rent", "2026-11-28T23:59:59+01:00")]
    assert listed.tasks[0].completed_at_local == "2026-11-23T13:00:00+01:00"  # the clock: 12:00 UTC
    nothing_due = await service.create_task(who, CreateTaskRequest(title="someday"))
    assert nothing_due.task.due_date_local is None


async def test_custom_ranges_may_leave_one_end_open(service: TaskService, clock: Clock) -> None:
    who = principal()
    await service.set_preferences(who, SetPreferencesRequest(tz="Europe/Berlin"))
    for title, due in [("old", "2020-01-01"), ("soon", "2026-11-30"), ("far", "2031-06-01"), ("undated", None)]:
        await service.create_task(who, CreateTaskRequest(title=title, due_date=due))
    assert await _titles(service, who, "custom", custom_start="2026-11-30") == ["soon", "far"]
    assert await _titles(service, who, "custom", custom_end="2026-11-30") == ["old", "soon"]
    since = await service.get_tasks_by_date(who, GetTasksByDateRequest(date_range="custom", custom_start="2026-12-01"))
    assert since.window is not None
    assert since.window.end is None
    assert since.window.start == "2026-11-30T23:00:00.000000Z"
