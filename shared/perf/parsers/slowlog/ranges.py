"""Where the parallel digest cuts a slow log: at strict `# Time:` lines, the one line that always opens an entry.

A `# Time:` line (MariaDB or MySQL form, whole) is read as a time line wherever it is, even inside a
statement, so a range that starts on one inherits no entry and no time from the range before; only the
last `use db` carries over (see merge.INHERITED_SCHEMA). Cuts are looked for at or after even offsets
(`plan`); a log with no such line after an offset is not cut there.

A gzip log is decompressed into a temporary file (`spooled_ranges`): once about half of it (by the size
that the gzip trailer states; 55 %) is on disk, its first range is handed out, so that it is parsed while the
rest is still being decompressed; that rest, when the trailer says it is at most max_range_bytes, is not
written but parsed as it is decompressed (a LiveRange). At most `max_spool_bytes` (and half the free space) are written;
beyond that SpoolTooLarge is raised and the caller reads the log as a stream instead.
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from shared.perf.parsers.slowlog.parser import time_line

_SEARCH_BYTES = 1024 * 1024
_OVERLAP = 64 * 1024  # a `# Time:` line is far shorter: one seen in the overlap is seen whole
_SPOOL_BLOCK = 4 * 1024 * 1024
_TIME_LINE = re.compile(rb"\n# Time: ")


class SpoolTooLarge(Exception):
    """The decompressed log would pass max_spool_bytes or half the free space."""


@dataclass(frozen=True)
class Range:
    """Bytes [start, end) of a plain log. `first`: the file's first range (nothing inherited); `record`: keep
    each class's values for the merge (every range but the run's first)."""

    path: str
    start: int
    end: int
    first: bool
    record: bool = True


def next_time_line(stream: BinaryIO, target: int, size: int, *, complete: bool = True) -> int | None:
    """The first line start >= target (< size) whose whole line is a `# Time:` line the parser takes.

    `complete`: size is the file's end (else bytes up to size are all there is so far, the last line may be cut).
    """
    pos = target - 1  # the newline before a line that starts right at target (target >= 1)
    while pos < size:
        stream.seek(pos)
        chunk = stream.read(min(_SEARCH_BYTES + _OVERLAP, size - pos))
        if not chunk:
            return None
        for m in _TIME_LINE.finditer(chunk):
            if m.start() >= _SEARCH_BYTES:
                break  # the next read starts there
            line_end = chunk.find(b"\n", m.start() + 1)
            if line_end < 0:
                if not complete or pos + len(chunk) < size:
                    continue  # not seen whole: not a cut point (a later one will do)
                line_end = len(chunk)
            body = chunk[m.start() + 1 : line_end].rstrip(b"\r\n")
            if time_line(body):
                return pos + m.start() + 1
        pos += _SEARCH_BYTES
    return None


def plan(
    path: str, *, start: int = 0, split_bytes: int, max_range_bytes: int, first: bool = True, record: bool = True
) -> list[Range]:
    """The ranges of [start, end of file): one when it is smaller than split_bytes or has no `# Time:` to cut at.

    `first`/`record` are the first range's flags (later ones inherit and record).
    """
    size = os.path.getsize(path)
    points: list[int] = []
    if size - start >= split_bytes:
        parts = max(2, math.ceil((size - start) / max(1, max_range_bytes)))
        with open(path, "rb") as stream:
            for i in range(1, parts):
                target = max(start + (size - start) * i // parts, points[-1] + 1 if points else start + 1)
                found = next_time_line(stream, target, size)
                if found is not None and found not in points:
                    points.append(found)
    bounds = [start, *points, size]
    return [
        Range(path, a, b, first if i == 0 else False, record if i == 0 else True)
        for i, (a, b) in enumerate(itertools.pairwise(bounds))
    ]


def _stated_size(path: str) -> int:
    """The uncompressed size in the gzip trailer (modulo 4 GiB, last member only: a hint, never trusted)."""
    with open(path, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        if stream.tell() < 4:
            return 0
        stream.seek(-4, os.SEEK_END)
        return int.from_bytes(stream.read(4), "little")


@dataclass(frozen=True)
class LiveRange:
    """The rest of a gzip log from byte `start`, read from the stream that is decompressing it: parsed in this
    process only (a stream does not pickle), and never a file's first range."""

    stream: BinaryIO
    start: int
    first: bool = False
    record: bool = True
    end: None = None


class _Rest(io.RawIOBase):
    """The bytes of a gzip log from the cut: those already spooled (`spooled`, `left` of them), then the rest
    as `source` decompresses it."""

    def __init__(self, spooled: BinaryIO, left: int, source: BinaryIO) -> None:
        self.spooled, self.left, self.source = spooled, left, source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = len(buffer)
        data = b""
        if self.left > 0:
            data = self.spooled.read(min(want, self.left))
            self.left -= len(data)
        if not data:
            data = self.source.read(want)
        buffer[: len(data)] = data
        return len(data)


def spooled_ranges(
    path: str, target: str, *, split_bytes: int, max_range_bytes: int, max_spool_bytes: int, record: bool
) -> Iterator[Range | LiveRange]:
    """The ranges of a gzip log decompressed into `target`, the first one handed out halfway through."""
    room = min(max_spool_bytes, shutil.disk_usage(os.path.dirname(target) or ".").free // 2)
    stated = _stated_size(path)
    # A little past the middle: the first range starts while the rest is still being decompressed.
    half = stated * 11 // 20 if stated >= split_bytes else None
    cut: int | None = None
    written = 0
    with gzip.open(path, "rb") as source, open(target, "w+b") as sink:
        while block := source.read(_SPOOL_BLOCK):
            written += len(block)
            if written > room:
                raise SpoolTooLarge(path)
            sink.write(block)
            if half is not None and cut is None and written >= half + _SEARCH_BYTES:
                sink.flush()
                cut = next_time_line(sink, half, written, complete=False)
                if cut is not None:
                    yield Range(target, 0, cut, True, record)
                    if stated - cut <= max_range_bytes:  # the rest, parsed here as it is decompressed
                        with open(target, "rb") as spooled:
                            spooled.seek(cut)
                            rest = _Rest(spooled, written - cut, cast(BinaryIO, source))
                            yield LiveRange(cast(BinaryIO, io.BufferedReader(rest, _SPOOL_BLOCK)), cut)
                        return
                elif written >= half + 64 * _SEARCH_BYTES:
                    half = None  # no `# Time:` line near the middle: cut once it is all there
                sink.seek(0, os.SEEK_END)
    if cut is None:
        yield from plan(target, split_bytes=split_bytes, max_range_bytes=max_range_bytes, record=record)
    else:
        yield from plan(target, start=cut, split_bytes=split_bytes, max_range_bytes=max_range_bytes, first=False)
