"""Dates in a person's words, in their own time zone: "on friday", "tomorrow evening", "in 3 days", "end of the month".

Pure. `find(text)` locates one date phrase in a lower-cased message (its span, to cut out of a task title,
and what it says); `resolve(found, now, zone)` turns it into a due date for a user in `zone` at instant
`now`: a day alone (due by the end of that local day) or a local time. The rules, also in the README:

- days: today, tonight (20:00; the end of today once past), tomorrow, the day after tomorrow, a weekday
  (bare or with on/by: the next such day after today; "this friday" counts today; "next friday" is the
  Friday of next week, weeks starting Monday), this/next weekend (Saturday), this week / end of the week
  (Sunday), next week (Monday), this month / end of the month (its last day), next month (the 1st), end
  of the year, "in" or "within N days/weeks/months", "N days from now" (calendar days; months clamp to
  the month's end), a date ("december 15", "30 nov", "the 3rd", 2026-12-10: this year's, or next year's
  once past);
- times: 5pm, 9:30, "at 9" (1 to 6 without am/pm mean the afternoon), noon, midnight (the end of the
  day), morning and "first thing" 09:00, afternoon 15:00, evening 18:00, night 20:00; a time alone is
  today's if still ahead, else tomorrow's; "in N hours/minutes" counts real time;
- a local time the clocks skip (02:30 when they jump 02:00 -> 03:00) moves forward by the gap (03:30);
  one they repeat is its first, daylight-saving, occurrence.
A bare weekday counts only after on/by/due/until/for, before a time, or at the end of the message ("prepare
the monday meeting" has no date); an abbreviation (fri) only after such a word; "every friday" (a
repeat, not supported) is no date.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

_WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tues": 1, "tue": 1, "wednesday": 2, "wed": 2, "thursday": 3,
    "thurs": 3, "thur": 3, "thu": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_FULL_WEEKDAYS = frozenset(calendar.day_name[i].lower() for i in range(7))
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
}  # fmt: skip
# A message is at most 4,000 characters; past this many date-like words it is not a task line anyway, and the
# pairwise checks stay cheap.
_MAX_CANDIDATES = 40
_PARTS = {"morning": 9, "afternoon": 15, "evening": 18, "night": 20, "tonight": 20}

_WD = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUM = r"\d{1,3}|a couple of|a couple|couple of|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_ORD = r"(?:st|nd|rd|th)"

# Day phrases, most specific first; each match becomes a _Day.
_DAY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        ("from_now", rf"\b({_NUM}) (days?|weeks?|months?) from (?:now|today)\b"),
        ("after_tomorrow", r"\b(?:the )?day after (?:tomorrow|tmrw)\b"),
        ("tomorrow", r"\b(?:tomorrow|tmrw|tmr|tomorow|2morrow)\b"),
        ("today", r"\btoday\b"),
        ("tonight", r"\btonight\b"),
        ("end", r"\b(?:the )?end of (?:the |this )?(next )?(day|week|month|year)\b"),
        ("end_short", r"\b(eod|eow|eom|eoy)\b"),
        ("weekend", r"\b(?:(this|next|the) )?weekend\b"),
        ("period", r"\b(this|next) (week|month|year)\b"),
        ("relative", rf"\b(?:in|within) ({_NUM}) (minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b"),
        ("half_hour", r"\bin half an hour\b"),
        ("day_month", rf"\b(?:the )?(\d{{1,2}}){_ORD}? (?:of )?({_MON})\b\.?(?:,? (\d{{4}}))?"),
        ("month_day", rf"\b({_MON})\.? (\d{{1,2}}){_ORD}?\b(?:,? (\d{{4}}))?"),
        ("ordinal", rf"\bthe (\d{{1,2}}){_ORD}\b"),
        ("weekday", rf"\b(?:(this|next|coming|the coming) )?({_WD})\b"),
    )
)
_TIME_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("ampm", r"\b(?:at |@ ?|by |around )?(\d{1,2})(?:[:.](\d{2}))? ?(am|pm|a\.m\.|p\.m\.)(?![a-z])"),
        ("clock", r"\b(?:at |@ ?|by |around )?([01]?\d|2[0-3]):([0-5]\d)\b"),
        (
            "hour",
            (
                r"\b(?:at|@|around) (\d{1,2})\b(?! ?(?:%|st|nd|rd|th|days?|weeks?|months?|years?|hours?|minutes?"
                r"|mins?|people|percent|of|[:.]\d))"
            ),
        ),
        ("noon", r"\b(?:at )?(noon|midday|lunchtime|midnight)\b"),
        ("part", r"\b(?:(this|in the) )?(morning|afternoon|evening|night)\b"),
        ("first_thing", r"\b(first thing)(?: in the morning)?\b"),
    )
)
# Words that introduce a date phrase and go with it out of a title ("pay rent on friday" -> "Pay rent").
_LEAD = re.compile(r"(?:\b(?:due|on|by|for|at|until|till|over|before|after|since|from)\s+)+$")
_INTRO = re.compile(r"\b(?:due|on|by|for|until|till|before|after|since|from)\s*$")
_JOIN = re.compile(r"^\s*(?:,|at|on|@)?\s*$")


@dataclass(frozen=True)
class _Day:
    kind: str
    groups: tuple[str | None, ...]
    start: int
    end: int


@dataclass(frozen=True)
class _Time:
    kind: str
    groups: tuple[str | None, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Found:
    """A date phrase in a message: where it is (with the word that introduced it) and what it says."""

    start: int
    end: int
    day: _Day | None
    at: _Time | None
    # The word before the phrase ("after", "before", "by", "since", ...), for ranges: "due after friday".
    lead: str = ""

    def cut(self, text: str) -> str:
        """`text` without the phrase, spaces tidied."""
        rest = f"{text[: self.start]} {text[self.end :]}"
        rest = re.sub(r"\s+([,;.!?])", r"\1", rest)
        return " ".join(rest.split()).strip(" ,;:-")


@dataclass(frozen=True)
class Due:
    """A resolved due date: the local day (all_day) or the local time, aware in the user's zone."""

    local: datetime
    all_day: bool

    @property
    def day(self) -> date:
        return self.local.date()

    def argument(self) -> str:
        """As create_task / update_task take it: a day alone, or the local time with its offset."""
        return self.day.isoformat() if self.all_day else self.local.isoformat(timespec="minutes")


def _days(text: str) -> list[_Day]:
    found: list[_Day] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _DAY_PATTERNS:
        for m in pattern.finditer(text):
            if len(found) >= _MAX_CANDIDATES:
                break
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            found.append(_Day(kind, m.groups(), m.start(), m.end()))
            taken.append((m.start(), m.end()))
    return sorted(found, key=lambda d: d.start)


def _times(text: str, days: list[_Day]) -> list[_Time]:
    found: list[_Time] = []
    taken = [(d.start, d.end) for d in days]
    for kind, pattern in _TIME_PATTERNS:
        for m in pattern.finditer(text):
            if len(found) >= _MAX_CANDIDATES:
                break
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            if re.search(r"\b(?:the|a|an)\s*$", text[: m.start()]) and kind != "part":
                continue  # "the 5pm news": a time naming a thing, not a due time
            found.append(_Time(kind, m.groups(), m.start(), m.end()))
            taken.append((m.start(), m.end()))
    return sorted(found, key=lambda t: t.start)


def _valid_day(day: _Day, text: str, times: list[_Time]) -> bool:
    if day.kind not in ("weekday", "day_month", "month_day", "ordinal"):
        return True
    before = text[: day.start]
    if re.search(r"\bevery\s*$", before):
        return False  # a repeat, which tasks do not have
    if day.kind != "weekday":
        return day.kind != "ordinal" or bool(_INTRO.search(before))
    qualifier, name = day.groups
    if qualifier:
        return True
    introduced = bool(_INTRO.search(before))
    if name not in _FULL_WEEKDAYS:
        return introduced
    at_end = not text[day.end :].strip(" ,.!?")
    return introduced or at_end or any(_adjacent(day, t, text) for t in times)


def _adjacent(day: _Day, at: _Time, text: str) -> bool:
    """A time right after the day ("friday at 3pm") or right before it ("5 pm friday", "at noon on monday")."""
    if at.start >= day.end:
        return bool(_JOIN.match(text[day.end : at.start]))
    return at.end <= day.start and bool(_JOIN.match(text[at.end : day.start]))


def _valid_time(at: _Time) -> bool:
    """A time alone needs a clear form: 5pm, 9:30, at 9, noon; a part of the day needs "this" or "in the"."""
    return at.kind not in ("part", "first_thing") or (at.kind == "part" and bool(at.groups[0]))


def find(text: str) -> Found | None:
    """The date phrase of a lower-cased message (the last one, when there are several), or None."""
    days = _days(text)
    times = _times(text, days)
    valid = [d for d in days if _valid_day(d, text, times)]
    day = valid[-1] if valid else None
    at: _Time | None = None
    if day is not None:
        at = next((t for t in times if _adjacent(day, t, text)), None)
    else:
        alone = [t for t in times if _valid_time(t)]
        at = alone[-1] if alone else None
    if day is None and at is None:
        return None
    spans = [(x.start, x.end) for x in (day, at) if x is not None]
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    lead = _LEAD.search(text[:start])
    intro = ""
    if lead:
        intro = lead.group(0).split()[-1]
        start = lead.start()
    return Found(start, end, day, at, intro)


# ---- resolving -----------------------------------------------------------------------------------


def localize(day: date, hour: int, minute: int, zone: ZoneInfo) -> datetime:
    """`day` at hh:mm on the wall clock of `zone`: a skipped time moves forward by the gap, a repeated one is its
    first occurrence (fold=0 takes the offset in force before the change; the round trip through UTC
    normalises a skipped time to the wall time that exists)."""
    return datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC).astimezone(zone)


def _number(text: str | None) -> int:
    value = (text or "").strip()
    return int(value) if value.isdigit() else _NUMBERS.get(value, 1)


def _add_months(day: date, months: int) -> date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _month_end(day: date) -> date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _dated(year: int, month: int, dom: int, today: date, explicit_year: bool) -> date:
    """That month and day: this year's, or the next year's once past (and one that exists: 29 Feb)."""
    for y in range(year, year + 9):
        try:
            found = date(y, month, dom)
        except ValueError:
            if explicit_year:
                raise
            continue
        if explicit_year or found >= today:
            return found
    raise ValueError("no such day")


def _hour(at: _Time) -> tuple[int, int] | None:
    """(hour, minute) of a time phrase; None for midnight (the end of the day)."""
    g = at.groups
    if at.kind == "ampm":
        hour, minute = int(g[0] or 0) % 12, int(g[1] or 0)
        return (hour + 12 if (g[2] or "").startswith("p") else hour), minute
    if at.kind == "clock":
        return int(g[0] or 0), int(g[1] or 0)
    if at.kind == "hour":
        hour = int(g[0] or 0)
        return (hour + 12 if 1 <= hour <= 6 else hour), 0
    if at.kind == "noon":
        return None if g[0] == "midnight" else (12, 0)
    if at.kind == "first_thing":
        return _PARTS["morning"], 0
    return _PARTS[str(g[1])], 0


def _end_of(g: tuple[str | None, ...], short: bool, today: date) -> date:
    """The last day of this (or next) day, week, month or year: "end of the month", "eom"."""
    unit = {"eod": "day", "eow": "week", "eom": "month", "eoy": "year"}[str(g[0])] if short else str(g[-1])
    ahead = not short and bool(g[0])
    if unit == "day":
        return today
    if unit == "week":
        return today + timedelta(days=6 - today.weekday() + (7 if ahead else 0))
    if unit == "month":
        return _month_end(_add_months(today.replace(day=1), 1 if ahead else 0))
    return date(today.year + (1 if ahead else 0), 12, 31)


def _period(g: tuple[str | None, ...], today: date) -> date:
    """this week (its Sunday), next week (its Monday), this month (its last day), next month (its 1st), ..."""
    which, unit = g
    if unit == "week":
        return _next_monday(today) if which == "next" else today + timedelta(days=6 - today.weekday())
    if unit == "month":
        return _add_months(today.replace(day=1), 1) if which == "next" else _month_end(today)
    return date(today.year + 1, 1, 1) if which == "next" else date(today.year, 12, 31)


def _relative(g: tuple[str | None, ...], today: date) -> date:
    """In N days / weeks (calendar days), months / years (same day of the month, clamped)."""
    n, unit = _number(g[0]), str(g[1])
    if unit.startswith("day"):
        return today + timedelta(days=n)
    if unit.startswith("week"):
        return today + timedelta(weeks=n)
    return _add_months(today, n * (12 if unit.startswith("year") else 1))


def _ordinal(g: tuple[str | None, ...], today: date) -> date:
    """The 3rd: this month's if not past (today counts), else the next month that has that day."""
    dom, first = int(g[0] or 0), today.replace(day=1)
    for months in range(13):
        month = _add_months(first, months)
        if dom <= calendar.monthrange(month.year, month.month)[1] and (months or dom >= today.day):
            return month.replace(day=dom)
    raise ValueError("no such day")


def _weekday(g: tuple[str | None, ...], today: date) -> date:
    qualifier, target = g[0], _WEEKDAYS[str(g[1])]
    if qualifier == "next":
        return _next_monday(today) + timedelta(days=target)
    ahead = (target - today.weekday()) % 7
    return today + timedelta(days=ahead if qualifier == "this" else ahead or 7)


def _weekend(g: tuple[str | None, ...], today: date) -> date:
    if g[0] == "next":
        return _next_monday(today) + timedelta(days=5)
    return today if today.weekday() >= 5 else today + timedelta(days=5 - today.weekday())


def _next_monday(today: date) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7)


def _year(g: str | None, today: date) -> int:
    return int(g) if g else today.year


_DAY_OF: dict[str, Callable[[tuple[str | None, ...], date], date]] = {
    "iso": lambda g, today: date(int(g[0] or 0), int(g[1] or 0), int(g[2] or 0)),
    "today": lambda g, today: today,
    "tonight": lambda g, today: today,
    "tomorrow": lambda g, today: today + timedelta(days=1),
    "after_tomorrow": lambda g, today: today + timedelta(days=2),
    "end": lambda g, today: _end_of(g, False, today),
    "end_short": lambda g, today: _end_of(g, True, today),
    "weekend": _weekend,
    "period": _period,
    "relative": _relative,
    "from_now": _relative,
    "day_month": lambda g, today: _dated(_year(g[2], today), _MONTHS[str(g[1])], int(g[0] or 0), today, bool(g[2])),
    "month_day": lambda g, today: _dated(_year(g[2], today), _MONTHS[str(g[0])], int(g[1] or 0), today, bool(g[2])),
    "ordinal": _ordinal,
    "weekday": _weekday,
}


def _day_of(day: _Day, today: date) -> date:
    return _DAY_OF[day.kind](day.groups, today)


def _short_span(day: _Day | None) -> timedelta | None:
    """The real-time offset of "in 2 hours" / "in 30 minutes" / "in half an hour", else None."""
    if day is None:
        return None
    if day.kind == "half_hour":
        return timedelta(minutes=30)
    if day.kind == "relative" and str(day.groups[1]).startswith(("min", "hour", "hr")):
        n = _number(day.groups[0])
        return timedelta(minutes=n) if str(day.groups[1]).startswith("min") else timedelta(hours=n)
    return None


def resolve(found: Found, now: datetime, zone: ZoneInfo) -> Due:
    """The due date `found` means for a user in `zone` at instant `now` (aware). ValueError: no such day.

    "before friday" is due by the end of the day before; "before 5pm" at 5pm."""
    due = _resolve(found, now, zone)
    if found.lead == "before" and due.all_day:
        return Due(localize(due.day - timedelta(days=1), 0, 0, zone), all_day=True)
    return due


def _resolve(found: Found, now: datetime, zone: ZoneInfo) -> Due:
    local_now = now.astimezone(zone)
    span = _short_span(found.day)
    if span is not None:
        moment = (now + span).astimezone(zone).replace(second=0, microsecond=0)
        return Due(moment, all_day=False)
    today = local_now.date()
    day = _day_of(found.day, today) if found.day is not None else None
    at = found.at
    if at is None and found.day is not None and found.day.kind == "tonight":
        at = _Time("part", (None, "tonight"), found.day.start, found.day.end)
    if at is None:
        return Due(localize(day or today, 0, 0, zone), all_day=True)
    clock = _hour(at)
    if day is None:
        # A time alone: today's if still ahead, else tomorrow's ("this morning" stays today's).
        if clock is None:
            return Due(localize(today, 0, 0, zone), all_day=True)
        candidate = localize(today, clock[0], clock[1], zone)
        if candidate <= local_now and not (at.kind == "part" and at.groups[0] == "this"):
            candidate = localize(today + timedelta(days=1), clock[0], clock[1], zone)
        return Due(candidate, all_day=False)
    if clock is None:
        return Due(localize(day, 0, 0, zone), all_day=True)
    moment = localize(day, clock[0], clock[1], zone)
    if found.day is not None and found.day.kind == "tonight" and found.at is None and moment <= local_now:
        return Due(localize(day, 0, 0, zone), all_day=True)  # "tonight" said after 20:00: by the end of today
    return Due(moment, all_day=False)
