"""NeuBird's timestamps as instants, so sessions are ordered by when they happened, not by how they are written.

The contract (2.2) says times are strings the CLI reads as RFC 3339 with fractional seconds. RFC 3339 allows any
UTC offset (`+05:30`, `-08:00`, `Z`), any number of fraction digits, lower-case `t`/`z` and a space for the `T`,
so two correct times can compare the wrong way as text. Anything that is not RFC 3339 (a date alone, a time
without an offset, another ISO 8601 form, a number) is not guessed at: it reads as None and sorts last.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})(?:\.(?P<frac>\d+))?"
    r"(?:(?P<z>[Zz])|(?P<sign>[+-])(?P<oh>\d{2}):(?P<om>\d{2}))"
)
T = TypeVar("T")


def parse_rfc3339(value: object) -> datetime | None:
    """The UTC instant of an RFC 3339 timestamp, or None when `value` is not one (never raises).

    Fractions beyond microseconds are cut (nanoseconds tie); a leap second (`:60`) reads as `:59`; `-00:00`
    (offset unknown, RFC 3339 4.3) reads as UTC.
    """
    if not isinstance(value, str):
        return None
    found = _RFC3339.fullmatch(value)
    if found is None:
        return None
    hours, minutes, offset_h, offset_m = (int(found[k] or 0) for k in ("h", "m", "oh", "om"))
    if offset_h > 23 or offset_m > 59:
        return None
    offset = timedelta(hours=offset_h, minutes=offset_m) * (-1 if found["sign"] == "-" else 1)
    micro = int((found["frac"] or "0")[:6].ljust(6, "0"))
    try:
        year, month, day = (int(part) for part in found["date"].split("-"))
        second = min(int(found["s"]), 59)
        local = datetime(year, month, day, hours, minutes, second, micro, tzinfo=timezone(offset))
        return local.astimezone(UTC)
    except (ValueError, OverflowError):  # 2026-02-30, hour 25, a year past 9999 after the offset
        return None


def newest_first(rows: Iterable[T], field: str = "create_time") -> list[T]:
    """`rows` (objects from NeuBird) most recent `field` first; rows whose time cannot be read come last, in the
    order given. Equal instants keep the order given (NeuBird's own)."""
    timed: list[tuple[datetime, T]] = []
    untimed: list[T] = []
    for row in rows:
        moment = parse_rfc3339(_field(row, field))
        if moment is None:
            untimed.append(row)
        else:
            timed.append((moment, row))
    timed.sort(key=lambda pair: pair[0], reverse=True)  # stable: ties keep their order
    return [row for _, row in timed] + untimed


def _field(row: Any, field: str) -> object:
    return row.get(field) if isinstance(row, dict) else None
