"""Issue #27, the task chat: what a person reads before acting is true, on the rule path and the LLM path.

A Berlin user (CET, UTC+1 in November) with a fixed clock: the delete preview shows each task's real
priority and its due date in local time with the zone; the confirmation deletes exactly the previewed
tasks, once, for the user who previewed them; an expired, replayed or foreign confirmation deletes
nothing and says why; list answers, created tasks and held changes show local times; on the LLM path the
model is told the local time and given local times, and code's own lines show priority and local time.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.chat.assistant import AssistantReply, HistoryMessage, respond
from shared.core.llm import LlmClient
from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke
from tests.support.fake_llm import FakeLlm, text, tool_calls
from tests.support.task_tools import tool

BERLIN = "Europe/Berlin"


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 25, 9, 0, tzinfo=UTC))  # Wed 10:00 CET

    def __call__(self) -> datetime:
        return self.now


def ctx_for(deps: Deps, clock: Clock, user: str = "alice", workspace: str | None = None) -> ToolContext:
    p = Principal(workspace_id=workspace or f"ws-trust-{uuid.uuid4().hex[:8]}", user_id=user, source="dev")
    return ToolContext(p, dataclasses.replace(deps, clock=clock), "corr-trust", transport="rest")


async def berlin_user(deps: Deps, clock: Clock, user: str = "alice") -> ToolContext:
    me = ctx_for(deps, clock, user)
    await tool(me, "set_task_preferences", tz=BERLIN)
    return me


async def seed(me: ToolContext) -> dict[str, dict[str, Any]]:
    made = {}
    for key, title, priority, due in (
        ("rent", "Pay rent", "high", "2026-11-28"),
        ("plants", "Buy plants", "low", None),
        ("boiler", "Service the boiler", "medium", "2026-11-26T18:00:00"),
    ):
        args: dict[str, Any] = {"title": title, "priority": priority, "category": "home"}
        if due:
            args["due_date"] = due
        made[key] = (await tool(me, "create_task", **args))["task"]
    made["work"] = (await tool(me, "create_task", title="Write report", priority="high", category="work"))["task"]
    return made


async def live(me: ToolContext) -> set[str]:
    return {t["title"] for t in (await tool(me, "get_all_tasks", status="all"))["tasks"]}


def after(message: str, reply: AssistantReply, history: list[HistoryMessage] | None = None) -> list[HistoryMessage]:
    metadata = {**reply.metadata, "task_ids": reply.task_ids}
    return [
        *(history or []),
        HistoryMessage(role="user", message=message),
        HistoryMessage(role="assistant", message=reply.text, metadata=metadata),
    ]


# ---- the rule path --------------------------------------------------------------------------------


async def test_the_delete_preview_shows_real_priorities_and_local_due_times(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    preview = await respond(me, [], "delete all home tasks", llm=None)
    assert "This would delete 3 task(s)" in preview.text
    assert "Pay rent (high priority, due Sat 2026-11-28 end of day CET)" in preview.text
    assert "Buy plants (low priority)" in preview.text
    assert "Service the boiler (medium priority, due Thu 2026-11-26 18:00 CET)" in preview.text
    assert "22:59" not in preview.text  # the UTC wall time of the rent's end of day
    assert "Write report" not in preview.text
    assert preview.metadata["pending_confirmation"]["count"] == 3


async def test_yes_deletes_exactly_the_previewed_tasks_once(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    t = await seed(me)
    preview = await respond(me, [], "delete all home tasks", llm=None)
    history = after("delete all home tasks", preview)
    done = await respond(me, history, "yes", llm=None)
    assert "Done: I deleted 3 task(s)." in done.text
    assert set(done.task_ids) == {t["rent"]["id"], t["plants"]["id"], t["boiler"]["id"]}
    assert await live(me) == {"Write report"}
    # A second "yes" has nothing to confirm: it says so (not the help text, not a refusal), deletes nothing.
    again = await respond(me, after("yes", done, history), "yes", llm=None)
    assert "nothing waiting for a yes" in again.text
    assert again.tool_calls == []
    # The old preview replayed (its message put back as the last answer): the token was used.
    replayed = await respond(me, history, "yes", llm=None)
    assert "already used" in replayed.text
    assert "Ask me again" in replayed.text
    assert await live(me) == {"Write report"}


async def test_an_expired_preview_deletes_nothing_and_says_so(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    preview = await respond(me, [], "delete all home tasks", llm=None)
    clock.now += timedelta(minutes=6)
    late = await respond(me, after("delete all home tasks", preview), "yes", llm=None)
    assert "expired" in late.text
    assert "Ask me again" in late.text
    assert len(await live(me)) == 4


async def test_a_changed_selection_deletes_nothing(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    preview = await respond(me, [], "delete all home tasks", llm=None)
    await tool(me, "create_task", title="Fix the door", category="home")  # not in the preview
    answer = await respond(me, after("delete all home tasks", preview), "yes", llm=None)
    assert "changed since the preview" in answer.text
    assert len(await live(me)) == 5


async def test_another_users_confirmation_does_nothing(deps: Deps) -> None:
    clock = Clock()
    alice = await berlin_user(deps, clock)
    await seed(alice)
    preview = await respond(alice, [], "delete all home tasks", llm=None)
    # Bob's chat holds Alice's preview (copied metadata: the chat store accepts an assistant message's metadata).
    bob = await berlin_user(deps, clock, user="bob")
    await tool(bob, "create_task", title="Bob's plant", category="home")
    answer = await respond(bob, after("delete all home tasks", preview), "yes", llm=None)
    assert "not a token this server issued to you" in answer.text
    assert "deleted 0" not in answer.text
    assert len(await live(alice)) == 4
    assert await live(bob) == {"Bob's plant"}


async def test_a_preview_too_long_to_read_is_not_offered_for_a_yes(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    for i in range(51):
        await tool(me, "create_task", title=f"Old note {i:02d}", category="notes")
    answer = await respond(me, [], "delete all notes tasks", llm=None)
    assert "51 tasks match" in answer.text
    assert "pending_confirmation" not in answer.metadata
    yes = await respond(me, after("delete all notes tasks", answer), "yes", llm=None)
    assert yes.tool_calls == []
    assert len(await live(me)) == 51


async def test_lists_and_created_tasks_show_local_times_with_the_zone(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    due = await respond(me, [], "what's due this week?", llm=None)
    assert "(times in Europe/Berlin)" in due.text
    assert "Service the boiler (medium priority, due Thu 2026-11-26 18:00 CET)" in due.text
    assert "Pay rent (high priority, due Sat 2026-11-28 end of day CET)" in due.text
    created = await respond(me, [], "add a task to pay the invoice tomorrow at 9am, high priority", llm=None)
    assert 'Created "Pay the invoice" (high priority, due Thu 2026-11-26 09:00 CET).' in created.text


async def test_the_tools_own_text_shows_local_times(deps: Deps) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    assert me.deps.tools is not None
    found = me.deps.tools.get("get_all_tasks")
    assert found is not None
    outcome = await invoke(found, {"category": "home"}, me)
    assert "(times in Europe/Berlin)" in outcome.text
    assert "due Sat 2026-11-28 end of day CET" in outcome.text
    assert "22:59" not in outcome.text


# ---- the LLM path ---------------------------------------------------------------------------------


async def test_the_model_is_told_the_local_time_and_given_local_times(
    deps: Deps, llm: FakeLlm, client: LlmClient
) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    await seed(me)
    llm.script(tool_calls(("get_all_tasks", {"category": "home"})), text("Here they are."))
    await respond(me, [], "show my home tasks", llm=client)
    first, second = llm.requests
    system = first.messages[0]["content"]
    assert "Wed 2026-11-25 10:00 CET (Europe/Berlin)" in system
    data = second.messages[-1]["content"]
    assert '"due_date_local":"2026-11-28T23:59:59+01:00"' in data
    assert '"tz":"Europe/Berlin"' in data


async def test_codes_preview_lines_on_the_llm_path_show_priority_and_local_time(
    deps: Deps, llm: FakeLlm, client: LlmClient
) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    t = await seed(me)
    mallory = ctx_for(deps, clock, user="mallory")
    theirs = (await tool(mallory, "create_task", title="Mallory's task"))["task"]
    llm.script(
        tool_calls(("bulk_delete_tasks", {"task_ids": [t["rent"]["id"], t["plants"]["id"], theirs["id"]]})),
        text("Shall I delete them?"),
    )
    reply = await respond(me, [], "delete the rent and plants tasks", llm=client)
    assert "This would delete 2 task(s) (times in Europe/Berlin):" in reply.text
    assert "- Pay rent (high priority, due Sat 2026-11-28 end of day CET)" in reply.text
    assert "- Buy plants (low priority)" in reply.text
    assert "1 id you gave matches none of your tasks" in reply.text
    assert "Mallory" not in reply.text
    # "yes" deletes exactly those two, and Mallory's task stays.
    llm.script(
        tool_calls(
            (
                "bulk_delete_tasks",
                {
                    "task_ids": [t["rent"]["id"], t["plants"]["id"], theirs["id"]],
                    "require_confirmation": False,
                    "confirmation_token": reply.metadata["pending_confirmation"]["token"],
                },
            )
        ),
        text("Deleted."),
    )
    await respond(me, after("delete the rent and plants tasks", reply), "yes", llm=client)
    assert await live(me) == {"Service the boiler", "Write report"}
    assert await live(mallory) == {"Mallory's task"}


async def test_a_held_reschedule_is_listed_in_local_time(deps: Deps, llm: FakeLlm, client: LlmClient) -> None:
    clock = Clock()
    me = await berlin_user(deps, clock)
    t = await seed(me)
    # The model moves a task the user did not name: held, and listed with the local meaning of its time.
    llm.script(
        tool_calls(("update_task", {"task_id": t["work"]["id"], "due_date": "2026-11-27T17:00:00Z"})),
        text("Moved."),
    )
    reply = await respond(me, [], "move the rent task to friday", llm=client)
    assert "I held back 1 change(s)" in reply.text
    assert "due date to Fri 2026-11-27 18:00 CET" in reply.text


async def test_what_is_due_on_after_or_before_a_day_in_words(deps: Deps) -> None:
    clock = Clock()  # Wednesday 25 November, 10:00 in Berlin
    me = await berlin_user(deps, clock)
    for title, due in (
        ("Thursday thing", "2026-11-26"),
        ("Friday thing", "2026-11-27T09:00:00"),
        ("Next week thing", "2026-12-02"),
    ):
        await tool(me, "create_task", title=title, due_date=due)
    on_friday = await respond(me, [], "what's due on friday?", llm=None)
    assert "You have 1 task(s) due on Fri 2026-11-27 (times in Europe/Berlin)" in on_friday.text
    assert "Friday thing (medium priority, due Fri 2026-11-27 09:00 CET)" in on_friday.text
    after = await respond(me, [], "what's due after friday?", llm=None)  # an open-ended custom range
    assert "Next week thing" in after.text
    assert "Friday thing" not in after.text
    before = await respond(me, [], "anything due before friday?", llm=None)
    assert "due by Thu 2026-11-26" in before.text
    assert "Thursday thing" in before.text
    assert "Friday thing" not in before.text
    call = before.tool_calls[-1]
    assert call.arguments == {"date_type": "due_date", "date_range": "custom", "custom_end": "2026-11-26"}
