"""Kubernetes quantities (500m, 128Mi, 95%), the dates kubectl and its objects print, and durations in words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_SUFFIX = {
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}  # fmt: skip
_QUANTITY = re.compile(r"([-+]?\d{1,30}(?:\.\d{1,30})?(?:[eE][-+]?\d{1,3})?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)")


def quantity(text: str) -> float | None:
    """A quantity's value (500m -> 0.5, 128Mi -> 134217728, 95% -> 95.0), or None when it is not one."""
    s = str(text).strip().strip("\"'")
    s = s.removesuffix("%")
    m = _QUANTITY.fullmatch(s)
    return float(m.group(1)) * _SUFFIX[m.group(2)] if m else None


def bytes_text(n: float) -> str:
    """A byte count as Kubernetes writes it (3221225472 -> 3Gi, 33804771328 -> 31.5Gi)."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{n:.0f}"


def at_or_over(used: str, limit: str) -> bool:
    """Is a used/current quantity at or above its limit/target? False when either is not a quantity."""
    u, h = quantity(used), quantity(limit)
    return u is not None and h is not None and u >= h


def over(current: str, target: str) -> bool:
    """Is a current quantity above its target?"""
    c, t = quantity(current), quantity(target)
    return c is not None and t is not None and c > t


_MONTHS = {m: i + 1 for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}
_ISO = re.compile(
    r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d{1,9})?)?"
    r"(?: ?(Z|[+-]\d{2}:?\d{2}))?"
)
# `Mon, 02 Jan 2006 15:04:05 -0700` (describe) and `Jan  2 15:04:05 2006 GMT` (openssl).
_RFC1123 = re.compile(r"(?<!\d)(\d{1,2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})(?: ([+-]\d{4}))?")
_OPENSSL = re.compile(r"\b([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\b")


def find_time(text: str) -> tuple[datetime, str] | None:
    """The first date (with time when given) in a text, in UTC, and the text it was read from; None if none."""
    for finder in (_iso, _rfc1123, _openssl):
        found = finder(text)
        if found:
            return found
    return None


def _offset(zone: str | None) -> timedelta:
    if not zone or zone == "Z":
        return timedelta(0)
    digits = zone[1:].replace(":", "")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
    return -delta if zone[0] == "-" else delta


def _iso(text: str) -> tuple[datetime, str] | None:
    m = _ISO.search(text)
    if not m:
        return None
    y, mo, d, h, mi, s, zone = m.groups()
    try:
        when = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), tzinfo=UTC)
    except ValueError:
        return None
    return when - _offset(zone), m.group(0)


def _rfc1123(text: str) -> tuple[datetime, str] | None:
    m = _RFC1123.search(text)
    if not m or m.group(2) not in _MONTHS:
        return None
    d, mon, y, h, mi, s, zone = m.groups()
    try:
        when = datetime(int(y), _MONTHS[mon], int(d), int(h), int(mi), int(s), tzinfo=UTC)
    except ValueError:
        return None
    return when - _offset(zone), m.group(0)


def _openssl(text: str) -> tuple[datetime, str] | None:
    m = _OPENSSL.search(text)
    if not m or m.group(1) not in _MONTHS:
        return None
    mon, d, h, mi, s, y = m.groups()
    try:
        return datetime(int(y), _MONTHS[mon], int(d), int(h), int(mi), int(s), tzinfo=UTC), m.group(0)
    except ValueError:
        return None


def span(delta: timedelta) -> str:
    """A duration in words, rounded to its largest unit: "3 days", "5 hours", "12 minutes"."""
    seconds = abs(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{int(seconds)} seconds"


_CRON_FIELD_MINUTES = (1, 60, 1440, 44640, 1440)  # minute, hour, day of month, month, day of week
_MACROS = {
    "@yearly": 525600,
    "@annually": 525600,
    "@monthly": 44640,
    "@weekly": 10080,
    "@daily": 1440,
    "@midnight": 1440,
    "@hourly": 60,
}


def cron_period_minutes(schedule: str) -> int | None:
    """The longest gap a cron schedule leaves between runs, roughly (`*/5 * * * *` -> 5, `0 3 * * *` -> 1440)."""
    s = schedule.strip()
    if s.startswith("@every "):
        found = re.fullmatch(r"@every (\d{1,6})([smh])", s)
        if not found:
            return None
        n = int(found.group(1))
        return max(1, {"s": n // 60, "m": n, "h": n * 60}[found.group(2)])
    if s in _MACROS:
        return _MACROS[s]
    fields = [f for f in s.split() if not f.startswith(("CRON_TZ=", "TZ="))]
    return _five_fields(fields) if len(fields) == 5 else None


def _five_fields(fields: list[str]) -> int:
    minute, hour, dom, month, dow = fields
    if month != "*":
        return 525600
    if dom != "*":
        return 44640
    if dow != "*":
        return 10080
    if hour.startswith("*/"):
        return 60 * _step(hour)
    if hour != "*":
        return 1440
    if minute.startswith("*/"):
        return _step(minute)
    return 1 if minute == "*" else 60


def _step(field: str) -> int:
    try:
        return max(1, int(field[2:]))
    except ValueError:
        return 1
