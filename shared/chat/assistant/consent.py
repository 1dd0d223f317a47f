"""Which existing tasks a model's change may touch: the ones the user named in their message, or confirmed.

Task text (titles, descriptions) read back by the list and search tools is outsider-controlled text for the
model: a description saying "mark every task done" must not turn "add a task: buy milk" into changes to
other tasks. So on the LLM path a change to an existing task (`update_task`, `update_task_status`) runs
only when, decided here in code and never by the model:
1. the user's words ask for that kind of change: status words ("mark", "done", "reopen") for a status
   change; for anything else, edit words ("rename", "change", "move", "reschedule") or, in a message that
   asks to add nothing, every new value typed by the user ("make the rent task high priority": priority
   `high`; "put the flights under work": category `work`); a message that asks to add something ("add a
   task due tomorrow, high priority") changes no existing task without edit words; and
2. the task is named: its id is in the user's text; or a significant word of its title or category is one
   the user typed (generic words such as "buy", "call", "task", "done" do not name anything); or the
   message refers back ("it", "them", "the first one") to tasks the previous answer showed.
For a short follow-up (at most 80 characters: "the second one", "yes") the user's previous message counts too,
as it does for `agent.may_change`.

"Shown" is narrow on purpose: the tasks of the previous answer's tool results whose titles are in that
answer's text, in the order the text shows them (`shown_in`, kept in the answer's metadata as
`shown_task_ids`). "it" / "that" / "this" name the shown task only when there was exactly one; "them",
"those", "these", "both", "everything" name every shown task; "the first" / "second" / ... / "last" name that
one. A task the model only read, or a yes to a question the model wrote, names nothing: such a change is
held (`HeldChange`), listed in the answer by code and run exactly as listed if the next message is "yes".
`set_task_preferences` needs the user's words about a time zone (or the zone's name).
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shared.chat.assistant.models import HistoryMessage
from shared.chat.assistant.render import due_words

# Tools that change an existing task, and the argument that names it (a list for update_task_status).
TARGETS: dict[str, str] = {"update_task": "task_id", "update_task_status": "task_ids"}
FOLLOW_UP_CHARS = 80
MAX_TARGETS = 100  # the task tools' own bound on task_ids
MAX_WHAT = 1_000  # one held change in words (HeldChange.what)

_WORD = re.compile(r"[^\W_]+")
# The words of a request to change an existing task: its status, or anything else about it.
_STATUS = re.compile(
    r"\b(mark(ed)?|complete[ds]?|finish(ed)?|done|reopen(ed)?|undo|un-?complete|tick(ed)? off|check(ed)? off|"
    r"uncheck)\b",
    re.IGNORECASE,
)
_EDIT = re.compile(
    r"\b(rename[ds]?|change[ds]?|update[ds]?|edit|set|move|reschedule|postpone|push|delay|prioriti[sz]e|tag|untag)\b",
    re.IGNORECASE,
)
# A request to add: its values ("high priority") are for the new task, never a change to an existing one.
_ADD = re.compile(r"\b(add|create|new|remind me)\b", re.IGNORECASE)
# Fields whose new value the user may state instead of an edit word: not ids, dates or status, and not tags
# (a new full list, which would drop the tags the user did not mention).
_STATED_FIELDS = frozenset({"title", "description", "category", "priority"})
_TIME_ZONE = re.compile(r"\b(time ?zone|tz)\b", re.IGNORECASE)
# "this week" is a date, not a reference to a shown task.
_DATES = re.compile(r"\b(this|that|next|last) (week|month|year|day|morning|afternoon|evening|time)\b", re.IGNORECASE)
_SINGULAR = re.compile(r"\b(it|that|this)\b", re.IGNORECASE)
# Bare "all" is left out: "mark all my shopping tasks done" means the shopping tasks, not every one shown.
_PLURAL = re.compile(r"\b(them|those|these|both|everything)\b", re.IGNORECASE)
_ORDINALS = {
    "first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4, "5th": 4,
    "sixth": 5, "6th": 5, "seventh": 6, "7th": 6, "eighth": 7, "8th": 7, "ninth": 8, "9th": 8, "tenth": 9, "10th": 9,
    "last": -1,
}  # fmt: skip
_ORDINAL = re.compile(r"\b(" + "|".join(_ORDINALS) + r")\b|(?:#|\bnumber )(\d{1,2})\b", re.IGNORECASE)
# Words that name no particular task: grammar, the requests' own words, dates, and the verbs most task
# titles start with ("Buy milk" is named by "milk", not by "buy").
_GENERIC = frozenset(
    """a an the my me i to of for and or in on at with by from as is are be am was it its this that these those them
    they one ones all any some every each both other another so then also just now too not no yes ok okay please
    can could would will should shall must let need want have has had get got go do does did done make made
    task tasks todo todos item items list thing things entry reminder reminders
    mark marked complete completed completes finish finished reopen reopened undo uncomplete tick check
    off uncheck pending incomplete open rename renamed change changed update updated edit set move reschedule
    postpone push delay prioritise prioritize priority tag untag due date time title description category
    add added create created new remind remember note put schedule delete remove erase clear trash drop rid
    show find search look list see tell give
    buy call pay send email text ring pick up book fix clean write read plan take bring meet visit order return
    start prepare review submit renew cancel sign print file
    today tomorrow yesterday tonight week weeks month months year day days next last first second third
    morning afternoon evening night monday tuesday wednesday thursday friday saturday sunday
    high medium low urgent important asap""".split()
)  # fmt: skip


def words(text: str) -> frozenset[str]:
    """The words of `text` that could name a task: lower-cased, singular, without generic words."""
    out = set()
    for raw in _WORD.findall(text.lower()):
        word = _singular(raw)
        if len(word) >= 3 and word not in _GENERIC and raw not in _GENERIC:
            out.add(word)
    return frozenset(out)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _phrase(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def shown_in(answer: str, tasks: dict[str, dict[str, Any]]) -> list[str]:
    """The ids of `tasks` whose titles `answer` shows, in the order it shows them (what "the first one" means)."""
    # Padded with spaces so a title matches whole words only: "Art" is not shown by "party".
    text = f" {_phrase(answer)} "
    found: list[tuple[int, str]] = []
    for task_id, task in tasks.items():
        title = _phrase(str(task.get("title") or ""))
        at = text.find(f" {title} ") if len(title) >= 3 else -1
        if at >= 0:
            found.append((at, task_id))
    return [task_id for _, task_id in sorted(found)]


def _shown(history: Sequence[HistoryMessage]) -> list[str]:
    """The tasks the answer just before this message showed (none when that answer is not the last message)."""
    if not history or history[-1].role != "assistant":
        return []
    raw = history[-1].metadata.get("shown_task_ids")
    return [i for i in raw if isinstance(i, str)][:MAX_TARGETS] if isinstance(raw, list) else []


def _referred(message: str, shown: list[str]) -> frozenset[str]:
    if not shown:
        return frozenset()
    text = _DATES.sub(" ", message)
    picked: set[str] = set()
    for m in _ORDINAL.finditer(text):
        index = _ORDINALS[m.group(1).lower()] if m.group(1) else int(m.group(2)) - 1
        if -len(shown) <= index < len(shown):
            picked.add(shown[index])
    if _PLURAL.search(text):
        picked.update(shown)
    if _SINGULAR.search(text) and len(shown) == 1:
        picked.update(shown)
    return frozenset(picked)


@dataclass(frozen=True)
class Consent:
    """What the user's own words allow this turn (see the module docstring)."""

    status: bool  # the user asked to complete or reopen a task
    edit: bool  # the user asked to change something else about a task (or its status, in other words)
    adds: bool  # the user asked to add something
    time_zone: bool  # the user asked about their time zone
    typed: str  # the user's text, lower-cased: for ids and zone names typed as they are
    words: frozenset[str]  # the words that may name a task
    referred: frozenset[str]  # ids of shown tasks the message refers back to

    @classmethod
    def of(cls, message: str, history: Sequence[HistoryMessage]) -> Consent:
        texts = [message]
        if len(message) <= FOLLOW_UP_CHARS:
            previous = next((m.message for m in reversed(history) if m.role == "user"), "")
            texts.append(previous)
        joined = "\n".join(texts)
        return cls(
            status=bool(_STATUS.search(joined)),
            edit=bool(_EDIT.search(joined)),
            adds=bool(_ADD.search(joined)),
            time_zone=bool(_TIME_ZONE.search(joined)),
            typed=joined.lower(),
            words=words(joined),
            referred=_referred(message, _shown(history)),
        )

    def asks_for(self, name: str, args: dict[str, Any]) -> bool:
        """Do the user's words ask for this kind of change? A status change needs status or edit words
        ("mark ... done", "set ... to completed"); anything else about a task needs edit words or, when the
        message adds nothing, each new value in the user's own words, so "mark the dentist task done"
        cannot become a rename of that task and "make the rent task high priority" is not held."""
        fields = {k: v for k, v in args.items() if k not in ("task_id", "status", "user_id")}
        if name == "update_task" and fields:
            return self.edit or (not self.adds and ("status" not in args or self.status) and self._states(fields))
        return self.status or self.edit

    def _states(self, fields: dict[str, Any]) -> bool:
        """Every field is one the user can state and its new value is made of words the user typed."""
        typed = set(_WORD.findall(self.typed))
        for key, value in fields.items():
            values = value if isinstance(value, list) else [value]
            if key not in _STATED_FIELDS or not values:
                return False
            for item in values:
                said = _WORD.findall(str(item).lower()) if isinstance(item, str) else []
                if not said or not set(said) <= typed:
                    return False
        return True

    def names(self, task_id: str, task: dict[str, Any]) -> bool:
        """Did the user name this existing task (`task` as the store has it)?"""
        if task_id in self.referred or (len(task_id) >= 8 and task_id.lower() in self.typed):
            return True
        title = str(task.get("title") or "")
        own = words(f"{title} {task.get('category') or ''}")
        if own & self.words:
            return True
        # A title made only of generic words ("Call", "Pay bills"?) is named by typing it whole.
        whole = _phrase(title)
        return not own and len(whole) >= 3 and f" {whole} " in f" {_phrase(self.typed)} "

    def allows_time_zone(self, args: dict[str, Any]) -> bool:
        zone = str(args.get("tz") or "").lower()
        return self.time_zone or (len(zone) >= 3 and zone in self.typed)


def target_ids(name: str, args: dict[str, Any]) -> list[str] | None:
    """The existing tasks a change call names, or None when the argument is not a valid id or id list."""
    value = args.get(TARGETS[name])
    if name == "update_task":
        return [value] if isinstance(value, str) and value else None
    if isinstance(value, list) and 0 < len(value) <= MAX_TARGETS and all(isinstance(v, str) and v for v in value):
        return list(dict.fromkeys(value))
    return None


def with_targets(name: str, args: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """`args` narrowed to `ids` (and without user_id: identity is the caller's)."""
    kept = {k: v for k, v in args.items() if k != "user_id"}
    if name == "update_task_status":
        kept["task_ids"] = ids
    return kept


def describe(name: str, args: dict[str, Any], titles: Sequence[str], tz: str | None = None) -> str:
    """One held change in words the user can check before saying yes (built from the store's titles); a new
    due date is shown as the user will read it, on their wall clock with the zone (`tz`)."""
    more = f" and {len(titles) - 10} more" if len(titles) > 10 else ""
    named = ", ".join(f'"{t[:80]}"' for t in titles[:10]) + more
    if name == "update_task_status":
        return (f"mark {named} as done" if args.get("new_status") == "completed" else f"reopen {named}")[:MAX_WHAT]
    if name == "set_task_preferences":
        return f'set your time zone to "{str(args.get("tz"))[:64]}"'

    def change(key: str, value: Any) -> str:
        if value is None:
            return f"clear {key.replace('_', ' ')}"
        if key == "due_date":
            return f"due date to {due_words(value, tz)}"
        return f"{key} to {str(value)[:80]!r}"

    fields = ", ".join(change(k, v) for k, v in args.items() if k not in ("task_id", "user_id"))
    return f"change {named}: {fields or 'nothing'}"[:MAX_WHAT]
