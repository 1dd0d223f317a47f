"""The rule-based intent parser: the common task requests, in the user's words, as a plan of one tool call.

Pure (no I/O): `parse(message)` returns what the user asked for, or None. The rule path of the
assistant runs these plans when no LLM is configured (and for confirmations, which never need one).
Phrases covered: list ("show my pending tasks", "what tasks do I have"), search ("find grocery tasks",
"tasks mentioning John"), due ("what's due tomorrow", "tasks due this week", "overdue tasks"),
completed ("what did I finish today"), summary ("how many tasks do I have", "summary by category"),
complete / reopen ("mark the dentist task done", "reopen the report task"), create ("add a task to buy
milk tomorrow, high priority"), delete ("delete all completed shopping tasks", "delete the dentist task"),
and the answer to a pending confirmation ("yes" / "no").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from shared.chat.assistant import when
from shared.chat.assistant.guardrail import NOT_A_VERB

Action = Literal[
    "timezone",
    "rename",
    "list",
    "search",
    "due",
    "completed",
    "summary",
    "complete",
    "reopen",
    "create",
    "delete",
    "confirm",
    "cancel",
]


@dataclass(frozen=True)
class Intent:
    action: Action
    args: dict[str, Any] = field(default_factory=dict)
    # For complete/reopen/delete of one task named in words: the words to find it by.
    target: str | None = None


# A yes is the whole message, made only of yes words ("yes", "ok, go ahead", "yes please, do it"): a message that
# merely starts with one ("ok, now add bread", "yes but only the rent one") is a new request or a qualified
# answer, and must not run a delete preview or changes held for a yes (consent.py) that it did not confirm.
_YES_WORD = (
    r"(?:yes|yep|yeah|y|ok|okay|sure|confirm(?:ed)?|do it|go ahead|please do|please|"
    r"delete (?:them|it)(?: all)?|proceed)"
)
_YES = re.compile(rf"^(?!please\b){_YES_WORD}(?:[\s,!.]+{_YES_WORD})*$")
_NO = re.compile(r"^(no|nope|n|cancel|stop|don'?t|do not|never ?mind|keep (them|it))\b")

_RANGES = {
    "today": "today",
    "tonight": "today",
    "tomorrow": "tomorrow",
    "yesterday": "yesterday",
    "this week": "this_week",
    "next week": "next_week",
    "last week": "last_week",
    "this month": "this_month",
}
_RANGE = re.compile(r"\b(today|tonight|tomorrow|yesterday|this week|next week|last week|this month)\b")
_PRIORITY = re.compile(r"\b(high|medium|low)[- ]priority\b|\b(urgent|important|asap)\b")
_STATUS = re.compile(r"\b(pending|open|outstanding|unfinished|incomplete|completed|finished|done)\b")
_STOP = {
    "my", "the", "a", "an", "all", "tasks", "task", "todo", "todos", "to-do", "to-dos", "items", "item", "of",
    "me", "show", "list", "for", "with", "about", "please", "i", "have", "do", "that", "are", "is", "any",
}  # fmt: skip
_CATEGORY_WORDS = re.compile(
    r"\b(?:in|under|category|for)\s+(?:the\s+)?([a-z][a-z0-9 _-]{1,30}?)\s*(?:category|list)?$"
)
_TAGS = re.compile(r"#([a-z0-9][a-z0-9_-]{0,39})")


_NOT_CATEGORIES = {
    "pending", "open", "completed", "finished", "done", "high", "medium", "low", "outstanding", "unfinished",
    "incomplete", "priority", "current", "remaining", "new", "old", "other", "these", "those", "what", "which",
    "how", "many", "your", "our", "some", "today's", "upcoming", "latest", "recent",
}  # fmt: skip


def _norm(message: str) -> str:
    text = " ".join(message.lower().replace("\u2019", "'").split())
    return text.rstrip("?!. ")


def _range(text: str) -> str | None:
    found = _RANGE.search(text)
    return _RANGES[found.group(1)] if found else None


def _status(text: str) -> str | None:
    found = _STATUS.search(text)
    if not found:
        return None
    return "completed" if found.group(1) in ("completed", "finished", "done") else "pending"


def _words(text: str) -> str:
    return " ".join(w for w in re.findall(r"[a-z0-9][a-z0-9'_-]*", text) if w not in _STOP).strip()


def parse_confirmation(message: str) -> Literal["confirm", "cancel"] | None:
    text = _norm(message)
    if _YES.match(text):
        return "confirm"
    if _NO.match(text):
        return "cancel"
    return None


def parse(message: str) -> Intent | None:
    """The intent of one message, or None when no rule recognises it."""
    text = _norm(message)
    for parser in (
        _timezone,
        _rename,
        _delete,
        _complete,
        _create,
        _completed,
        _due,
        _summary,
        _search,
        _list,
        _dated_to_do,
    ):
        intent = parser(text)
        if intent is not None:
            return _with_case(intent, message)
    return None


def _with_case(intent: Intent, message: str) -> Intent:
    """A title as the user wrote it ("Write Q4 report", "Call Anna"), not as the lower-cased text the rules
    read: each word takes the spelling it has in the message (words cut out of the middle, such as a date
    phrase, do not stop this)."""
    title = intent.args.get("title")
    if not isinstance(title, str):
        return intent
    written: dict[str, str] = {}
    for word in re.findall(r"\S+", message):
        written.setdefault(word.lower().replace("\u2019", "'"), word)
    words = [written.get(w, w) for w in title.split(" ")]
    cased = " ".join(words)
    return Intent(intent.action, {**intent.args, "title": cased[:1].upper() + cased[1:]}, intent.target)


def _timezone(text: str) -> Intent | None:
    m = re.search(r"\btime ?zone (?:to |is |as )?([a-z]+(?:/[a-z0-9_+-]+){1,2}|utc)\b", text)
    if m:
        return Intent("timezone", {"tz": _zones().get(m.group(1), m.group(1))})
    return None


@lru_cache(maxsize=1)
def _zones() -> dict[str, str]:
    """IANA zone names by their lower-case spelling (users type "europe/berlin")."""
    from zoneinfo import available_timezones

    return {z.lower(): z for z in available_timezones()}


def _rename(text: str) -> Intent | None:
    m = re.match(
        r"^(?:please )?(?:rename|retitle|change)\s+(?:the\s+)?(.+?)\s+(?:task\s+)?(?:to|into|as)\s+(.+)$", text
    )
    if not m:
        return None
    target = _words(re.sub(r"\b(task|todo|item|title|name|of)\b", " ", m.group(1)))
    title = m.group(2).strip(" \"'")
    if not target or not title:
        return None
    return Intent("rename", {"title": title[:1].upper() + title[1:]}, target=target)


def _delete(text: str) -> Intent | None:
    m = re.match(r"^(?:please )?(?:delete|remove|erase|clear|get rid of)\s+(.*)$", text)
    if not m:
        return None
    rest = m.group(1)
    args: dict[str, Any] = {}
    bulk = bool(re.search(r"\b(all|every|everything)\b|\btasks\b", rest))
    status = _status(rest)
    if status:
        args["status"] = status
    when = re.search(r"\bcompleted (?:before|last) (month|week)\b", rest)
    if when:
        args["status"] = "completed"
        args["completed_before"] = "this_month" if when.group(1) == "month" else "this_week"
    if bulk:
        words = _words(
            re.sub(r"\b(completed|finished|done|pending|open|before|last|month|week|every|everything)\b", " ", rest)
        )
        if words:
            args["category"] = words.split()[0] if len(words.split()) == 1 else words
        if not args:
            return None  # "delete all tasks" with nothing to select by: ask the model or the user
        return Intent("delete", args)
    target = _words(re.sub(r"\b(task|todo|item)\b", " ", rest))
    return Intent("delete", {}, target=target) if target else None


def _complete(text: str) -> Intent | None:
    patterns = (
        (r"^(?:please )?(?:mark|set|flag)\s+(.+?)\s+(?:as\s+)?(?:done|complete|completed|finished)$", "complete"),
        (r"^(?:please )?(?:complete|finish|tick off|check off|close)\s+(.+)$", "complete"),
        (r"^i (?:just |have )?(?:finished|completed|did)\s+(.+)$", "complete"),
        (r"^i'?m (?:done|finished) with\s+(.+)$", "complete"),
        (r"^(?:please )?(?:mark|set)\s+(.+?)\s+(?:as\s+)?(?:not done|pending|open|incomplete)$", "reopen"),
        (r"^(?:please )?(?:reopen|re-open|undo|uncomplete)\s+(.+)$", "reopen"),
    )
    for pattern, action in patterns:
        m = re.match(pattern, text)
        if m:
            target = _words(re.sub(r"\b(task|todo|item|one)\b", " ", m.group(1)))
            if target:
                return Intent(action, {}, target=target)  # type: ignore[arg-type]
    return None


# "make" adds only a task, a to-do or a reminder ("make a to-do to ..."); "make a playlist" is not a task request.
_CREATE = re.compile(
    r"^(?:please )?(?:add|create|make(?= (?:a |an )?(?:new )?(?:task|todo|to-do|reminder)\b)|new|schedule|note|remember"
    r"|jot down)\s+(?:a\s+)?(?:an\s+)?(?:new\s+)?"
    r"(?:task|todo|to-do|reminder)?\s*"
    r"(?:to\s+|:\s*|called\s+|named\s+)?(.+)$"
)
_REMIND = re.compile(r"^(?:please )?remind me to\s+(.+)$")


def _create(text: str) -> Intent | None:
    """A new task: its title without the words that set its priority, tags, category or due date.

    The date phrase is found on the whole message ("remind me tomorrow to call Anna") and kept as
    `when`, resolved in the user's zone by the rules (`when.resolve`); priority and tags go first, so a
    trailing ", high priority" does not hide a date at the end of the message.
    """
    args: dict[str, Any] = {}
    prio = _PRIORITY.search(text)
    if prio:
        args["priority"] = prio.group(1) or "high"
        text = " ".join(_PRIORITY.sub(" ", text).split()).strip(" ,")
    tags = _TAGS.findall(text)
    if tags:
        args["tags"] = tags
        text = " ".join(_TAGS.sub(" ", text).split())
    found = when.find(text)
    rest_of = found.cut(text) if found else text
    m = _CREATE.match(rest_of) or _REMIND.match(rest_of)
    if not m:
        return None
    rest = m.group(1)
    if found:
        args["when"] = found
    cat = re.search(r"\b(?:in|under|to)\s+(?:my\s+|the\s+)?([a-z][a-z0-9_-]{1,30})\s+(?:list|category)\b", rest)
    if cat:
        args["category"] = cat.group(1)
        rest = rest[: cat.start()] + rest[cat.end() :]
    rest = re.sub(r"\bto my (tasks|list|to-?do list)\b", " ", rest)
    title = " ".join(rest.replace(",", " ").split()).strip(" -:'\"")
    if not title:
        return None
    args["title"] = title[:1].upper() + title[1:]
    return Intent("create", args)


def _completed(text: str) -> Intent | None:
    listed = re.search(r"\b(?:completed|finished|done) (?:([a-z][a-z0-9_-]{1,30}) )?tasks\b", text)
    if (
        re.search(
            r"\bwhat (?:did |have )?i (?:do|done|did|complete|completed|finish|finished|get done|got done)\b", text
        )
        or listed
        or (re.search(r"\btasks (?:i )?(?:completed|finished)\b", text))
    ):
        args: dict[str, Any] = {}
        rng = _range(text)
        if rng in ("today", "yesterday", "this_week", "last_week", "this_month"):
            args["date_range"] = rng
        if listed and listed.group(1) and listed.group(1) not in _STOP | _NOT_CATEGORIES:
            args["category"] = listed.group(1)
        return Intent("completed", args)
    return None


def _due(text: str) -> Intent | None:
    """What is due: overdue, a named range (today, this week, ...), or a day in words ("on friday", "by the end of
    the month", "after december 3"), kept as `when` for the rules to turn into a custom range in the user's zone."""
    if re.search(r"\boverdue\b|\blate\b|\bpast due\b|\bmissed\b", text):
        return Intent("due", {"date_range": "overdue"})
    asks = re.search(r"\bdue\b|\bdeadlines?\b|\bon my plate\b|\bwhat do i have\b|\bagenda\b|\bgoing on\b", text)
    named = _range(text)
    found = when.find(text)
    dated = found if found is not None and found.day is not None else None
    if not asks and not (re.search(r"\btasks?\b", text) and (named or dated)):
        return None
    if named in ("yesterday", "last_week"):
        return None
    if named in ("today", "tomorrow", "this_week", "next_week", "this_month"):
        return Intent("due", {"date_range": named})
    if dated is not None:
        return Intent("due", {"date_range": "custom", "when": dated})
    return Intent("due", {"date_range": "today"}) if asks else None


def _summary(text: str) -> Intent | None:
    if re.search(r"\bhow many\b|\bsummary\b|\bsummari[sz]e\b|\bstatistics\b|\bstats\b|\bworkload\b|\boverview\b", text):
        group = re.search(r"\bby (status|category|priority|date)\b", text)
        return Intent("summary", {"group_by": group.group(1) if group else "status"})
    return None


def _search(text: str) -> Intent | None:
    m = re.match(r"^(?:please )?(?:find|search(?: for)?|look for|look up)\s+(.+)$", text) or re.search(
        r"\btasks? (?:mentioning|about|with|containing|related to)\s+(.+)$", text
    )
    if not m:
        return None
    query = _words(m.group(1))
    if not query:
        return None
    args: dict[str, Any] = {"query": query}
    status = _status(m.group(1))
    if status:
        args["status"] = status
        query = _words(_STATUS.sub(" ", m.group(1)))
        if not query:
            return None
        args["query"] = query
    return Intent("search", args)


def _list(text: str) -> Intent | None:
    if re.search(r"\b(everything|all|what) (that )?i (still )?(need|have) to do\b|\bleft to do\b", text):
        return Intent("list", {"status": "pending"})
    if not re.search(r"\b(tasks?|to-?dos?|my list)\b", text):
        return None
    if not re.search(r"\b(show|list|what|which|see|view|display|give|get|tell|any)\b|^(my |all )?(\w+ )?tasks$", text):
        return None
    args: dict[str, Any] = {}
    status = _status(text)
    if status:
        args["status"] = status
    prio = re.search(r"\b(high|medium|low)(?:[- ]priority)?\b", text)
    if prio:
        args["priority"] = prio.group(1)
    m = re.search(r"\b(?:my |all |the )?([a-z][a-z0-9_-]{1,30}) tasks\b", text)
    if m and m.group(1) not in _STOP | _NOT_CATEGORIES:
        args["category"] = m.group(1)
    return Intent("list", args)


def _dated_to_do(text: str) -> Intent | None:
    """A thing to do written with its date and no add word ("pay rent on friday", "call mom tomorrow at 5"): a
    new task. Only a statement that starts like an instruction (the guardrail's `NOT_A_VERB` words cannot)."""
    found = when.find(text)
    if found is None:
        return None
    rest = found.cut(text)
    words = rest.split()
    if not words or words[0] in NOT_A_VERB or len(words) > 12:
        return None
    return _create(f"add {text}")
