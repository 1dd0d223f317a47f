"""The rule path's date phrases (tests/fixtures/chat/date_phrases.json: 79 task requests, each with the user's
zone and the instant it is said, several on the eve of a DST change): the title without the phrase, and the
due date in the user's zone, as written in the table before the parser was."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from shared.chat.assistant.intents import parse
from shared.chat.assistant.when import resolve

TABLE = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "date_phrases.json"
ROWS: list[dict[str, str | None]] = json.loads(TABLE.read_text())["rows"]


def shown(due_local: datetime, all_day: bool) -> str:
    """The table's form: a day alone, or the local time with its offset."""
    return due_local.date().isoformat() if all_day else due_local.isoformat(timespec="minutes")


def test_the_table_is_large_and_crosses_dst_changes() -> None:
    assert len(ROWS) >= 60
    assert len({r["tz"] for r in ROWS}) >= 7
    assert sum("clocks go" in str(r["now_local"]) for r in ROWS) >= 20


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['tz']}:{r['message']}" for r in ROWS])
def test_phrase(row: dict[str, str | None]) -> None:
    intent = parse(str(row["message"]))
    assert intent is not None
    assert intent.action == "create"
    assert intent.args["title"] == row["title"]
    when = intent.args.get("when")
    if row["due"] is None:
        assert when is None
        return
    assert when is not None
    now = datetime.fromisoformat(str(row["now"]))
    due = resolve(when, now, ZoneInfo(str(row["tz"])))
    assert shown(due.local, due.all_day) == row["due"]


def test_before_a_day_means_by_the_end_of_the_day_before() -> None:
    now = datetime.fromisoformat("2026-11-25T09:00:00Z")  # Wednesday in Berlin
    intent = parse("add submit expenses before friday")
    assert intent is not None
    assert intent.args["title"] == "Submit expenses"
    due = resolve(intent.args["when"], now, ZoneInfo("Europe/Berlin"))
    assert shown(due.local, due.all_day) == "2026-11-26"
    at_five = parse("add call the bank before 5pm")
    assert at_five is not None
    due = resolve(at_five.args["when"], now, ZoneInfo("Europe/Berlin"))
    assert shown(due.local, due.all_day) == "2026-11-25T17:00+01:00"
