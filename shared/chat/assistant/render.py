"""How the assistant's own words show tasks: each with its real priority and its due time in the user's zone.

These lines are what a person reads before saying "yes" to a delete or a held change, on both paths, so
nothing here is invented: a priority the tool did not give is left out (never shown as "medium"), and a
time is shown on the user's wall clock with its zone (`shared.core.local_time`), never as a UTC wall time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from shared.core.local_time import instant, local_text, zone_of

SHOWN = 20


def due_words(value: Any, tz: str | None) -> str:
    """A due_date argument as the user will read it: a day alone is due by its end in the user's zone, a time
    without a zone is the user's wall time, one with a zone is shown in the user's zone."""
    text = str(value).strip()
    if len(text) == 10:
        moment = instant(f"{text}T23:59:59")
        if moment is None:
            return repr(text[:40])
        return local_text(moment.replace(tzinfo=zone_of(tz)), tz, all_day=True)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return repr(text[:40])
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone_of(tz))
    return local_text(parsed, tz)


def task_facts(task: dict[str, Any], tz: str | None) -> str:
    """ "high priority, due Sat 2026-11-28 end of day CET": what the tool gave, nothing more."""
    facts: list[str] = []
    if task.get("priority"):
        facts.append(f"{task['priority']} priority")
    if task.get("due_date"):
        facts.append(f"due {local_text(str(task['due_date']), tz, all_day=bool(task.get('due_all_day')))}")
    return ", ".join(facts)


def task_line(task: dict[str, Any], tz: str | None) -> str:
    """ "Pay rent (high priority, due Sat 2026-11-28 end of day CET)" from a task or a preview item."""
    title, facts = str(task.get("title", "?")), task_facts(task, tz)
    return f"{title} ({facts})" if facts else title


def task_lines(tasks: Sequence[dict[str, Any]], tz: str | None, shown: int = SHOWN, *, numbered: bool = True) -> str:
    """Numbered ("1. ...") or bulleted ("- ...") lines of tasks; "[done]" marks completed ones."""
    lines = [
        (f"{i}. " if numbered else "- ") + task_line(t, tz) + (" [done]" if t.get("status") == "completed" else "")
        for i, t in enumerate(tasks[:shown], 1)
    ]
    if len(tasks) > shown:
        lines.append(f"{'' if numbered else '- '}... and {len(tasks) - shown} more.")
    return "\n".join(lines)


def times_note(tasks: Sequence[dict[str, Any]], tz: str | None) -> str:
    """ " (times in Europe/Berlin)" when a listed task has a time, so the zone of every time is said once."""
    return f" (times in {tz or 'UTC'})" if any(t.get("due_date") for t in tasks) else ""
