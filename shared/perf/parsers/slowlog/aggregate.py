"""Per-class aggregates of slow-log entries in bounded memory, as pt-query-digest reports them.

Each class keeps counters, sums, min/max and a log-scaled histogram per metric (buckets 5% wide from
1 µs, like pt-query-digest's), so median and 95th percentile cost constant memory per class whatever
the log size; they are accurate to one bucket (5%). The worst sample (largest Query_time) is kept with
its literals redacted.

Bounded: a class's fingerprint is kept to MAX_FINGERPRINT_CHARS (a longer one ends in a hash of the
whole, so classes stay apart), its sample to MAX_SAMPLE_CHARS, the fingerprint cache to CACHE_CHARS
characters, and the classes to MAX_CLASSES (entries of further classes are counted in one overflow class).

Classes aggregated over consecutive ranges of a log merge exactly into the ones of one pass (merge.py);
`report` ranks classes however they were aggregated, `digest` is `report(aggregate(entries))`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.perf.parsers.slowlog.fingerprint import fingerprint
from shared.perf.parsers.slowlog.parser import SlowEntry
from shared.perf.parsers.slowlog.signals import add_signals

_BASE = 1.05
_MIN = 0.000001
_BUCKETS = 1000
_LOG_BASE = math.log(_BASE)
MAX_FINGERPRINT_CHARS = 4096
MAX_SAMPLE_CHARS = 4000
MAX_CLASSES = 5000
CACHE_CHARS = 16 * 1024 * 1024
OVERFLOW_CLASS = f"/* further classes beyond the {MAX_CLASSES}-class cap */"

# A literal that the statement's cap (or the sample's) cut open is redacted to the end, not left in clear.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.|'')*(?:'|\\?\Z)|\"(?:[^\"\\]|\\.)*(?:\"|\\?\Z)", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])[+-]?(?:0x[0-9a-f]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\b", re.IGNORECASE)
_HEX_BIT = re.compile(r"\b[xb]'[0-9a-f]*'", re.IGNORECASE)


def redact_literals(query: str) -> str:
    """The statement with string, number, hex and bit literals replaced by `?`; structure and names kept."""
    query = _HEX_BIT.sub("?", query)
    query = _QUOTED.sub("?", query)
    return _NUMBER.sub("?", query)


def _bucket(value: float) -> int:
    if value < _MIN:
        return 0
    return min(_BUCKETS - 1, 1 + int(math.log(value / _MIN) / _LOG_BASE))


_BUCKET_MEMO = 65_536
_BUCKET_OF: dict[float, int] = {}  # value -> bucket, at most _BUCKET_MEMO values (a full memo starts over)


def _bucket_value(index: int) -> float:
    return 0.0 if index == 0 else _MIN * _BASE**index


@dataclass
class Metric:
    count: int = 0
    total: float = 0.0
    minimum: float = math.inf
    maximum: float = 0.0
    buckets: dict[int, int] = field(default_factory=dict)

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        # As min()/max() would (they keep the first of equals), without two calls per value.
        if value < self.minimum:
            self.minimum = value
        if value > self.maximum:
            self.maximum = value
        b = _BUCKET_OF.get(value)  # row counts and times repeat: skip the log()
        if b is None:
            b = _bucket(value)
            if len(_BUCKET_OF) >= _BUCKET_MEMO:
                _BUCKET_OF.clear()
            _BUCKET_OF[value] = b
        buckets = self.buckets
        buckets[b] = buckets.get(b, 0) + 1

    def percentile(self, q: float) -> float:
        """The value at rank ceil(q * count), read from the histogram and clamped to [min, max]."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen >= rank:
                return min(max(_bucket_value(index), self.minimum), self.maximum)
        return self.maximum

    def summary(self) -> dict[str, float]:
        if not self.count:
            return {"sum": 0.0, "min": 0.0, "max": 0.0, "avg": 0.0, "median": 0.0, "p95": 0.0}
        return {
            "sum": round(self.total, 6),
            "min": round(self.minimum, 6),
            "max": round(self.maximum, 6),
            "avg": round(self.total / self.count, 6),
            "median": round(self.percentile(0.5), 6),
            "p95": round(self.percentile(0.95), 6),
        }


@dataclass
class QueryClass:
    fingerprint: str
    count: int = 0
    query_time: Metric = field(default_factory=Metric)
    lock_time: Metric = field(default_factory=Metric)
    rows_sent: Metric = field(default_factory=Metric)
    rows_examined: Metric = field(default_factory=Metric)
    databases: dict[str, int] = field(default_factory=dict)
    users: dict[str, int] = field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    worst_query_time: float = -1.0
    worst_sample: str = ""
    worst_offset: int = 0
    truncated: int = 0  # statements longer than the parser's cap (their fingerprint is of the kept bytes)
    signals: dict[str, int] = field(default_factory=dict)  # optional fields counted (signals.py)

    def add(self, e: SlowEntry) -> None:
        self.count += 1
        self.query_time.add(e.query_time)
        self.lock_time.add(e.lock_time)
        self.rows_sent.add(e.rows_sent)
        self.rows_examined.add(e.rows_examined)
        self.databases[e.schema] = self.databases.get(e.schema, 0) + 1
        self.users[e.user] = self.users.get(e.user, 0) + 1
        self.truncated += e.truncated
        if e.extra_lines:
            add_signals(self.signals, e)
        when = e.time
        if when is not None:
            if self.first_seen is None or _naive(when) < _naive(self.first_seen):
                self.first_seen = when
            if self.last_seen is None or _naive(when) > _naive(self.last_seen):
                self.last_seen = when
        if e.query_time > self.worst_query_time:
            self.worst_query_time = e.query_time
            self.worst_sample = redact_literals(e.query[: 4 * MAX_SAMPLE_CHARS])[:MAX_SAMPLE_CHARS]
            self.worst_offset = e.offset

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "count": self.count,
            "query_time": self.query_time.summary(),
            "lock_time": self.lock_time.summary(),
            "rows_sent": self.rows_sent.summary(),
            "rows_examined": self.rows_examined.summary(),
            "databases": dict(sorted(self.databases.items())),
            "users": dict(sorted(self.users.items())),
            "first_seen": self.first_seen.isoformat() if self.first_seen else None,
            "last_seen": self.last_seen.isoformat() if self.last_seen else None,
            "worst_sample": {
                "query_time": self.worst_query_time,
                "query": self.worst_sample,
                "byte_offset": self.worst_offset,
            },
            "truncated_statements": self.truncated,
            "signals": dict(sorted(self.signals.items())),
            "query_time_histogram": {str(b): n for b, n in sorted(self.query_time.buckets.items())},
        }


def _naive(dt: datetime) -> datetime:
    # MariaDB times are local and naive, MySQL's carry a zone; compare them on one footing.
    return dt if dt.tzinfo is None else dt.astimezone().replace(tzinfo=None)


# The fingerprint does not change when one digit replaces another (every rule that looks at a digit
# treats all digits alike), so statements that differ only in their numbers share one cache entry.
_DIGITS = str.maketrans("123456789", "000000000")


def class_key(fp: str) -> str:
    """The fingerprint as stored: whole up to MAX_FINGERPRINT_CHARS, else its head and a hash of the whole."""
    if len(fp) <= MAX_FINGERPRINT_CHARS:
        return fp
    return (
        f"{fp[:MAX_FINGERPRINT_CHARS]} /*... {hashlib.sha256(fp.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}*/"
    )


class ClassKeys:
    """Statement -> class key, caching repeated statement shapes (digits normalised) within CACHE_CHARS."""

    __slots__ = ("cache", "cached")

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}
        self.cached = 0

    def __call__(self, query: str) -> str:
        key = query.translate(_DIGITS)
        fp = self.cache.get(key)
        if fp is None:
            fp = class_key(fingerprint(query))
            if len(self.cache) < 50_000 and self.cached + len(key) + len(fp) <= CACHE_CHARS:
                self.cache[key] = fp
                self.cached += len(key) + len(fp)
        return fp


def aggregate(
    entries: Iterable[SlowEntry], *, new_class: Callable[[str], QueryClass] = QueryClass
) -> dict[str, QueryClass]:
    """Classes by fingerprint; memory grows with the number of classes (at most MAX_CLASSES + 1), not of entries.

    `new_class` makes each class (the parallel digest passes a QueryClass that also records its values).
    """
    classes: dict[str, QueryClass] = {}
    key_of = ClassKeys()  # repeated statement shapes skip the regex work
    for e in entries:
        fp = key_of(e.query)
        qc = classes.get(fp)
        if qc is None:
            if len(classes) >= MAX_CLASSES:
                fp = OVERFLOW_CLASS
                qc = classes.get(fp)
            if qc is None:
                qc = classes[fp] = new_class(fp)
        qc.add(e)
    return classes


def digest(entries: Iterable[SlowEntry], *, order_by: str = "query_time") -> dict[str, Any]:
    """The whole-log report: totals and classes ranked by total Query_time (pt-query-digest's default)."""
    return report(aggregate(entries), order_by=order_by)


def report(classes: dict[str, QueryClass], *, order_by: str = "query_time") -> dict[str, Any]:
    """`digest`'s report of classes already aggregated (the parallel digest merges them first)."""
    ranked = sorted(classes.values(), key=lambda c: (-c.query_time.total, c.fingerprint))
    total_time = sum(c.query_time.total for c in ranked)
    return {
        "entries": sum(c.count for c in ranked),
        "classes": len(ranked),
        "query_time_total": round(total_time, 6),
        "ranked": [
            dict(
                c.to_dict(), rank=i + 1, share_of_time=round(c.query_time.total / total_time, 4) if total_time else 0.0
            )
            for i, c in enumerate(ranked)
        ],
    }


def bucket_upper_ms(index: int) -> float:
    """The upper bound, in milliseconds, of a `query_time_histogram` bucket (the value percentiles report)."""
    return _bucket_value(index) * 1000
