"""Exact merge of slow-log classes aggregated over consecutive ranges of a log, for the parallel digest.

`Merged.add(part)` for each range in file order gives the classes one sequential `aggregate` gives:
- counts, histogram buckets, databases and users add up, keys new to a dict landing where one pass adds them;
- min/max, first/last seen and the worst sample keep the earlier range's on ties, as the sequential
  strict `<`/`>` tests do;
- a class's float sums are replayed value by value (RecordingClass keeps them) onto the earlier
  ranges' sum, so they round exactly as one pass would (adding two partial sums may not);
- a range parsed without the `use` in force before it holds INHERITED_SCHEMA, renamed to that `use`;
- the class cap (MAX_CLASSES) raises Sequential: which entries land in the overflow class depends on order.
Any QueryClass field missing from MERGED_FIELDS would be dropped by the merge: a test keeps the two equal.
"""

from __future__ import annotations

import functools
import operator
from array import array
from dataclasses import dataclass, field, fields
from typing import Any

from shared.perf.parsers.slowlog import aggregate as aggregate_module
from shared.perf.parsers.slowlog.aggregate import OVERFLOW_CLASS, Metric, QueryClass, _naive
from shared.perf.parsers.slowlog.parser import SlowEntry

# The schema a range inherits from the one before it, until the merge knows it. A lone surrogate: no
# `use` line or Schema: field can decode to it (they are decoded with errors="replace").
INHERITED_SCHEMA = "\udc80inherited"
METRICS = ("query_time", "lock_time", "rows_sent", "rows_examined")
MERGED_FIELDS = frozenset(
    {"fingerprint", "count", *METRICS, "databases", "users", "first_seen", "last_seen", "worst_query_time"}
    | {"worst_sample", "worst_offset", "truncated", "signals"}
)


class Sequential(Exception):
    """The ranges cannot be merged exactly (the class cap was reached): digest the input in one pass."""


@dataclass
class RecordingClass(QueryClass):
    """A class that also keeps each entry's four values in order, for the merge to replay its sums."""

    values: array[float] = field(default_factory=lambda: array("d"))

    def add(self, e: SlowEntry) -> None:
        super().add(e)
        self.values.extend((e.query_time, e.lock_time, e.rows_sent, e.rows_examined))


@dataclass
class Partial:
    """One range aggregated: its classes and the last `use` it read (INHERITED_SCHEMA if none)."""

    classes: dict[str, QueryClass]
    schema: str


def _add_counts(into: dict[Any, int], more: dict[Any, int], rename: dict[Any, Any]) -> None:
    # In `more`'s order: keys new to `into` land where a sequential pass would have added them.
    for key, n in more.items():
        key = rename.get(key, key)
        into[key] = into.get(key, 0) + n


def _merge_metric(into: Metric, more: Metric, values: array[float], column: int) -> None:
    into.total = functools.reduce(operator.add, values[column::4], into.total)
    into.count += more.count
    into.minimum = min(into.minimum, more.minimum)  # min/max answer their first argument on ties
    into.maximum = max(into.maximum, more.maximum)
    _add_counts(into.buckets, more.buckets, {})


def _merge_class(into: QueryClass, more: QueryClass) -> None:
    """`more` (a later range's class) added to `into` as if its entries had followed into's."""
    values = more.values if isinstance(more, RecordingClass) else array("d")
    if len(values) != 4 * more.count:
        raise ValueError("a later range's class must be a RecordingClass")
    for column, name in enumerate(METRICS):
        _merge_metric(getattr(into, name), getattr(more, name), values, column)
    into.count += more.count
    into.truncated += more.truncated
    _add_counts(into.databases, more.databases, {})
    _add_counts(into.users, more.users, {})
    _add_counts(into.signals, more.signals, {})
    first, last = more.first_seen, more.last_seen
    if first is not None and (into.first_seen is None or _naive(first) < _naive(into.first_seen)):
        into.first_seen = first
    if last is not None and (into.last_seen is None or _naive(last) > _naive(into.last_seen)):
        into.last_seen = last
    if more.worst_query_time > into.worst_query_time:
        into.worst_query_time, into.worst_sample, into.worst_offset = (
            more.worst_query_time,
            more.worst_sample,
            more.worst_offset,
        )


def _plain(qc: QueryClass) -> QueryClass:
    """A class first seen in this range: its own sums are already the sequential ones (they started at 0.0)."""
    if not isinstance(qc, RecordingClass):
        return qc
    return QueryClass(**{f.name: getattr(qc, f.name) for f in fields(QueryClass)})


class Merged:
    """Classes of the ranges merged so far, in file order, and the `use` in force after them."""

    def __init__(self) -> None:
        self.classes: dict[str, QueryClass] = {}
        self.schema = ""

    def add(self, part: Partial, file_start: bool) -> None:
        """Merge the next range; `file_start`: it starts a file (whose parse inherits nothing)."""
        if file_start:
            self.schema = ""
        for fp, qc in part.classes.items():
            if fp == OVERFLOW_CLASS:
                raise Sequential
            if INHERITED_SCHEMA in qc.databases:
                renamed: dict[str, int] = {}
                _add_counts(renamed, qc.databases, {INHERITED_SCHEMA: self.schema})
                qc.databases = renamed
            have = self.classes.get(fp)
            if have is None:
                self.classes[fp] = _plain(qc)
            else:
                _merge_class(have, qc)
        if len(self.classes) > aggregate_module.MAX_CLASSES:
            raise Sequential
        if part.schema != INHERITED_SCHEMA:
            self.schema = part.schema
