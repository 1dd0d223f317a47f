"""The date-phrase table (tests/fixtures/chat/date_phrases.json) end to end on the rule path: each message sent
to the assistant by a user in its zone at its instant creates a task whose stored title and due date (read back
in the user's zone, `due_date_local`) are the table's; the answer shows that local time with its zone."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from shared.chat.assistant import respond
from shared.core.local_time import local_text
from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from tests.support.task_tools import tool

TABLE = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "date_phrases.json"


def expected_local(due: str) -> str:
    """The table's due as due_date_local reads: a day alone is due at its last second."""
    return f"{due}T23:59:59" if len(due) == 10 else f"{due[:16]}:00{due[16:]}"


def fixed(now: datetime) -> Callable[[], datetime]:
    return lambda: now


async def test_every_phrase_creates_the_task_the_table_expects(deps: Deps) -> None:
    rows = json.loads(TABLE.read_text())["rows"]
    wrong: list[tuple[str, str, object, object]] = []
    for row in rows:
        now = datetime.fromisoformat(row["now"])
        principal = Principal(workspace_id=f"ws-when-{uuid.uuid4().hex[:8]}", user_id="alice", source="dev")
        me = ToolContext(principal, dataclasses.replace(deps, clock=fixed(now)), "corr-when", transport="rest")
        if row["tz"] != "UTC":
            await tool(me, "set_task_preferences", tz=row["tz"])
        reply = await respond(me, [], row["message"], llm=None)
        made = (await tool(me, "get_all_tasks"))["tasks"]
        if len(made) != 1:
            wrong.append((row["tz"], row["message"], "tasks made", len(made)))
            continue
        task = made[0]
        if task["title"] != row["title"]:
            wrong.append((row["tz"], row["message"], row["title"], task["title"]))
        local = task["due_date_local"]
        want = expected_local(row["due"]) if row["due"] else None
        if want is None and local is not None:
            wrong.append((row["tz"], row["message"], None, local))
        elif want is not None and (local is None or not local.startswith(want[:19]) or not local.endswith(want[19:])):
            wrong.append((row["tz"], row["message"], want, local))
        elif (
            want is not None and local_text(task["due_date"], row["tz"], all_day=task["due_all_day"]) not in reply.text
        ):
            wrong.append((row["tz"], row["message"], "answer shows the local time", reply.text))
    print(f"\n{len(rows)} phrases, {len(wrong)} wrong")
    assert wrong == []
