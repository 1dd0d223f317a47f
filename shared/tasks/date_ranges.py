"""The date ranges of the task tools (`today`, `tomorrow`, ..., `overdue`, `custom`) in the user's time zone.

A range is a window of instants [start, end) in UTC, computed from local midnights in the user's IANA zone
(default UTC), so "today" in New York is 23 hours long on the day daylight saving starts and 25 on the day
it ends. Weeks start on Monday (ISO 8601). `overdue` has no start: everything due before now. `custom` takes
dates (whole local days, the end day included) or ISO timestamps, and either end may be left open (from a
day on, or up to a day), but not both. Pure code: the clock is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.core.errors import ValidationFailed

RangeName = Literal[
    "today", "tomorrow", "yesterday", "this_week", "last_week", "next_week", "this_month", "overdue", "custom"
]
RANGES: tuple[str, ...] = get_args(RangeName)
MAX_CUSTOM_DAYS = 366


@dataclass(frozen=True)
class Window:
    """Instants from `start` (inclusive; None: no lower bound) to `end` (exclusive; None: no upper bound),
    aware UTC. Only a `custom` range may leave its end open."""

    start: datetime | None
    end: datetime | None
    label: str

    def contains(self, moment: datetime) -> bool:
        return (self.start is None or moment >= self.start) and (self.end is None or moment < self.end)

    def as_dict(self) -> dict[str, str | None]:
        return {
            "start": self.start.strftime("%Y-%m-%dT%H:%M:%SZ") if self.start else None,
            "end": self.end.strftime("%Y-%m-%dT%H:%M:%SZ") if self.end else None,
            "label": self.label,
        }


def _refuse(field: str, problem: str, accepted: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        field,
        problem,
        f"{field}: {problem}",
        suggestions=[accepted],
    )


def user_zone(name: str | None) -> ZoneInfo:
    """The user's zone (IANA name such as Europe/Berlin; None or '' is UTC)."""
    if not name:
        return ZoneInfo("UTC")
    if len(name) > 64 or ".." in name or name.startswith("/"):
        raise _refuse("tz", "is not an IANA time zone name", "Use a name like Europe/Berlin or America/New_York.")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise _refuse(
            "tz", f"{name!r} is not a known IANA time zone", "Use a name like Europe/Berlin or America/New_York."
        ) from None


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    """The first instant of `day` in `zone`, in UTC (a midnight a DST jump skips maps to the instant after it)."""
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def _days(first: date, last_exclusive: date, zone: ZoneInfo, label: str) -> Window:
    return Window(_midnight(first, zone), _midnight(last_exclusive, zone), label)


def _point(text: str, field: str, zone: ZoneInfo) -> tuple[datetime, bool]:
    """(the instant, whether it was a whole date) of a custom bound; naive timestamps are local."""
    value = text.strip()
    try:
        if len(value) == 10:
            return _midnight(date.fromisoformat(value), zone), True
        moment = datetime.fromisoformat(value)
        moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment
        return moment.astimezone(UTC), False
    except (ValueError, OverflowError):
        raise _refuse(
            field, f"{text!r} is not an ISO 8601 date or timestamp", "Pass 2026-11-30 or 2026-11-30T09:00:00+01:00."
        ) from None


def window(
    range_name: str,
    *,
    now: datetime,
    tz: str | None = None,
    custom_start: str | None = None,
    custom_end: str | None = None,
) -> Window:
    """The window `range_name` means for a user in zone `tz` at instant `now` (aware)."""
    if now.tzinfo is None:
        raise ValueError("now must be aware")
    if range_name not in RANGES:
        raise _refuse("date_range", f"{range_name!r} is not a date range", "Use one of: " + ", ".join(RANGES) + ".")
    zone = user_zone(tz)
    today = now.astimezone(zone).date()
    monday = today - timedelta(days=today.weekday())
    first_of_month = today.replace(day=1)
    next_month = (first_of_month + timedelta(days=32)).replace(day=1)
    if range_name == "today":
        return _days(today, today + timedelta(days=1), zone, "today")
    if range_name == "tomorrow":
        return _days(today + timedelta(days=1), today + timedelta(days=2), zone, "tomorrow")
    if range_name == "yesterday":
        return _days(today - timedelta(days=1), today, zone, "yesterday")
    if range_name == "this_week":
        return _days(monday, monday + timedelta(days=7), zone, "this week")
    if range_name == "last_week":
        return _days(monday - timedelta(days=7), monday, zone, "last week")
    if range_name == "next_week":
        return _days(monday + timedelta(days=7), monday + timedelta(days=14), zone, "next week")
    if range_name == "this_month":
        return _days(first_of_month, next_month, zone, "this month")
    if range_name == "overdue":
        return Window(None, now.astimezone(UTC), "overdue")
    return _custom(custom_start, custom_end, zone)


def _custom(custom_start: str | None, custom_end: str | None, zone: ZoneInfo) -> Window:
    """A custom range: both ends (at most MAX_CUSTOM_DAYS apart), or one end left open ("from the 1st on",
    "up to Friday"). An end date includes its whole day; a blank end counts as not given."""
    first = (custom_start or "").strip() or None
    last = (custom_end or "").strip() or None
    if first is None and last is None:
        raise _refuse(
            "custom_start",
            "date_range custom needs custom_start, custom_end or both",
            "Pass custom_start and/or custom_end (ISO dates such as 2026-11-01); leave one out for an open end.",
        )
    return between(first, last, zone, fields=("custom_start", "custom_end"), max_days=MAX_CUSTOM_DAYS)


def between(
    first: str | None,
    last: str | None,
    zone: ZoneInfo,
    *,
    fields: tuple[str, str],
    max_days: int | None = None,
) -> Window:
    """The window from `first` (a date: its local midnight; a timestamp, naive ones local) to `last` (a date:
    its whole day included; a timestamp: exclusive); None leaves that side open. Errors name `fields`
    (start, end), e.g. ("due_from", "due_to")."""
    start = _point(first, fields[0], zone)[0] if first else None
    end = _end(last, zone, fields[1]) if last else None
    if start is not None and end is not None:
        if end <= start:
            raise _refuse(fields[1], f"is not after {fields[0]}", "Swap the two, or widen the range.")
        if max_days is not None and end - start > timedelta(days=max_days):
            raise _refuse(
                fields[1],
                f"the range is longer than {max_days} days",
                "Ask for a shorter range, or leave one end open.",
            )
    label = f"{first or 'any time'} to {last or 'any time'}"
    return Window(start, end, label)


def _end(text: str, zone: ZoneInfo, field: str = "custom_end") -> datetime:
    """The exclusive end of a range: an instant as given, or the midnight after an end day."""
    end, whole_day = _point(text, field, zone)
    if not whole_day:
        return end
    try:
        return _midnight(date.fromisoformat(text.strip()) + timedelta(days=1), zone)
    except OverflowError:
        raise _refuse(field, "is beyond the last representable day", "Pass a date before 9999-12-31.") from None
