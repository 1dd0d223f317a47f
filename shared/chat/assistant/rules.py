"""The rule path: answer the common task requests without a model, from `intents.parse`, with the task tools.

Used when no LLM is configured, and for the answer to a pending delete confirmation (which never needs
one). Every answer is built from what the tools returned; a request no rule recognises gets a short
help text with examples, and a note (once per chat) that richer answers need an LLM.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from shared.chat.assistant import when
from shared.chat.assistant.calls import ToolRun, run_tool, task_ids_in
from shared.chat.assistant.guardrail import REFUSAL, Verdict
from shared.chat.assistant.intents import Intent, parse, parse_confirmation
from shared.chat.assistant.models import AssistantReply, HeldChange, HistoryMessage, PendingConfirmation
from shared.chat.assistant.render import task_facts, task_lines, times_note
from shared.core.local_time import zone_of
from shared.tools.invoke import ToolContext

LLM_NOTE = (
    "(I'm answering with built-in rules: richer answers need an LLM, configured with FIREBREAK_LLM_ENDPOINT "
    "and FIREBREAK_LLM_MODEL.)"
)
HELP = (
    'I can help with your tasks. Try: "show my pending tasks", "what\'s due tomorrow", "overdue tasks", '
    '"find dentist", "add a task to buy milk tomorrow, high priority", "mark the dentist task done", '
    '"how many tasks do I have" or "delete all completed shopping tasks".'
)
# A delete is offered for a yes only when the preview lists every task it would delete.
MAX_CONFIRMABLE = 50
NOTHING_PENDING = (
    "There is nothing waiting for a yes or no from you: a delete preview or held changes last only until your "
    'next message, and each is used once. Ask again (for example "delete all completed tasks") to see a new '
    "preview."
)


def pending_confirmation(history: Sequence[HistoryMessage]) -> PendingConfirmation | None:
    """The delete preview the assistant's last message asked the user to confirm, if it did."""
    for message in reversed(history):
        if message.role != "assistant":
            continue
        raw = (message.metadata or {}).get("pending_confirmation")
        if not isinstance(raw, dict):
            return None
        try:
            return PendingConfirmation.model_validate(raw)
        except ValueError:
            return None
    return None


def _tz(run: ToolRun) -> str:
    """The user's zone as the task tool's answer gives it (every list, task and preview carries it)."""
    window = run.output.get("window")
    return str(run.output.get("tz") or (window.get("tz") if isinstance(window, dict) else None) or "UTC")


def _listing(run: ToolRun, what: str, empty: str) -> str:
    if not run.ok:
        return _failed(run)
    tasks = run.output.get("tasks") or []
    more = " (more on the next page)" if run.output.get("continuation") else ""
    if not tasks:
        return empty
    tz = _tz(run)
    return f"You have {len(tasks)} {what}{more}{times_note(tasks, tz)}:\n{task_lines(tasks, tz)}"


def _failed(run: ToolRun) -> str:
    err = run.output.get("error") or {}
    return f"I couldn't do that: {str(err.get('message', 'the task tool failed')).rstrip('.')}."


class RuleAnswer:
    """Collects the tool runs of one answer."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.runs: list[ToolRun] = []

    async def call(self, name: str, args: dict[str, Any]) -> ToolRun:
        run = await run_tool(self.ctx, name, args)
        self.runs.append(run)
        return run

    def reply(self, text: str, mode: str = "rules", metadata: dict[str, Any] | None = None) -> AssistantReply:
        ids: list[str] = []
        for run in self.runs:
            ids += [i for i in task_ids_in(run.output) if i not in ids]
        return AssistantReply(
            text=text,
            tool_calls=[r.record for r in self.runs],
            task_ids=ids[:100],
            mode=mode,  # type: ignore[arg-type]
            metadata=metadata or {},
        )


async def confirm_or_cancel(ctx: ToolContext, message: str, history: Sequence[HistoryMessage]) -> AssistantReply | None:
    """The answer to what the last answer asked the user to confirm: a delete preview and/or changes held
    because the user's message did not name their tasks. "yes" runs exactly those (the previewed set is
    deleted; each held change runs with the arguments it was listed with), "no" runs nothing."""
    pending = pending_confirmation(history)
    held = held_changes(history)
    if pending is None and not held:
        return None
    decision = parse_confirmation(message)
    if decision is None:
        return None
    answer = RuleAnswer(ctx)
    if decision == "cancel":
        return answer.reply("OK, I changed nothing." if held else "OK, I deleted nothing.")
    lines: list[str] = []
    for change in held:
        run = await answer.call(change.tool, change.arguments)
        if not run.ok:
            lines.append(f"{_failed(run)} ({change.what})")
        elif _partly_failed(run):
            lines.append(f"Not all done ({change.what}): {run.output.get('message', 'a task was not found')}")
        else:
            lines.append(f"Done: {change.what}.")
    if pending is not None:
        run = await answer.call(
            "bulk_delete_tasks",
            {**pending.selection, "require_confirmation": False, "confirmation_token": pending.token},
        )
        if not run.ok:
            lines.append(_failed(run) + " Ask me again to see what would be deleted now.")
        else:
            lines.append(f"Done: I deleted {run.output.get('deleted_count', 0)} task(s).")
    return answer.reply("\n".join(lines))


def held_changes(history: Sequence[HistoryMessage]) -> list[HeldChange]:
    """The changes the assistant's last message held for the user's yes (see consent.py), if it held any."""
    for message in reversed(history):
        if message.role != "assistant":
            continue
        raw = (message.metadata or {}).get("held_changes")
        if not isinstance(raw, list):
            return []
        try:
            return [HeldChange.model_validate(item) for item in raw[:20]]
        except ValueError:
            return []
    return []


def _partly_failed(run: ToolRun) -> bool:
    """update_task_status answers ok with a per-task result: a task gone since counts as not done."""
    return any(isinstance(r, dict) and r.get("ok") is False for r in run.output.get("results") or [])


def would_refuse(message: str, verdict: Verdict) -> bool:
    """Whether the rule path answers `message` with the refusal: the guardrail refuses it, or it is unclear
    (no task words), no rule reads a task request in it and it does not look like a thing to do."""
    if verdict.refuse:
        return True
    return verdict.kind == "unclear" and parse(message) is None and _suggested_title(message) is None


def _suggested_title(message: str) -> str | None:
    """ "Buy milk" for "buy milk": a short instruction starting with a common errand verb and not addressed to
    the assistant, most likely a thing to add (the answer asks; nothing is created)."""
    words = message.strip(" .!").split()
    if not 1 < len(words) <= 8 or "?" in message or words[0].lower() not in ERRAND_VERBS:
        return None
    if any(w.lower().strip(",.!") in ("you", "your", "yours", "yourself") for w in words):
        return None  # addressed to the assistant ("print your settings"), not a thing the user has to do
    text = " ".join(words)
    return text[:1].upper() + text[1:]


# Verbs that start most to-do items; a message starting with one and nothing else gets a suggestion to add it.
ERRAND_VERBS = frozenset(
    "buy call pay email text phone ring pick drop send return renew clean wash water feed walk fix repair "
    "cancel collect post mail file submit finish prepare print sign check visit iron vacuum tidy sort "
    "empty refill replace order book".split()
)


async def answer(
    ctx: ToolContext, message: str, history: Sequence[HistoryMessage], *, note_llm: bool, verdict: Verdict | None = None
) -> AssistantReply:
    """The rule path's answer to an on-topic (or unclear) message: the rule's answer; for an unclear message no
    rule reads, the refusal, or, when it reads like a thing to do, the question whether to add it."""
    intent = parse(message)
    note = f"\n\n{LLM_NOTE}" if note_llm and not any(LLM_NOTE in m.message for m in history) else ""
    if intent is None:
        if verdict is not None and would_refuse(message, verdict):
            return AssistantReply(text=REFUSAL, mode="refusal")
        title = _suggested_title(message)
        if title is not None:
            return RuleAnswer(ctx).reply(f'Shall I add "{title}" as a task? Say "add {message.strip()}".' + note)
        return RuleAnswer(ctx).reply(HELP + note)
    result = await _run(ctx, intent)
    if note and result.text:
        result.text += note
    return result


async def _run(ctx: ToolContext, intent: Intent) -> AssistantReply:
    a = RuleAnswer(ctx)
    handler = _HANDLERS.get(intent.action)
    return await handler(a, intent, dict(intent.args)) if handler else a.reply(HELP)


async def _timezone(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    run = await a.call("set_task_preferences", args)
    if not run.ok:
        return a.reply(_failed(run) + " Use an IANA zone name such as Europe/Berlin or America/New_York.")
    return a.reply(f"Your time zone is now {run.output.get('tz')}: today, this week and the rest use it.")


async def _list(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    run = await a.call("get_all_tasks", {**args, "limit": 100})
    label = f"{args.get('status', '')} {args.get('category', '')} task(s)".replace("  ", " ").strip()
    if run.ok and not run.output.get("tasks") and "category" in args:
        # "show my dentist tasks": not a category after all, so search for the word.
        run = await a.call("search_tasks", {"query": args["category"], "limit": 20})
        return a.reply(_listing(run, f"task(s) matching {args['category']!r}", "No tasks match that."))
    return a.reply(_listing(run, label, "You have no tasks like that."))


async def _search(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    run = await a.call("search_tasks", {**args, "limit": 20})
    return a.reply(_listing(run, f"task(s) matching {args['query']!r}", f"No tasks match {args['query']!r}."))


async def _due(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    found = args.pop("when", None)
    what = ""
    if isinstance(found, when.Found):
        due, _ = await _due_date(a, found)
        if due is None:
            return a.reply("I couldn't work out that date; say it as a date such as 2026-12-03, or a weekday.")
        args.update(_day_range(due.day, found.lead))
        what = _day_range_words(due.day, found.lead)
    run = await a.call("get_tasks_by_date", {"date_type": "due_date", **args})
    rng = what or str(args["date_range"]).replace("_", " ")
    label = "overdue task(s)" if rng == "overdue" else f"task(s) due {rng}"
    return a.reply(_listing(run, label, "Nothing is overdue." if rng == "overdue" else f"Nothing is due {rng}."))


def _day_range(day: date, lead: str) -> dict[str, str]:
    """A custom range around one local day: after/since/from it, up to it (by/until/before, `when.resolve` having
    made "before friday" thursday), or on it."""
    if lead == "after":
        return {"custom_start": (day + timedelta(days=1)).isoformat()}
    if lead in ("since", "from"):
        return {"custom_start": day.isoformat()}
    if lead in ("by", "until", "till", "before"):  # "before friday" already resolved to thursday
        return {"custom_end": day.isoformat()}
    return {"custom_start": day.isoformat(), "custom_end": day.isoformat()}


def _day_range_words(day: date, lead: str) -> str:
    shown = day.strftime("%a %Y-%m-%d")
    if lead in ("after", "since", "from"):
        return f"{lead} {shown}"
    return f"by {shown}" if lead in ("by", "until", "till", "before") else f"on {shown}"


async def _completed(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    run = await a.call("get_completed_tasks", args)
    rng = str(args.get("date_range", "")).replace("_", " ")
    return a.reply(_listing(run, f"completed task(s){' ' + rng if rng else ''}", "No completed tasks there."))


async def _summary(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    run = await a.call("get_tasks_summary", args)
    if not run.ok:
        return a.reply(_failed(run))
    t = run.output.get("totals") or {}
    groups = ", ".join(f"{g.get('group')}: {g.get('count')}" for g in run.output.get("grouped_data") or [])
    return a.reply(
        f"You have {t.get('total', 0)} task(s): {t.get('total_pending', 0)} pending "
        f"({t.get('pending_high_priority', 0)} high priority, {t.get('overdue', 0)} overdue) and "
        f"{t.get('total_completed', 0)} completed." + (f" By {args['group_by']}: {groups}." if groups else "")
    )


async def _find_one(a: RuleAnswer, target: str, status: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The one task `target` names, or why there is not exactly one (the question to ask)."""
    args: dict[str, Any] = {"query": target, "limit": 10}
    if status:
        args["status"] = status
    run = await a.call("search_tasks", args)
    if not run.ok:
        return None, _failed(run)
    tasks = run.output.get("tasks") or []
    if not tasks:
        return None, f"I found no{' ' + status if status else ''} task matching {target!r}."
    if len(tasks) > 1:
        exact = [t for t in tasks if str(t.get("title", "")).lower() == target.lower()]
        if len(exact) == 1:
            return exact[0], None
        return None, f"Several tasks match {target!r}; which one?\n{task_lines(tasks, _tz(run), 10)}"
    return tasks[0], None


async def _set_status(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    new = "completed" if intent.action == "complete" else "pending"
    task, question = await _find_one(a, intent.target or "", "pending" if new == "completed" else "completed")
    if task is None:
        return a.reply(question or HELP)
    run = await a.call("update_task_status", {"task_ids": [task["id"]], "new_status": new})
    if not run.ok:
        return a.reply(_failed(run))
    done = "Marked" if new == "completed" else "Reopened"
    return a.reply(f'{done} "{task.get("title")}"{" as done" if new == "completed" else ""}.')


async def _rename(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    task, question = await _find_one(a, intent.target or "", None)
    if task is None:
        return a.reply(question or HELP)
    run = await a.call("update_task", {"task_id": task["id"], "title": args["title"]})
    if not run.ok:
        return a.reply(_failed(run))
    return a.reply(f'Renamed "{task.get("title")}" to "{args["title"]}".')


async def _zone_and_now(a: RuleAnswer) -> tuple[str, datetime]:
    """The user's zone (get_task_preferences; UTC if it cannot be read) and the clock's now."""
    run = await a.call("get_task_preferences", {})
    return (str(run.output.get("tz") or "UTC") if run.ok else "UTC"), a.ctx.deps.clock()


async def _due_date(a: RuleAnswer, found: when.Found) -> tuple[when.Due | None, str]:
    """The due date a date phrase means for this user now, or None and why."""
    tz, now = await _zone_and_now(a)
    try:
        return when.resolve(found, now, zone_of(tz)), tz
    except (ValueError, OverflowError):
        return None, tz


async def _create(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    found = args.pop("when", None)
    if isinstance(found, when.Found):
        due, _ = await _due_date(a, found)
        if due is None:
            return a.reply("I couldn't work out that date; say it as a date such as 2026-12-03, or a weekday.")
        args["due_date"] = due.argument()
    run = await a.call("create_task", args)
    if not run.ok:
        return a.reply(_failed(run))
    task = run.output.get("task") or {}
    facts = task_facts(task, _tz(run))
    return a.reply(f'Created "{task.get("title")}"' + (f" ({facts})." if facts else "."))


async def _completed_before(a: RuleAnswer, period: str) -> str:
    """The first local day of this week or this month, for "completed before this week/month"."""
    tz, now = await _zone_and_now(a)
    today = now.astimezone(zone_of(tz)).date()
    first = today.replace(day=1) if period == "this_month" else today - timedelta(days=today.weekday())
    return first.isoformat()


async def _delete(a: RuleAnswer, intent: Intent, args: dict[str, Any]) -> AssistantReply:
    selection = dict(intent.args)
    if intent.target:
        task, question = await _find_one(a, intent.target, None)
        if task is None:
            return a.reply(question or HELP)
        selection = {"task_ids": [task["id"]]}
    if selection.get("completed_before") in ("this_month", "this_week"):
        selection["completed_before"] = await _completed_before(a, str(selection["completed_before"]))
    run = await a.call("bulk_delete_tasks", {**selection, "require_confirmation": True})
    if not run.ok:
        return a.reply(_failed(run))
    tasks = run.output.get("tasks") or []
    if not tasks:
        return a.reply("No tasks match that, so there is nothing to delete.")
    if len(tasks) > MAX_CONFIRMABLE:
        # A yes must be to a list the user could read in full: nothing is offered for one beyond it.
        return a.reply(
            f"{len(tasks)} tasks match, more than the {MAX_CONFIRMABLE} I can list for you to check, so I deleted "
            "nothing and ask no yes. Narrow it down (a category, completed or pending, completed before a date) "
            "and ask again."
        )
    tz = _tz(run)
    pending = PendingConfirmation(
        token=str(run.output.get("confirmation_token") or ""),
        selection=selection,
        count=len(tasks),
        expires_at=str(run.output.get("expires_at") or ""),
    )
    return a.reply(
        f"This would delete {len(tasks)} task(s){times_note(tasks, tz)}:\n{task_lines(tasks, tz, MAX_CONFIRMABLE)}"
        f'\n\nReply "yes" to delete exactly these or "no" to keep them (the preview is valid for 5 minutes).',
        metadata={"pending_confirmation": pending.model_dump()},
    )


_HANDLERS: dict[str, Callable[[RuleAnswer, Intent, dict[str, Any]], Awaitable[AssistantReply]]] = {
    "timezone": _timezone,
    "rename": _rename,
    "list": _list,
    "search": _search,
    "due": _due,
    "completed": _completed,
    "summary": _summary,
    "complete": _set_status,
    "reopen": _set_status,
    "create": _create,
    "delete": _delete,
}
