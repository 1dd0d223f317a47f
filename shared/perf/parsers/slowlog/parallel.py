"""The CLI's slow-log digest on two cores: large logs cut into ranges that are parsed side by side.

`digest_files(paths)` answers exactly what `digest` of every path's entries, in order, answers:
- a plain log of at least `split_bytes` is cut into ranges of at most `max_range_bytes` (at least two)
  at strict `# Time:` lines (ranges.py); a gzip log's first 55 % is decompressed into a temporary file
  (deleted afterwards, at most `max_spool_bytes`, else the log is streamed in one pass) and parsed by the
  worker while this process parses the rest as it decompresses it (a rest over max_range_bytes is spooled
  and cut too);
- the ranges go in pairs: the first of a pair to one worker process (start method `spawn`: it inherits
  nothing but its arguments; started before the first range is ready), the second parsed here meanwhile;
  each range is aggregated on its own and merged in file order (merge.py: exact, sums replayed one by one);
- a class cap reached falls back to one sequential pass (every QueryClass field is one the merge knows:
  tests/unit/perf/test_slowlog_parallel.py checks it).
Small inputs (one log under split_bytes) take the one pass at once: a worker's start costs more.
Memory: two ranges' classes plus 32 bytes per entry of the ranges whose sums are replayed.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any, TypeVar

from shared.perf.parsers.slowlog.aggregate import QueryClass, aggregate, digest
from shared.perf.parsers.slowlog.aggregate import report as class_report
from shared.perf.parsers.slowlog.merge import (
    INHERITED_SCHEMA,
    Merged,
    Partial,
    RecordingClass,
    Sequential,
)
from shared.perf.parsers.slowlog.parser import (
    MAX_STATEMENT_BYTES,
    EntryReader,
    SlowEntry,
    is_gzip,
    open_log,
    parse,
    read_entries,
)
from shared.perf.parsers.slowlog.ranges import LiveRange, Range, SpoolTooLarge, plan, spooled_ranges

T = TypeVar("T")
SPLIT_BYTES = 32 * 1024 * 1024
MAX_RANGE_BYTES = 256 * 1024 * 1024
MAX_SPOOL_BYTES = 8 * 1024 * 1024 * 1024


def digest_range(rng: Range | LiveRange, max_statement_bytes: int = MAX_STATEMENT_BYTES) -> Partial:
    """Parse and aggregate one range (top-level and picklable: it runs in the worker process)."""
    reader = EntryReader(max_statement_bytes)
    if not rng.first:
        reader.schema = INHERITED_SCHEMA
    with ExitStack() as stack:
        if isinstance(rng, LiveRange):
            stream = rng.stream  # already at rng.start
        else:
            stream = stack.enter_context(open(rng.path, "rb"))
            stream.seek(rng.start)
        entries = read_entries(stream, reader, rng.start, rng.end)
        classes = aggregate(entries, new_class=RecordingClass if rng.record else QueryClass)
    return Partial(classes, reader.schema)


def _entries(paths: list[Path]) -> Iterator[SlowEntry]:
    for path in paths:
        with open_log(path) as stream:
            yield from parse(stream)


def _ranges(
    paths: list[Path], directory: str, split_bytes: int, max_range_bytes: int, max_spool_bytes: int
) -> Generator[Range | LiveRange, None, None]:
    """Every path's ranges in order; a gzip log's first range comes while the rest is being decompressed."""
    for i, path in enumerate(paths):
        record = i > 0  # the run's first range starts every sum: nothing to replay
        if is_gzip(path):
            target = os.path.join(directory, f"{i}.log")
            yield from spooled_ranges(
                str(path),
                target,
                split_bytes=split_bytes,
                max_range_bytes=max_range_bytes,
                max_spool_bytes=max_spool_bytes,
                record=record,
            )
        else:
            yield from plan(str(path), split_bytes=split_bytes, max_range_bytes=max_range_bytes, record=record)


def digest_files(
    paths: list[Path],
    *,
    split_bytes: int = SPLIT_BYTES,
    max_range_bytes: int = MAX_RANGE_BYTES,
    max_spool_bytes: int = MAX_SPOOL_BYTES,
) -> dict[str, Any]:
    """`digest` of the entries of every path in order (plain or gzip), large logs parsed on two cores."""
    if len(paths) == 1 and os.path.getsize(paths[0]) * (8 if is_gzip(paths[0]) else 1) < split_bytes:
        return digest(_entries(paths))
    try:
        with ExitStack() as stack:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="slowlog-"))
            # Closed before the directory goes: a suspended gzip spool keeps its files open until then.
            ranges = stack.enter_context(
                closing(_ranges(paths, directory, split_bytes, max_range_bytes, max_spool_bytes))
            )
            return class_report(_run(ranges, stack))
    except (Sequential, SpoolTooLarge):
        return digest(_entries(paths))


def _run(ranges: Iterator[Range | LiveRange], stack: ExitStack) -> dict[str, QueryClass]:
    """Ranges in pairs: the first of each to the worker, the second parsed here meanwhile; merged in order."""
    merged = Merged()
    pool = _pool(stack)
    _submit(pool, _warm_up)  # the worker starts (and imports) while the first ranges are planned or spooled
    for ahead in ranges:
        if isinstance(ahead, LiveRange):  # a stream: it stays here
            merged.add(digest_range(ahead), ahead.first)
            continue
        future = _submit(pool, digest_range, ahead)
        here = next(ranges, None)  # a gzip log is still being decompressed meanwhile
        mine = digest_range(here) if here is not None else None
        merged.add(_result(future, ahead), ahead.first)
        if here is not None and mine is not None:
            merged.add(mine, here.first)
    return merged.classes


def _pool(stack: ExitStack) -> Executor | None:
    """One worker process, or None where processes cannot be started (the ranges are then parsed here)."""
    try:
        context = multiprocessing.get_context("spawn")
        return stack.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=context))
    except (OSError, ImportError, RuntimeError):  # no /dev/shm semaphores, no process creation, ...
        return None


def _warm_up() -> None:
    """Nothing: submitted first so that the worker process starts early."""


def _submit(pool: Executor | None, fn: Callable[..., T], *args: Any) -> Future[T] | None:
    """fn(*args) in the worker, or None when there is no worker."""
    if pool is None:
        return None
    try:
        return pool.submit(fn, *args)
    except (OSError, RuntimeError):  # the pool could not start its worker
        return None


def _result(future: Future[Partial] | None, rng: Range | LiveRange) -> Partial:
    """The worker's answer; the range parsed here when there is no worker or it died (killed, out of memory)."""
    if future is not None:
        try:
            return future.result()
        except BrokenProcessPool:
            pass
    return digest_range(rng)
