"""The CLI's slow-log digest on two cores: a large log is cut at `# Time:` lines and its ranges parsed side by side.

`digest_files(paths)` answers exactly what `digest(entries of every path, in order)` answers, only faster:
- a plain log of at least `split_bytes` is cut into ranges of at most `max_range_bytes` (at least two),
  each starting at a strict `# Time:` line (found at or after an even cut). Such a line always opens an
  entry, and so no entry spans two ranges and no range inherits a time; the one state a range does inherit,
  the last `use db`, is read as a placeholder schema and renamed when the ranges are merged in order;
- a gzip log is first decompressed to a temporary file (deleted afterwards; at most `max_spool_bytes`,
  else it is digested as a stream), then cut the same way;
- the ranges are parsed and aggregated in pairs, the first of each pair here and the second in one worker
  process (start method `spawn`: nothing inherited but the arguments), and merged in file order. Counts,
  buckets, databases and users add up; min/max, first/last seen and the worst sample keep the earlier
  range's on ties (as the sequential `>`/`<` tests do); a class's float sums are replayed value by value
  onto the earlier ranges' sum, so they round exactly as one sequential pass would.
- when the classes of all ranges reach MAX_CLASSES (the overflow class then depends on the order of
  arrival) or QueryClass has fields this merge does not know, the whole input is digested sequentially.
Memory: two ranges' classes plus 32 bytes per entry of the later range of each pair (its values to replay).
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import itertools
import math
import multiprocessing
import operator
import os
import re
import shutil
import tempfile
from array import array
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.perf.parsers.slowlog.aggregate import (
    MAX_CLASSES,
    OVERFLOW_CLASS,
    Metric,
    QueryClass,
    _naive,
    aggregate,
    digest,
)
from shared.perf.parsers.slowlog.aggregate import report as class_report
from shared.perf.parsers.slowlog.parser import (
    _TIME_MARIADB,
    _TIME_MYSQL,
    MAX_STATEMENT_BYTES,
    EntryReader,
    SlowEntry,
    open_log,
    parse,
    read_entries,
)

SPLIT_BYTES = 32 * 1024 * 1024
MAX_RANGE_BYTES = 256 * 1024 * 1024
MAX_SPOOL_BYTES = 8 * 1024 * 1024 * 1024
_SEARCH_BYTES = 1024 * 1024
# The schema a range inherits from the one before it, until the merge knows it. A lone surrogate: no
# `use` line or Schema: field can decode to it (they are decoded with errors="replace").
INHERITED_SCHEMA = "\udc80inherited"
_METRICS = ("query_time", "lock_time", "rows_sent", "rows_examined")
_MERGED_FIELDS = frozenset(
    {"fingerprint", "count", *_METRICS, "databases", "users", "first_seen", "last_seen", "worst_query_time"}
    | {"worst_sample", "worst_offset", "truncated"}
)
_TIME_LINE = re.compile(rb"\n# Time: ")


class _Sequential(Exception):
    """The ranges cannot be merged exactly (the class cap was reached): digest the input in one pass."""


@dataclass(frozen=True)
class Range:
    """Bytes [start, end) of a plain log; `first`: the file's first range (nothing inherited); `record`: keep
    each class's values for the merge (every range but the run's first)."""

    path: str
    start: int
    end: int
    first: bool
    record: bool = True


@dataclass
class _RecordingClass(QueryClass):
    """A class that also keeps each entry's four values in order, for the merge to replay its sums."""

    values: array[float] = field(default_factory=lambda: array("d"))

    def add(self, e: SlowEntry) -> None:
        super().add(e)
        self.values.extend((e.query_time, e.lock_time, e.rows_sent, e.rows_examined))


@dataclass
class Partial:
    """One range aggregated: its classes (recording ones unless it is a file's first range), last `use`."""

    classes: dict[str, QueryClass]
    schema: str


def digest_range(rng: Range, max_statement_bytes: int = MAX_STATEMENT_BYTES) -> Partial:
    """Parse and aggregate one range (top-level and picklable: it runs in the worker process)."""
    reader = EntryReader(max_statement_bytes)
    if not rng.first:
        reader.schema = INHERITED_SCHEMA
    with open(rng.path, "rb") as stream:
        stream.seek(rng.start)
        entries = read_entries(stream, reader, rng.start, rng.end)
        classes = aggregate(entries, new_class=_RecordingClass) if rng.record else aggregate(entries)
    return Partial(classes, reader.schema)


def cut_points(path: str, size: int, parts: int) -> list[int]:
    """Offsets of strict `# Time:` lines at or after each of the parts - 1 even cuts (fewer when lines are rare)."""
    points: list[int] = []
    with open(path, "rb") as stream:
        for i in range(1, parts):
            target = max(size * i // parts, points[-1] + 1 if points else 1)
            found = _next_time_line(stream, target, size)
            if found is not None and found not in points:
                points.append(found)
    return points


def _next_time_line(stream: Any, target: int, size: int) -> int | None:
    """The first line start >= target whose line is a `# Time:` line the parser takes (both formats)."""
    pos = target - 1  # the newline before a line that starts right at target
    while pos < size:
        stream.seek(pos)
        chunk = stream.read(_SEARCH_BYTES + 64 * 1024)  # the overlap holds a whole `# Time:` line
        if not chunk:
            return None
        for m in _TIME_LINE.finditer(chunk):
            if m.start() >= _SEARCH_BYTES:
                break  # the next read starts there
            line_end = chunk.find(b"\n", m.start() + 1)
            if line_end < 0 and pos + len(chunk) < size:
                continue  # not seen whole: not a cut point (a later one will do)
            if line_end < 0:
                line_end = len(chunk)
            body = chunk[m.start() + 1 : line_end].rstrip(b"\r\n")
            if _TIME_MARIADB.match(body) or _TIME_MYSQL.match(body):
                return pos + m.start() + 1
        pos += _SEARCH_BYTES
    return None


def plan(path: str, *, split_bytes: int = SPLIT_BYTES, max_range_bytes: int = MAX_RANGE_BYTES) -> list[Range]:
    """The ranges of one plain log: one when it is smaller than split_bytes or has no `# Time:` line to cut at."""
    size = os.path.getsize(path)
    if size < split_bytes:
        return [Range(path, 0, size, True)]
    parts = max(2, math.ceil(size / max(1, max_range_bytes)))
    bounds = [0, *cut_points(path, size, parts), size]
    return [Range(path, a, b, i == 0) for i, (a, b) in enumerate(itertools.pairwise(bounds))]


def _merge_counts(into: dict[Any, int], more: dict[Any, int], rename: dict[Any, Any]) -> None:
    # In `more`'s order: keys new to `into` land where a sequential pass would have added them.
    for key, n in more.items():
        key = rename.get(key, key)
        into[key] = into.get(key, 0) + n


def _merge_metric(into: Metric, more: Metric, values: array[float], column: int) -> None:
    into.total = functools.reduce(operator.add, values[column::4], into.total)
    into.count += more.count
    into.minimum = min(into.minimum, more.minimum)  # min/max answer their first argument on ties
    into.maximum = max(into.maximum, more.maximum)
    _merge_counts(into.buckets, more.buckets, {})


def _merge_class(into: QueryClass, more: QueryClass) -> None:
    """`more` (a later range's class) added to `into` as if its entries had followed into's."""
    values = more.values if isinstance(more, _RecordingClass) else array("d")
    for column, name in enumerate(_METRICS):
        _merge_metric(getattr(into, name), getattr(more, name), values, column)
    into.count += more.count
    into.truncated += more.truncated
    _merge_counts(into.databases, more.databases, {})
    _merge_counts(into.users, more.users, {})
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
    """A later range's class seen first: its own sums are already the sequential ones (they started at 0.0)."""
    if not isinstance(qc, _RecordingClass):
        return qc
    return QueryClass(**{f.name: getattr(qc, f.name) for f in dataclasses.fields(QueryClass)})


class _Merged:
    """Classes of the ranges merged so far, in file order, and the `use` in force after them."""

    def __init__(self) -> None:
        self.classes: dict[str, QueryClass] = {}
        self.schema = ""

    def add(self, part: Partial, first: bool) -> None:
        if first:
            self.schema = ""  # a new file's parse starts afresh
        schema = self.schema
        for fp, qc in part.classes.items():
            if fp == OVERFLOW_CLASS:
                raise _Sequential
            if not first:
                _rename_schema(qc, schema)
            have = self.classes.get(fp)
            if have is None:
                self.classes[fp] = _plain(qc)
            else:
                _merge_class(have, qc)
        if len(self.classes) > MAX_CLASSES:
            raise _Sequential
        if part.schema != INHERITED_SCHEMA:
            self.schema = part.schema


def _rename_schema(qc: QueryClass, schema: str) -> None:
    if INHERITED_SCHEMA in qc.databases:
        renamed: dict[str, int] = {}
        _merge_counts(renamed, qc.databases, {INHERITED_SCHEMA: schema})
        qc.databases = renamed


def _entries(paths: list[Path]) -> Iterator[SlowEntry]:
    for path in paths:
        with open_log(path) as stream:
            yield from parse(stream)


def _spool(path: Path, directory: str, max_spool_bytes: int) -> str | None:
    """A gzip log decompressed into `directory`; None when it is larger than max_spool_bytes or the free space."""
    room = min(max_spool_bytes, shutil.disk_usage(directory).free // 2)
    target = os.path.join(directory, f"{len(os.listdir(directory))}.log")
    written = 0
    with gzip.open(path, "rb") as source, open(target, "wb") as sink:
        while block := source.read(4 * 1024 * 1024):
            written += len(block)
            if written > room:
                return None
            sink.write(block)
    return target


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def digest_files(
    paths: list[Path],
    *,
    split_bytes: int = SPLIT_BYTES,
    max_range_bytes: int = MAX_RANGE_BYTES,
    max_spool_bytes: int = MAX_SPOOL_BYTES,
) -> dict[str, Any]:
    """`digest` of the entries of every path in order (plain or gzip), large logs parsed on two cores."""
    if {f.name for f in dataclasses.fields(QueryClass)} != _MERGED_FIELDS:
        return digest(_entries(paths))  # a field this merge does not know: stay exact
    if len(paths) == 1 and os.path.getsize(paths[0]) * (8 if _is_gzip(paths[0]) else 1) < split_bytes:
        return digest(_entries(paths))  # small: one pass costs less than a worker's start
    with ExitStack() as stack:
        directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="slowlog-"))
        ranges: list[Range] = []
        for path in paths:
            source = _spool(path, directory, max_spool_bytes) if _is_gzip(path) else str(path)
            if source is None:
                return digest(_entries(paths))  # too large to spool: stream it
            ranges.extend(plan(source, split_bytes=split_bytes, max_range_bytes=max_range_bytes))
        ranges[0] = dataclasses.replace(ranges[0], record=False)  # its sums start the run: nothing to replay
        try:
            return class_report(_run(ranges, stack))
        except _Sequential:
            return digest(_entries(paths))


def _run(ranges: list[Range], stack: ExitStack) -> dict[str, QueryClass]:
    """Ranges in pairs: the second of each in the worker while this process parses the first; merged in order."""
    merged = _Merged()
    pool: Executor | None = None
    i = 0
    while i < len(ranges):
        ahead = None
        if i + 1 < len(ranges):
            if pool is None:
                pool = stack.enter_context(
                    ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
                )
            ahead = pool.submit(digest_range, ranges[i + 1])
        merged.add(digest_range(ranges[i]), ranges[i].first)
        if ahead is not None:
            merged.add(ahead.result(), ranges[i + 1].first)
        i += 2
    return merged.classes
