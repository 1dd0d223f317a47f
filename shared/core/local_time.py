"""Instants as a person reads them: in their own time zone, with the zone shown (issue #27).

Stored times are UTC (`…Z`); a user whose zone is set must never read a UTC wall time without a zone
("due 2026-11-28 22:59" for a Berlin task due by the end of the 28th). `local_iso` is the machine form
(ISO 8601 with the user's offset, for tool outputs), `local_text` the human one ("Sat 2026-11-28 18:00 CET",
"Sat 2026-11-28 end of day CET"). Pure; an unknown zone name falls back to UTC, and says so by showing UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone_of(name: str | None) -> ZoneInfo:
    """The IANA zone `name`, or UTC when it is empty or unknown (display must not fail on a bad profile)."""
    try:
        return ZoneInfo(name) if name and len(name) <= 64 and ".." not in name else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def instant(value: str | datetime) -> datetime | None:
    """An aware instant from a stored UTC string or a datetime (naive counts as UTC); None if unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def zone_label(moment: datetime) -> str:
    """The zone's abbreviation at that moment (CET, CEST, EST), or UTC±hh:mm where it has none (-03, +0530)."""
    name = moment.tzname() or ""
    if name.isalpha():
        return name
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_iso(value: str | datetime | None, tz: str | None) -> str | None:
    """The instant in zone `tz` as ISO 8601 with its offset, to the second (2026-11-28T23:59:59+01:00)."""
    moment = instant(value) if value is not None else None
    if moment is None:
        return None
    return moment.astimezone(zone_of(tz)).replace(microsecond=0).isoformat()


def local_text(value: str | datetime | None, tz: str | None, *, all_day: bool = False) -> str:
    """The instant as a person in zone `tz` reads it: "Sat 2026-11-28 18:00 CET", or for a task due by the end
    of a day, "Sat 2026-11-28 end of day CET". Empty for no value."""
    moment = instant(value) if value is not None else None
    if moment is None:
        return ""
    local = moment.astimezone(zone_of(tz))
    day = local.strftime("%a %Y-%m-%d")
    clock = "end of day" if all_day else local.strftime("%H:%M")
    return f"{day} {clock} {zone_label(local)}"
