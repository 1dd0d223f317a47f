"""Timeframes of NeuBird investigations: natural-language windows turned into UTC start/end.

NeuBird's API has no time-window field: the window goes into the prompt text ([INF] in the API
contract, after the Alertmanager sample's "Investigate from last 1 hour"), so `enhance_prompt` appends
one clear sentence naming it.

The grammar is ours (no date library: `datetime` and a few bounded, backtracking-free regexes):

- relative: ``last|past|previous [N] minutes|hours|days|weeks`` with singular/plural, abbreviations
  (m, min, mins, h, hr, hrs, d, w, wk, wks), digits or a few number words (``last hour``, ``past week``,
  ``last 30m``, ``past two days``); optional ``in the``/``over the``/``for the``/``the`` before it; a bare
  duration (``2 hours``, ``90m``) and an ISO 8601 duration (``PT2H``, ``P1D``, ``P1W``) mean the same.
  ``last week`` is the last 7 days (the spec's "past week"), not the previous calendar week.
- named: ``today`` (UTC midnight to now), ``yesterday`` (the whole previous UTC day), ``this week``
  (Monday 00:00 UTC to now).
- since: ``since X``, ``from X``, ``after X`` -> X to now.
- ranges: ``between A and B``, ``from A to B``, ``A to B`` (also ``until``/``till``/``through``), ISO
  intervals ``A/B``, ``A/PT2H``, ``PT2H/B``.
- points (X, A, B, start_time, end_time): ISO 8601 dates and timestamps (``2026-11-23``,
  ``2026-11-23T15:00:00Z``, ``2026-11-23 15:00``, offsets ``+01:00``/``+0100``/``+01``, ``UTC`` suffix);
  ``today``, ``yesterday``, ``now``, ``N units ago``. A timestamp without an offset is UTC.
  A date is a whole UTC day: as a start it means 00:00, as an end the end of that day (the next 00:00,
  or now when the day is today). A single date alone is that day; a single timestamp alone means since.

Rules (our choices, documented for callers):
- `start_time` / `end_time` (ISO 8601, or any point form above): giving them *and* a `timeframe` text
  is refused as ambiguous. `start_time` alone = start to now. `end_time` alone = the default timeframe
  evaluated as if now were `end_time` (so with "last 1 hour": the hour ending there).
- Nothing given: the default (the NEUBIRD_DEFAULT_TIMEFRAME setting, "last 1 hour").
- Refused: text over 200 characters, unparseable text, zero or negative N, spans over 90 days
  (`MAX_SPAN`), reversed or empty ranges, a start in the future and an end beyond now + 5 minutes
  (`FUTURE_SKEW`; an end inside the skew is clamped to now).
- Times are kept to whole seconds (fractions are dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from shared.core.errors import ValidationFailed
from shared.neubird.errors import neubird_error

MAX_TEXT_CHARS = 200
MAX_SPAN = timedelta(days=90)
FUTURE_SKEW = timedelta(minutes=5)

EXAMPLES: tuple[str, ...] = (
    "last 2 hours",
    "past week",
    "last 30m",
    "today",
    "yesterday",
    "since 2026-11-20",
    "between 2026-11-20 and 2026-11-22",
    "from 2026-11-23T08:00:00Z to 2026-11-23T12:00:00Z",
    "2026-11-23T08:00:00Z/2026-11-23T12:00:00Z",
)
TIMESTAMP_EXAMPLES: tuple[str, ...] = ("2026-11-23T15:00:00Z", "2026-11-23T16:00:00+01:00", "2026-11-23")

_UNITS: dict[str, str] = {
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), "minute"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "hour"),
    **dict.fromkeys(("d", "day", "days"), "day"),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), "week"),
}
_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86_400, "week": 604_800}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty-eight": 48,
    "sixty": 60,
    "ninety": 90,
}
_FILLERS = frozenset(("in", "over", "during", "for", "within", "the"))
_RELATIVE = frozenset(("last", "past", "previous"))
_SINCE = frozenset(("since", "from", "after"))
_RANGE_SEPARATORS = frozenset(("to", "until", "till", "through", "-", "\u2013", "\u2014"))

# Every regex below is anchored (fullmatch), has no nested or overlapping quantifiers and runs on at most
# MAX_TEXT_CHARS characters: matching time is linear.
_NUMBER_UNIT = re.compile(r"([0-9]+)([a-z]+)")
_ISO_POINT = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[t ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,][0-9]{1,9})?)?)?"
    r" ?(z|utc|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
_ISO_DURATION = re.compile(r"p(?:([0-9]+)w)?(?:([0-9]+)d)?(?:t(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?)?")


@dataclass(frozen=True)
class Timeframe:
    """A UTC window [start, end) and how a person would say it."""

    start: datetime
    end: datetime
    description: str

    def as_dict(self) -> dict[str, str]:
        """The spec's `timeframe_parsed`: ISO 8601 with Z, and the description."""
        return {"start": _iso(self.start), "end": _iso(self.end), "description": self.description}


def parse_timeframe(
    text: str | None,
    *,
    now: datetime,
    start_time: str | None = None,
    end_time: str | None = None,
    default: str = "last 1 hour",
) -> Timeframe:
    """The window `text` (or `start_time`/`end_time`, or `default`) names, relative to `now` (aware).

    Raises ValidationFailed (details.type "validation", details.field naming the argument: timeframe,
    start_time, end_time or default_timeframe; details.examples the accepted forms) on anything the
    module docstring's grammar and rules refuse; ValueError when `now` is naive (a programming error).
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime")
    now = now.astimezone(UTC).replace(microsecond=0)
    has_text = text is not None and text.strip() != ""
    start_given = start_time is not None and start_time.strip() != ""
    end_given = end_time is not None and end_time.strip() != ""
    if has_text and (start_given or end_given):
        raise _error(
            "timeframe",
            "give either a timeframe text or start_time/end_time, not both",
            examples=EXAMPLES,
        )
    if start_given or end_given:
        return _explicit(start_time if start_given else None, end_time if end_given else None, now, default)
    if has_text:
        assert text is not None
        return _parse_text(text, now, "timeframe")
    return _parse_text(default or "last 1 hour", now, "default_timeframe")


def enhance_prompt(prompt: str, timeframe: Timeframe) -> str:
    """`prompt` followed by one sentence stating the window ([INF]: the API has no window field)."""
    return (
        f"{prompt.rstrip()}\n\n"
        f"Timeframe: focus on {timeframe.description}, that is from {_iso(timeframe.start)} "
        f"to {_iso(timeframe.end)} (UTC)."
    )


# -- the grammar ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Point:
    """A point in time as a range end: `lo` when used as a start, `hi` when used as an end."""

    lo: datetime
    hi: datetime
    day: bool  # a whole day (date, today, yesterday): an end inside it is clamped to now


def _parse_text(raw: str, now: datetime, field: str) -> Timeframe:
    if len(raw) > MAX_TEXT_CHARS:
        raise _error(field, f"is {len(raw)} characters long; at most {MAX_TEXT_CHARS} are accepted")
    text = " ".join(raw.lower().split()).rstrip(".")
    tokens = text.split(" ") if text else []
    while len(tokens) > 1 and tokens[0] in _FILLERS:
        tokens = tokens[1:]
    if not tokens:
        raise _error(field, "is empty")
    body = " ".join(tokens)
    named = _named(body, now, field)
    if named is not None:
        return named
    head, rest = tokens[0], tokens[1:]
    if head in _RELATIVE:
        return _last(_duration(rest, field, body, allow_implicit_one=True), now, field)
    if head in _SINCE and rest and not any(t in _RANGE_SEPARATORS for t in rest):
        start = _point(" ".join(rest), now, field).lo
        return _finish(start, now, now, field, f"since {_human(start)}")
    if head == "between":
        parts = " ".join(rest).split(" and ")
        if len(parts) != 2 or not all(parts):
            raise _error(field, "reads as 'between A and B' but A or B is missing", text=raw)
        return _range(parts[0], parts[1], now, field)
    return _ranged_or_single(tokens[1:] if head in ("from", "since") else tokens, raw, now, field)


def _named(body: str, now: datetime, field: str) -> Timeframe | None:
    if body == "today":
        return _finish(_midnight(now), now, now, field, "today so far")
    if body == "yesterday":
        return _finish(_midnight(now) - timedelta(days=1), _midnight(now), now, field, "yesterday")
    if body == "this week":
        monday = _midnight(now) - timedelta(days=now.weekday())
        return _finish(monday, now, now, field, "this week so far")
    return None


def _ranged_or_single(tokens: list[str], raw: str, now: datetime, field: str) -> Timeframe:
    """`A to B`, `A/B`, an ISO duration, a bare duration, or a single point."""
    body = " ".join(tokens)
    separators = [i for i, t in enumerate(tokens) if t in _RANGE_SEPARATORS]
    if len(separators) == 1 and 0 < separators[0] < len(tokens) - 1:
        i = separators[0]
        return _range(" ".join(tokens[:i]), " ".join(tokens[i + 1 :]), now, field)
    if separators:
        raise _error(field, "has a range separator (to/until/-) without exactly one A and one B", text=raw)
    if len(tokens) == 1 and body.count("/") == 1:
        return _iso_interval(*body.split("/"), now=now, field=field)
    if _ISO_DURATION.fullmatch(body) and body != "p":
        return _last(_iso_duration(body, field), now, field)
    if tokens[-1] != "ago":
        seconds = _duration(tokens, field, body, allow_implicit_one=False, quiet=True)
        if seconds is not None:
            return _last(seconds, now, field)
    point = _point(body, now, field)
    if point.day:
        end = _end_of(point, now, field)
        return _finish(point.lo, end, now, field, f"the day {point.lo.date().isoformat()}")
    return _finish(point.lo, now, now, field, f"since {_human(point.lo)}")


def _duration(tokens: list[str], field: str, text: str, *, allow_implicit_one: bool, quiet: bool = False) -> int | None:
    """Seconds of `[N] unit` tokens (N digits or a number word), or an error (None when `quiet`)."""
    number: int | None = None
    unit: str | None = None
    if len(tokens) == 1 and tokens[0] in _UNITS and allow_implicit_one:
        number, unit = 1, tokens[0]
    elif len(tokens) == 1 and (m := _NUMBER_UNIT.fullmatch(tokens[0])):
        number, unit = int(m.group(1)), m.group(2)
    elif len(tokens) == 2:
        word, unit = tokens
        if word.isascii() and word.isdigit():
            number = int(word)
        elif word.startswith("-"):
            raise _error(field, "needs a positive number of minutes, hours, days or weeks", text=text)
        else:
            number = _NUMBER_WORDS.get(word)
    if number is None or unit not in _UNITS:
        if quiet:
            return None
        raise _error(field, "is not a duration like 'last 2 hours' or 'past week'", text=text)
    return _checked_seconds(number, _UNITS[unit], field)


def _checked_seconds(number: int, unit: str, field: str) -> int:
    if number <= 0:
        raise _error(field, "needs a positive number of minutes, hours, days or weeks (0 is empty)")
    seconds = number * _UNIT_SECONDS[unit]
    if seconds > MAX_SPAN.total_seconds():
        raise _error(field, f"spans more than the {MAX_SPAN.days}-day maximum")
    return seconds


def _iso_duration(text: str, field: str) -> int:
    m = _ISO_DURATION.fullmatch(text)
    if m is None or not any(m.groups()):
        raise _error(field, "is not an ISO 8601 duration like PT2H or P1D", text=text)
    weeks, days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    total = (
        weeks * _UNIT_SECONDS["week"]
        + days * _UNIT_SECONDS["day"]
        + hours * _UNIT_SECONDS["hour"]
        + minutes * _UNIT_SECONDS["minute"]
        + seconds
    )
    return _checked_seconds(total, "second", field)


def _last(seconds: int | None, now: datetime, field: str) -> Timeframe:
    assert seconds is not None
    return _finish(now - timedelta(seconds=seconds), now, now, field, f"the last {_span_words(seconds)}")


def _range(a: str, b: str, now: datetime, field: str) -> Timeframe:
    start = _point(a, now, field)
    end = _point(b, now, field)
    lo, hi = start.lo, _end_of(end, now, field)
    return _finish(lo, hi, now, field, None)


def _iso_interval(a: str, b: str, *, now: datetime, field: str) -> Timeframe:
    a_is_duration, b_is_duration = a.startswith("p"), b.startswith("p")
    if a_is_duration and b_is_duration:
        raise _error(field, "an ISO interval needs at least one date or timestamp (A/B, A/PT2H, PT2H/B)")
    if b_is_duration:
        start = _point(a, now, field).lo
        return _finish(start, start + timedelta(seconds=_iso_duration(b, field)), now, field, None)
    end = _end_of(_point(b, now, field), now, field)
    if a_is_duration:
        return _finish(end - timedelta(seconds=_iso_duration(a, field)), end, now, field, None)
    return _finish(_point(a, now, field).lo, end, now, field, None)


def _point(text: str, now: datetime, field: str) -> _Point:
    """One point: an ISO date/timestamp, today, yesterday, now or `N units ago`."""
    text = text.strip()
    if text == "now":
        return _Point(now, now, day=False)
    if text == "today":
        return _Point(_midnight(now), _midnight(now) + timedelta(days=1), day=True)
    if text == "yesterday":
        return _Point(_midnight(now) - timedelta(days=1), _midnight(now), day=True)
    tokens = text.split(" ")
    if len(tokens) >= 2 and tokens[-1] == "ago":
        seconds = _duration(tokens[:-1], field, text, allow_implicit_one=True)
        assert seconds is not None
        at = now - timedelta(seconds=seconds)
        return _Point(at, at, day=False)
    m = _ISO_POINT.fullmatch(text)
    if m is None:
        raise _error(field, "has a part that is not a date or time", text=text)
    year, month, day, hour, minute, second, zone = m.groups()
    try:
        if hour is None:
            if zone not in (None, "z", "utc"):
                raise ValueError("a date takes no offset; dates are whole UTC days")
            lo = datetime(int(year), int(month), int(day), tzinfo=UTC)
            return _Point(lo, lo + timedelta(days=1), day=True)
        tz = _zone(zone)
        at = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0), tzinfo=tz)
        at = at.astimezone(UTC)  # year 1 at +14:00 has no UTC time: OverflowError
    except (ValueError, OverflowError) as exc:
        raise _error(field, f"has an impossible date or time ({exc})", text=text) from None
    return _Point(at, at, day=False)


def _zone(zone: str | None) -> timezone:
    if zone is None or zone in ("z", "utc"):
        return UTC
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError("offset out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _end_of(point: _Point, now: datetime, field: str) -> datetime:
    """`point` as a range end: a day that has begun ends now at the latest; a slightly future end is now."""
    if point.hi <= now:
        return point.hi
    if (point.day and point.lo <= now) or point.hi <= now + FUTURE_SKEW:
        return now
    raise _error(field, f"ends in the future ({_human(point.hi)}; now is {_human(now)})")


def _finish(start: datetime, end: datetime, now: datetime, field: str, label: str | None) -> Timeframe:
    start, end = start.replace(microsecond=0), end.replace(microsecond=0)
    if start > now + FUTURE_SKEW:
        raise _error(field, f"starts in the future ({_human(start)}; now is {_human(now)})")
    if end > now + FUTURE_SKEW:
        raise _error(field, f"ends in the future ({_human(end)}; now is {_human(now)})")
    end = min(end, now)
    if start > end:
        raise _error(field, f"is reversed: the start {_human(start)} is after the end {_human(end)}")
    if start == end:
        raise _error(field, f"is empty: it starts and ends at {_human(start)}")
    if end - start > MAX_SPAN:
        raise _error(field, f"spans more than the {MAX_SPAN.days}-day maximum ({_human(start)} to {_human(end)})")
    window = _window(start, end)
    return Timeframe(start, end, f"{label} ({window})" if label else f"the window {window}")


def _explicit(start_text: str | None, end_text: str | None, now: datetime, default: str) -> Timeframe:
    for name, value in (("start_time", start_text), ("end_time", end_text)):
        if value is not None and len(value) > MAX_TEXT_CHARS:
            raise _error(name, f"is {len(value)} characters long; at most {MAX_TEXT_CHARS} are accepted")
    end = now
    if end_text is not None:
        end = _end_of(_point(" ".join(end_text.lower().split()), now, "end_time"), now, "end_time")
    if start_text is None:
        relative = _parse_text(default or "last 1 hour", end, "default_timeframe")
        return _finish(relative.start, end, now, "end_time", f"{_span_words_of(relative)} ending at {_human(end)}")
    start = _point(" ".join(start_text.lower().split()), now, "start_time").lo
    field = "start_time"
    label = f"since {_human(start)}" if end_text is None else None
    return _finish(start, end, now, field, label)


# -- formatting -------------------------------------------------------------------------------------------


def _midnight(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M:%S" if at.second else "%H:%M")


def _human(at: datetime) -> str:
    return f"{at.date().isoformat()} {_clock(at)} UTC"


def _window(start: datetime, end: datetime) -> str:
    if start.date() == end.date():
        return f"{start.date().isoformat()} {_clock(start)} to {_clock(end)} UTC"
    return f"{start.date().isoformat()} {_clock(start)} to {end.date().isoformat()} {_clock(end)} UTC"


def _span_words(seconds: int) -> str:
    for unit in ("week", "day", "hour", "minute", "second"):
        size = _UNIT_SECONDS[unit]
        if seconds % size == 0:
            n = seconds // size
            return unit if n == 1 else f"{n} {unit}s"
    raise AssertionError("unreachable: every duration is a whole number of seconds")


def _span_words_of(timeframe: Timeframe) -> str:
    return "the " + _span_words(int((timeframe.end - timeframe.start).total_seconds()))


def _error(
    field: str, problem: str, *, text: str | None = None, examples: tuple[str, ...] = EXAMPLES
) -> ValidationFailed:
    shown = f" (got {text[:60]!r})" if text is not None else ""
    if field in ("start_time", "end_time"):
        examples = TIMESTAMP_EXAMPLES
    error = neubird_error(
        ValidationFailed,
        "validation",
        f"Invalid {field}: it {problem}{shown}. Accepted forms: " + ", ".join(repr(e) for e in examples) + ".",
        details={"field": field, "examples": list(examples)},
        recovery=[
            (
                "Use a relative window ('last 2 hours', 'past 3 days', 'last 30m', 'today', 'yesterday'), "
                "'since <date>', 'between <date> and <date>' or an ISO 8601 range 'A/B'."
            ),
            "Or pass start_time and end_time as ISO 8601 timestamps (UTC, Z or an offset) and no timeframe.",
            f"Windows may not be reversed, lie in the future or span more than {MAX_SPAN.days} days.",
        ],
    )
    assert isinstance(error, ValidationFailed)
    return error
