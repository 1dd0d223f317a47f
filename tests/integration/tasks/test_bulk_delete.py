"""bulk_delete_tasks: preview, then delete exactly the previewed set, once; every attack deletes nothing."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from shared.core.errors import AppError, Conflict, ValidationFailed
from shared.identity.models import Principal
from shared.tasks.models import (
    BulkDeleteTasksRequest,
    CreateTaskRequest,
    GetAllTasksRequest,
    SetPreferencesRequest,
    TaskIdRequest,
    UpdateTaskRequest,
    UpdateTaskStatusRequest,
)
from shared.tasks.service import TaskService
from shared.tasks.store import TaskStore
from shared.tools.deps import Deps
from tests.integration.tasks.conftest import Clock, principal


async def _seed(service: TaskService, who: Principal) -> dict[str, str]:
    ids = {}
    for title, category in [("milk", "Shopping"), ("eggs", "shopping"), ("report", "Work"), ("bread", "Shopping")]:
        ids[title] = (await service.create_task(who, CreateTaskRequest(title=title, category=category))).task.id
    return ids


async def _live(service: TaskService, who: Principal) -> set[str]:
    return {t.title for t in (await service.get_all_tasks(who, GetAllTasksRequest())).tasks}


def _confirm(token: str | None, **selection) -> BulkDeleteTasksRequest:
    return BulkDeleteTasksRequest(require_confirmation=False, confirmation_token=token, **selection)


async def test_preview_then_confirm_deletes_exactly_the_previewed_set(service: TaskService) -> None:
    who = principal()
    await _seed(service, who)
    preview = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="SHOPPING"))
    assert preview.dry_run
    assert preview.count == 3
    assert sorted(t.title for t in preview.tasks) == ["bread", "eggs", "milk"]
    assert preview.confirmation_token
    assert preview.expires_at == "2026-11-23T12:05:00.000000Z"
    assert await _live(service, who) == {"milk", "eggs", "report", "bread"}  # a preview deletes nothing
    done = await service.bulk_delete_tasks(who, _confirm(preview.confirmation_token, category="shopping"))
    assert not done.dry_run
    assert done.deleted_count == 3
    assert await _live(service, who) == {"report"}
    # Replayed: CONFLICT, and nothing else goes (the selection now matches nothing anyway).
    with pytest.raises(Conflict) as err:
        await service.bulk_delete_tasks(who, _confirm(preview.confirmation_token, category="shopping"))
    assert err.value.details["reason"] == "used"
    assert await _live(service, who) == {"report"}


async def test_two_workers_confirming_at_once_delete_once(deps: Deps, clock: Clock) -> None:
    # Two services (as two worker processes would have) share nothing but the database.
    one, two = TaskService(TaskStore(deps.cosmos), clock), TaskService(TaskStore(deps.cosmos), clock)
    who = principal()
    await _seed(one, who)
    preview = await one.bulk_delete_tasks(who, BulkDeleteTasksRequest(status="pending", category="work"))
    outcomes = await asyncio.gather(
        one.bulk_delete_tasks(who, _confirm(preview.confirmation_token, status="pending", category="work")),
        two.bulk_delete_tasks(who, _confirm(preview.confirmation_token, status="pending", category="work")),
        return_exceptions=True,
    )
    wins = [o for o in outcomes if not isinstance(o, BaseException)]
    losses = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(wins) == 1
    assert wins[0].deleted_count == 1
    assert len(losses) == 1
    assert isinstance(losses[0], Conflict)
    assert await _live(one, who) == {"milk", "eggs", "bread"}


@pytest.mark.parametrize("change", ["added", "removed", "edited_out", "edited_in"])
async def test_a_changed_set_deletes_nothing(service: TaskService, change: str) -> None:
    who = principal()
    ids = await _seed(service, who)
    preview = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="shopping"))
    before = await _live(service, who)
    if change == "added":
        await service.create_task(who, CreateTaskRequest(title="butter", category="Shopping"))
        before.add("butter")
    elif change == "removed":
        await service.delete_task(who, TaskIdRequest(task_id=ids["milk"]))
        before.discard("milk")
    elif change == "edited_out":
        await service.update_task(who, UpdateTaskRequest(task_id=ids["eggs"], category="Groceries"))
    else:
        await service.update_task(who, UpdateTaskRequest(task_id=ids["report"], category="shopping"))
    with pytest.raises(Conflict) as err:
        await service.bulk_delete_tasks(who, _confirm(preview.confirmation_token, category="shopping"))
    assert err.value.details["reason"] == "changed"
    assert "preview" in err.value.recovery_suggestions[0].lower()
    assert await _live(service, who) == before


async def test_expired_token_deletes_nothing(service: TaskService, clock: Clock) -> None:
    who = principal()
    await _seed(service, who)
    preview = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="work"))
    clock.now += timedelta(minutes=5, seconds=1)
    with pytest.raises(Conflict) as err:
        await service.bulk_delete_tasks(who, _confirm(preview.confirmation_token, category="work"))
    assert "expired" in err.value.message
    assert "report" in await _live(service, who)


async def test_another_users_token_and_forged_tokens_are_refused(service: TaskService) -> None:
    alice = principal(user="alice")
    mallory = principal(workspace=alice.workspace_id, user="mallory")
    other_alice = principal(user="alice")  # same user id, another workspace
    await _seed(service, alice)
    await _seed(service, mallory)
    await _seed(service, other_alice)
    preview = await service.bulk_delete_tasks(alice, BulkDeleteTasksRequest(category="work"))
    token = preview.confirmation_token
    assert token
    payload, mac = token.split(".")
    forged = [
        "not-a-token",
        f"{payload}.{'A' * len(mac)}",
        f"{payload[:-2]}xx.{mac}",
        f"{payload}.{mac[:-1]}",
        "a" * 512,
        "..",
    ]
    for who in (mallory, other_alice):
        with pytest.raises(ValidationFailed) as err:
            await service.bulk_delete_tasks(who, _confirm(token, category="work"))
        assert err.value.details["errors"][0]["field"] == "confirmation_token"
    for bad in forged:
        with pytest.raises(ValidationFailed):
            await service.bulk_delete_tasks(alice, _confirm(bad, category="work"))
    with pytest.raises(ValidationFailed):  # no token at all
        await service.bulk_delete_tasks(alice, _confirm(None, category="work"))
    with pytest.raises(ValidationFailed) as err:  # the right token with another selection
        await service.bulk_delete_tasks(alice, _confirm(token, category="shopping"))
    assert err.value.details["errors"][0]["field"] == "selection"
    for who in (alice, mallory, other_alice):
        assert await _live(service, who) == {"milk", "eggs", "report", "bread"}
    # After all that the genuine token still works, once.
    done = await service.bulk_delete_tasks(alice, _confirm(token, category="work"))
    assert done.deleted_ids == [preview.tasks[0].id]


async def test_selection_rules(service: TaskService, clock: Clock) -> None:
    who = principal()
    ids = await _seed(service, who)
    with pytest.raises(ValidationFailed):  # no selection at all
        await service.bulk_delete_tasks(who, BulkDeleteTasksRequest())
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[ids["milk"]], new_status="completed"))
    clock.now += timedelta(days=2)
    await service.update_task_status(who, UpdateTaskStatusRequest(task_ids=[ids["eggs"]], new_status="completed"))
    old = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(completed_before="2026-11-24"))
    assert [t.title for t in old.tasks] == ["milk"]
    both = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(task_ids=[ids["milk"], ids["report"], "nope"]))
    assert sorted(t.title for t in both.tasks) == ["milk", "report"]
    narrowed = await service.bulk_delete_tasks(
        who, BulkDeleteTasksRequest(task_ids=[ids["milk"], ids["report"]], status="completed")
    )
    assert [t.title for t in narrowed.tasks] == ["milk"]
    nothing = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="garden"))
    assert nothing.count == 0
    assert nothing.confirmation_token is None


async def test_more_than_500_matches_must_be_narrowed(service: TaskService) -> None:
    who = principal()
    gate = asyncio.Semaphore(20)

    async def one(i: int) -> None:
        async with gate:
            await service.create_task(who, CreateTaskRequest(title=f"t{i}", category="bulk"))

    await asyncio.gather(*(one(i) for i in range(501)))
    with pytest.raises(ValidationFailed) as err:
        await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="bulk"))
    assert "more than 500" in err.value.message
    assert "Narrow" in err.value.recovery_suggestions[0]
    with pytest.raises(AppError):
        await service.bulk_delete_tasks(who, _confirm("x.y", category="bulk"))
    assert (await service.get_all_tasks(who, GetAllTasksRequest(limit=1))).count == 1


async def test_the_pending_confirmation_is_a_ttl_record_in_the_callers_partition(
    service: TaskService, deps: Deps
) -> None:
    from shared.tasks.confirmation import peek_nonce
    from shared.tasks.store import TASKS_CONTAINER, owner_key

    who = principal()
    await _seed(service, who)
    preview = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="work"))
    assert preview.confirmation_token
    nonce = peek_nonce(preview.confirmation_token)
    record = await (await deps.cosmos.container("tasks")).read(f"bulkdel-{nonce}", owner_key(who.workspace_id, "alice"))
    assert record is not None
    assert record["type"] == "bulk_confirmation"
    assert record["ids"] == [preview.tasks[0].id]
    assert record["used"] is False
    assert record["ttl"] > 300
    assert TASKS_CONTAINER.default_ttl == -1


async def test_the_preview_shows_what_a_person_decides_on(service: TaskService) -> None:
    # Issue #27: every previewed task read "(medium priority)": the preview carried no priority or due date.
    who = principal()
    await service.set_preferences(who, SetPreferencesRequest(tz="Europe/Berlin"))
    rent = await service.create_task(
        who, CreateTaskRequest(title="Pay rent", priority="high", due_date="2026-11-28", category="Home")
    )
    taxes = await service.create_task(who, CreateTaskRequest(title="File taxes", priority="low"))
    other = await service.create_task(principal(user="mallory"), CreateTaskRequest(title="Mallory's"))
    preview = await service.bulk_delete_tasks(
        who, BulkDeleteTasksRequest(task_ids=[rent.task.id, taxes.task.id, other.task.id, "no-such-id"])
    )
    assert [t.title for t in preview.tasks] == ["Pay rent", "File taxes"]  # in the order they were named
    first = preview.tasks[0]
    assert (first.priority, first.category, first.due_all_day) == ("high", "Home", True)
    assert first.due_date == "2026-11-28T22:59:59.999999Z"
    assert first.due_date_local == "2026-11-28T23:59:59+01:00"
    assert preview.tasks[1].priority == "low"
    assert preview.tasks[1].due_date_local is None
    assert preview.tz == "Europe/Berlin"
    # Ids that are not the caller's (another user's, unknown) are listed as not matched, not silently dropped.
    assert preview.unmatched_ids == [other.task.id, "no-such-id"]
    assert preview.count == 2


async def test_a_preview_by_filter_is_listed_in_a_stable_order(service: TaskService) -> None:
    who = principal()
    for title in ("b task", "C task", "a task"):
        await service.create_task(who, CreateTaskRequest(title=title, category="x"))
    first = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="x"))
    again = await service.bulk_delete_tasks(who, BulkDeleteTasksRequest(category="x"))
    assert [t.title for t in first.tasks] == ["a task", "b task", "C task"]
    assert [t.title for t in again.tasks] == ["a task", "b task", "C task"]
