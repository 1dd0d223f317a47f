"""Stream an SPX "full" trace into per-function aggregates and a call tree, with SPX's own UI rules.

The trace (format: ../shared/fixtures/spx/README.md) is `[events]` lines `<fn> <1|0> <v1..vN>` whose
values are cumulative readings, then `[functions]` names. Per function, as SPX's web UI computes them:
- calls: every end event, recursive calls included;
- inclusive: end minus start, summed only over calls with no open ancestor frame of the same
  function (recursion is not counted twice);
- exclusive: a call's inclusive minus its direct children's, summed over all its calls;
- recursion: the most same-function ancestors ever open (the UI's `@N` suffix).
Memory stays bounded: the stack is as deep as the program's (at most MAX_DEPTH), the call tree merges
identical paths and stops growing at MAX_TREE_NODES (deeper paths are counted in their last kept
ancestor). Per-function arrays are indexed by dense ids (in order of first appearance), so their size
follows the functions a trace calls, not the largest index it writes; an index outside the `[functions]`
table (or the metadata's called_function_count), more than MAX_FUNCTIONS functions or a line longer
than MAX_LINE_BYTES is a TraceFormatError. A trace without a `[functions]` table names its functions
`#<index>`, for indexes below MAX_UNNAMED_FUNCTIONS.

Speed: the trace is read in blocks of whole lines that numpy parses at once (`fromstring`), and the
events of a block are paired without a Python loop. With depth = the running sum of +1 (start) and
-1 (end), a start at depth d and the end that closes it are consecutive among the events of nesting
level d, so a stable sort by level pairs every call; a call's parent is the last start one level up
before it (a binary search). Frames still open at the end of a block are carried into the next one
as leading start events. Only the call tree's new paths and the repair of merged lines touch Python
per item. tests/unit/perf/spx_reference.py keeps the one-event-at-a-time version as the oracle.
A stream's next blocks are read (a gzip's decompressed) by a thread while a block is parsed (readahead.py;
`read_ahead=False` reads them inline, with the same profile and the same errors).

SPX's writer sometimes merges two event lines when many metrics are enabled (it drops the first
event's last value(s) and newline, sometimes gluing its last surviving value to the next event's
function index). Such lines are split back: the second event is the last N+1 fields plus its
function index, recovered from the stack (an end event closes the open frame); the first event's
lost values are taken from the second event's. Each repair is counted in `repaired_lines`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shared.perf.parsers.spx import readahead

MAX_TREE_NODES = 200_000
MAX_FUNCTIONS = 200_000
MAX_UNNAMED_FUNCTIONS = 65_536
MAX_DEPTH = 100_000
MAX_LINE_BYTES = 1024 * 1024
MAX_NAME_CHARS = 2048
BLOCK_BYTES = 4 * 1024 * 1024
_MAX_FN = 2**31 - 1  # function indexes beyond this are not SPX output; keeps tree keys inside int64
_STRIDE = 2**31


@dataclass
class FunctionStats:
    name: str
    calls: int = 0
    inclusive: list[float] = field(default_factory=list)
    exclusive: list[float] = field(default_factory=list)
    max_recursion: int = 0


@dataclass
class TreeNode:
    fn: int
    calls: int = 0
    inclusive: list[float] = field(default_factory=list)
    children: dict[int, int] = field(default_factory=dict)  # fn -> node index


@dataclass
class SpxProfile:
    metrics: list[str]
    functions: list[FunctionStats]
    tree: list[TreeNode]
    max_depth: int
    events: int
    totals: list[float]
    repaired_lines: int = 0
    malformed_lines: int = 0
    tree_truncated: bool = False

    @property
    def wall_time_ns(self) -> float:
        return self.totals[self.metrics.index("wt")] if "wt" in self.metrics else 0.0

    def function(self, name: str) -> FunctionStats:
        return next(f for f in self.functions if f.name == name)


class TraceFormatError(ValueError):
    pass


class _Frame:
    """An open call carried from one block to the next (or, during a repair, the stack the repair reads)."""

    __slots__ = ("children", "fn", "node", "start")

    def __init__(self, fn: int, start: np.ndarray, children: np.ndarray, node: int) -> None:
        self.fn, self.start, self.children, self.node = fn, start, children, node


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    """`a` extended with zero rows to `size` rows."""
    return np.concatenate((a, np.zeros((size - len(a), *a.shape[1:]), a.dtype)))


def _blocks(source: Any, read_ahead: bool = True) -> Iterator[bytes]:
    """Raw bytes from a binary stream (read in BLOCK_BYTES) or from an iterable of lines (joined)."""
    if hasattr(source, "read"):
        if read_ahead:
            yield from readahead.blocks(source, BLOCK_BYTES)
            return
        while piece := source.read(BLOCK_BYTES):
            yield piece
        return
    batch: list[bytes] = []
    size = 0
    for line in source:
        data = line.encode() if isinstance(line, str) else line
        batch.append(data if data.endswith(b"\n") else data + b"\n")
        size += len(data)
        if size >= BLOCK_BYTES:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)


def _parse_block(block: bytes, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(fn, flag, values) of a block of well-formed event lines, or None if numpy cannot read it all."""
    lines = block.count(b"\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # numpy warns (instead of failing) on junk
        try:
            data = np.fromstring(block, dtype=np.float64 if b"." in block else np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
    if data.size != lines * width:
        return None
    table = data.reshape(lines, width)
    fn, flag = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    if table.dtype == np.float64 and (np.any(table[:, 0] != fn) or np.any(table[:, 1] != flag)):
        return None
    return fn, flag, table[:, 2:].astype(np.float64)


class _Aggregator:
    def __init__(self, metrics: list[str], function_count: int | None) -> None:
        self.m = len(metrics)
        self.width = self.m + 2
        self.function_count = function_count
        size = min(max(function_count or 0, 16), 4096)  # grows with the functions seen, never by an index
        self.known = np.zeros(0, np.int64)  # raw function indexes seen, sorted
        self.known_dense = np.zeros(0, np.int64)  # their dense ids
        self.raw_of_dense: list[int] = []
        self.calls = np.zeros(size, np.int64)
        self.inclusive = np.zeros((size, self.m))
        self.exclusive = np.zeros((size, self.m))
        self.recursion = np.zeros(size, np.int64)
        self.stack: list[_Frame] = []
        self.node_fn: list[int] = [-1]
        self.node_children: dict[int, int] = {}  # parent node * _STRIDE + fn -> node
        self.node_calls = np.zeros(1024, np.int64)
        self.node_inclusive = np.zeros((1024, self.m))
        self.names: list[str] = []
        self.section = ""
        self.max_depth = self.events = self.repaired = self.malformed = 0
        self.truncated = False
        self.last = np.zeros(self.m)

    # -- reading -------------------------------------------------------------------------------------
    def feed(self, text: bytes) -> None:
        """Whole lines (ending in a newline): section headers, event lines, function names."""
        pos = 0
        while pos < len(text):
            if text.startswith(b"[", pos):
                end = text.find(b"\n", pos)
                self.section = text[pos:end].strip().decode("ascii", "replace")
                pos = end + 1
                continue
            nxt = text.find(b"\n[", pos)
            stop = len(text) if nxt < 0 else nxt + 1
            if self.section == "[events]":
                self._events(text[pos:stop])
            elif self.section == "[functions]":
                self.names.extend(
                    n[:MAX_NAME_CHARS].decode("utf-8", "replace") for n in text[pos:stop].split(b"\n")[:-1]
                )
                if len(self.names) > MAX_FUNCTIONS:
                    raise TraceFormatError(f"the [functions] table has more than {MAX_FUNCTIONS} names")
            pos = stop

    def _events(self, block: bytes) -> None:
        raw = np.frombuffer(block, np.uint8)
        ends = np.flatnonzero(raw == 10)
        spaces_per_line = np.diff(np.searchsorted(np.flatnonzero(raw == 32), ends), prepend=0)
        odd = np.flatnonzero(spaces_per_line != self.width - 1).tolist()
        begin = 0  # byte offset of the first line not yet applied
        line_starts = np.concatenate(([0], ends[:-1] + 1))
        for i in [*odd, len(ends)]:
            cut = int(line_starts[i]) if i < len(ends) else len(block)
            if cut > begin:
                self._clean_lines(block[begin:cut])
            if i < len(ends):
                self._odd_line(block[cut : int(ends[i])])
                begin = int(ends[i]) + 1

    def _clean_lines(self, block: bytes) -> None:
        parsed = _parse_block(block, self.width)
        if parsed is None:  # something numpy cannot read (letters, odd spacing): line by line
            for line in block.split(b"\n")[:-1]:
                self._odd_line(line)
            return
        self._apply(*parsed)

    def _odd_line(self, line: bytes) -> None:
        tokens = line.decode("ascii", "replace").split()
        if not tokens:
            return
        try:
            if len(tokens) == self.width:
                self._apply_list([(int(tokens[0]), tokens[1], [float(t) for t in tokens[2:]])])
            elif self.width < len(tokens) < 2 * self.width:
                repaired: list[tuple[int, str, list[float]]] = []
                _repair(
                    tokens,
                    self.width,
                    self.stack,
                    self.function_count,
                    lambda fn, flag, values: repaired.append((fn, flag, values)),
                )
                self._apply_list(repaired)
                self.repaired += 1
            else:
                self.malformed += 1
        except ValueError as exc:
            if isinstance(exc, TraceFormatError):
                raise
            self.malformed += 1

    def _apply_list(self, events: list[tuple[int, str, list[float]]]) -> None:
        for _, flag, _ in events:
            if flag not in ("0", "1"):
                raise TraceFormatError(f"event flag {flag!r} is neither 1 nor 0 (event {self.events + 1})")
        self._apply(
            np.array([e[0] for e in events], np.int64),
            np.array([int(e[1]) for e in events], np.int64),
            np.array([e[2] for e in events], np.float64).reshape(len(events), self.m),
        )

    # -- aggregation ---------------------------------------------------------------------------------
    def _apply(self, fn: np.ndarray, flag: np.ndarray, values: np.ndarray) -> None:
        n = len(fn)
        if n == 0:
            return
        bad_flag = np.flatnonzero((flag != 0) & (flag != 1))
        if bad_flag.size:
            raise TraceFormatError(
                f"event flag {int(flag[bad_flag[0]])!r} is neither 1 nor 0 (event {self.events + int(bad_flag[0]) + 1})"
            )
        if fn.min() < 0 or fn.max() > _MAX_FN:
            raise TraceFormatError(f"function index out of range near event {self.events + 1}")
        carried = len(self.stack)
        if carried:
            fn = np.concatenate((np.array([f.fn for f in self.stack], np.int64), fn))
            flag = np.concatenate((np.ones(carried, np.int64), flag))
            values = np.concatenate((np.array([f.start for f in self.stack]).reshape(carried, self.m), values))
        total = len(fn)
        delta = 2 * flag - 1
        depth = np.cumsum(delta)  # open frames after each event
        if depth.min() < 0:
            first = int(np.argmax(depth < 0))
            raise TraceFormatError(
                f"end event of function {int(fn[first])} with no open frame (event {self.events + first - carried + 1})"
            )
        self.max_depth = max(self.max_depth, int(depth.max()))
        if self.max_depth > MAX_DEPTH:
            raise TraceFormatError(
                f"calls nest deeper than {MAX_DEPTH} frames "
                f"(event {self.events + int(np.argmax(depth > MAX_DEPTH)) - carried + 1})"
            )
        level = depth - flag  # a start's level is the depth before it, an end's the depth after it
        order = np.argsort(level, kind="stable")
        s_level, s_flag = level[order], flag[order]
        closes_next = np.zeros(total, bool)
        closes_next[:-1] = (s_level[1:] == s_level[:-1]) & (s_flag[1:] == 0)
        is_start = s_flag == 1
        paired = np.flatnonzero(is_start & closes_next)
        starts, ends = order[paired], order[paired + 1]
        still_open = order[np.flatnonzero(is_start & ~closes_next)]  # by level: the new stack
        wrong = np.flatnonzero(fn[starts] != fn[ends])
        if wrong.size:
            k = wrong[np.argmin(ends[wrong])]
            raise TraceFormatError(
                f"end event of function {int(fn[ends[k]])} does not close the open frame {int(fn[starts[k]])} "
                f"(event {self.events + int(ends[k]) - carried + 1})"
            )

        # Each start's parent: the last start one level up before it.
        all_starts = order[np.flatnonzero(is_start)]  # sorted by (level, index)
        key = level[all_starts] * (total + 1) + all_starts
        parent = np.full(total, -1, np.int64)
        nested = all_starts[level[all_starts] > 0]
        parent[nested] = all_starts[np.searchsorted(key, (level[nested] - 1) * (total + 1) + nested) - 1]

        inclusive = values[ends] - values[starts]
        children = np.zeros((total, self.m))
        has_parent = parent[starts] >= 0
        for k in range(self.m):
            children[:, k] = np.bincount(parent[starts][has_parent], weights=inclusive[has_parent, k], minlength=total)
        for i, frame in enumerate(self.stack):
            children[i] += frame.children
        exclusive = inclusive - children[starts]

        dense = self._dense(fn)
        fns = dense[starts]
        self._grow_functions(len(self.raw_of_dense))
        size = len(self.calls)
        self.calls += np.bincount(fns, minlength=size)
        outermost = self._outermost(dense, starts, ends, still_open, total)
        for k in range(self.m):
            self.exclusive[:, k] += np.bincount(fns, weights=exclusive[:, k], minlength=size)
            self.inclusive[:, k] += np.bincount(fns[outermost], weights=inclusive[outermost, k], minlength=size)
        self._recursion(dense, delta)

        node = self._tree_nodes(fn, level, parent, all_starts, carried, total)
        call_nodes = node[starts]
        self._grow_nodes(len(self.node_fn))
        self.node_calls[: len(self.node_fn)] += np.bincount(call_nodes, minlength=len(self.node_fn))
        counted = call_nodes != 0
        for k in range(self.m):
            self.node_inclusive[: len(self.node_fn), k] += np.bincount(
                call_nodes[counted], weights=inclusive[counted, k], minlength=len(self.node_fn)
            )

        self.stack = [_Frame(int(fn[i]), values[i].copy(), children[i].copy(), int(node[i])) for i in still_open]
        self.events += n
        self.last = values[-1].copy()

    def _dense(self, fn: np.ndarray) -> np.ndarray:
        """Dense ids of raw function indexes; new indexes are checked and numbered in order of appearance."""
        known = self.known
        pos = np.searchsorted(known, fn)
        hit = np.zeros(len(fn), bool) if not len(known) else known[np.minimum(pos, len(known) - 1)] == fn
        if not hit.all():
            fresh_at = np.flatnonzero(~hit)
            fresh, first = np.unique(fn[fresh_at], return_index=True)
            fresh = fresh[np.argsort(first, kind="stable")]  # in order of appearance
            limit = self.function_count if self.function_count is not None else MAX_FUNCTIONS
            if int(fresh.max()) >= limit:
                bad = int(fresh.max())
                if self.function_count is not None:
                    raise TraceFormatError(
                        f"function index {bad} is outside the [functions] table "
                        f"({limit} functions, the metadata's called_function_count)"
                    )
                raise TraceFormatError(f"function index {bad} is over the limit of {MAX_FUNCTIONS} functions per trace")
            if len(self.raw_of_dense) + len(fresh) > MAX_FUNCTIONS:
                raise TraceFormatError(f"the trace calls more than {MAX_FUNCTIONS} distinct functions")
            ids = np.arange(len(self.raw_of_dense), len(self.raw_of_dense) + len(fresh), dtype=np.int64)
            self.raw_of_dense.extend(fresh.tolist())
            merged = np.concatenate((known, fresh))
            order = np.argsort(merged, kind="stable")
            self.known, self.known_dense = merged[order], np.concatenate((self.known_dense, ids))[order]
            known = self.known
            pos = np.searchsorted(known, fn)
        return self.known_dense[pos]

    @staticmethod
    def _outermost(
        fn: np.ndarray, starts: np.ndarray, ends: np.ndarray, still_open: np.ndarray, total: int
    ) -> np.ndarray:
        """Which closed calls have no enclosing call of the same function (their inclusive counts once)."""
        call_start = np.concatenate((starts, still_open))
        call_end = np.concatenate((ends, np.full(len(still_open), total, np.int64)))
        call_fn = fn[call_start]
        by_fn = np.lexsort((call_start, call_fn))
        span = total + 1
        end_key = call_fn[by_fn] * span + call_end[by_fn]
        reach = np.empty_like(end_key)
        reach[0] = -1
        reach[1:] = np.maximum.accumulate(end_key)[
            :-1
        ]  # furthest end among earlier calls (same fn, by construction of the keys)
        inside = np.empty(len(by_fn), bool)
        inside[by_fn] = reach > call_fn[by_fn] * span + call_start[by_fn]
        return ~inside[: len(starts)]

    def _recursion(self, fn: np.ndarray, delta: np.ndarray) -> None:
        """Most frames of one function open at once, minus one (carried frames are leading starts)."""
        by_fn = np.argsort(fn, kind="stable")
        f, d = fn[by_fn], delta[by_fn]
        running = np.cumsum(d)
        first = np.concatenate(([0], np.flatnonzero(np.diff(f)) + 1))
        sizes = np.diff(np.concatenate((first, [len(f)])))
        open_now = running - np.repeat(running[first] - d[first], sizes)
        peak = np.maximum.reduceat(open_now, first) - 1
        ids = f[first]
        self.recursion[ids] = np.maximum(self.recursion[ids], peak)

    def _tree_nodes(
        self, fn: np.ndarray, level: np.ndarray, parent: np.ndarray, all_starts: np.ndarray, carried: int, total: int
    ) -> np.ndarray:
        """The call-tree node of every start event, level by level (a node is its parent's node + fn)."""
        node = np.zeros(total, np.int64)
        for i, frame in enumerate(self.stack):
            node[i] = frame.node
        fresh = all_starts[all_starts >= carried]
        if not fresh.size:
            return node
        levels = level[fresh]
        bounds = np.concatenate(([0], np.flatnonzero(np.diff(levels)) + 1, [len(fresh)]))
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=False):
            events = fresh[a:b]
            parent_node = node[parent[events]] if levels[a] > 0 else np.zeros(b - a, np.int64)
            keys, inverse = np.unique(parent_node * _STRIDE + fn[events], return_inverse=True)
            mapped = np.array([self._node(k) for k in keys.tolist()], np.int64)
            node[events] = mapped[inverse]
        return node

    def _node(self, key: int) -> int:
        found = self.node_children.get(key)
        if found is not None:
            return found
        parent = key // _STRIDE
        if len(self.node_fn) >= MAX_TREE_NODES:
            self.truncated = True
            return parent
        self.node_fn.append(key % _STRIDE)
        self.node_children[key] = len(self.node_fn) - 1
        return len(self.node_fn) - 1

    def _grow_functions(self, needed: int) -> None:
        if needed > len(self.calls):
            size = max(needed, 2 * len(self.calls))
            self.calls, self.recursion, self.inclusive, self.exclusive = (
                _grown(a, size) for a in (self.calls, self.recursion, self.inclusive, self.exclusive)
            )

    def _grow_nodes(self, needed: int) -> None:
        if needed > len(self.node_calls):
            size = max(needed, 2 * len(self.node_calls))
            self.node_calls, self.node_inclusive = _grown(self.node_calls, size), _grown(self.node_inclusive, size)

    def profile(self, metrics: list[str]) -> SpxProfile:
        if self.stack:
            raise TraceFormatError(f"{len(self.stack)} frame(s) left open at the end of the trace")
        top = max(self.raw_of_dense, default=-1)
        if self.names and top >= len(self.names):
            raise TraceFormatError(f"function index {top} is outside the [functions] table ({len(self.names)} names)")
        if not self.names and top >= MAX_UNNAMED_FUNCTIONS:
            raise TraceFormatError(
                f"function index {top} with no [functions] table (at most {MAX_UNNAMED_FUNCTIONS} unnamed functions)"
            )
        count = max(len(self.names), top + 1)
        self._grow_functions(len(self.raw_of_dense))
        dense_of = dict(zip(self.raw_of_dense, range(len(self.raw_of_dense)), strict=False))
        functions = []
        for i in range(count):
            name = self.names[i] if i < len(self.names) else f"#{i}"
            d = dense_of.get(i)
            if d is None:
                functions.append(FunctionStats(name=name, inclusive=[0.0] * self.m, exclusive=[0.0] * self.m))
            else:
                functions.append(
                    FunctionStats(
                        name=name,
                        calls=int(self.calls[d]),
                        inclusive=self.inclusive[d].tolist(),
                        exclusive=self.exclusive[d].tolist(),
                        max_recursion=int(self.recursion[d]),
                    )
                )
        tree = [
            TreeNode(fn=f, calls=int(c), inclusive=incl)
            for f, c, incl in zip(
                self.node_fn,
                self.node_calls[: len(self.node_fn)].tolist(),
                self.node_inclusive[: len(self.node_fn)].tolist(),
                strict=False,
            )
        ]
        for key, child in self.node_children.items():
            tree[key // _STRIDE].children[key % _STRIDE] = child
        return SpxProfile(
            metrics=list(metrics),
            functions=functions,
            tree=tree,
            max_depth=self.max_depth,
            events=self.events,
            totals=self.last.tolist(),
            repaired_lines=self.repaired,
            malformed_lines=self.malformed,
            tree_truncated=self.truncated,
        )


def aggregate_trace(
    source: Any, metrics: list[str], function_count: int | None = None, *, read_ahead: bool = True
) -> SpxProfile:
    """Aggregate a decompressed trace: a binary stream (read in blocks) or an iterable of lines.

    `read_ahead`: a stream's next block is read (decompressed) by a thread while this one parses the
    block before; the result and the errors are the same without it.
    """
    agg = _Aggregator(metrics, function_count)
    pending = b""
    for piece in _blocks(source, read_ahead):
        data = pending + piece
        cut = data.rfind(b"\n") + 1
        agg.feed(data[:cut])
        pending = data[cut:]
        if len(pending) > MAX_LINE_BYTES:
            raise TraceFormatError(f"a line longer than {MAX_LINE_BYTES} bytes (after event {agg.events})")
    if pending:
        agg.feed(pending + b"\n")
    return agg.profile(metrics)


def _floats(tokens: list[str]) -> list[float]:
    return [float(t) for t in tokens]


def _repair(tokens: list[str], width: int, stack: list[_Frame], function_count: int | None, apply: Any) -> None:
    """Split a merged line into its two events (see the module docstring)."""
    second = tokens[-(width - 1) :]  # flag + values of the second event
    before = tokens[: -(width - 1)]
    flag2 = second[0]
    first_fn, first_flag = int(before[0]), before[1]
    # The frame the second event closes, if it is an end: after the first event has been applied.
    if first_flag == "0":
        expected = stack[-2].fn if len(stack) >= 2 else None
    else:
        expected = stack[-1].fn if stack else None
        if flag2 == "0":
            expected = first_fn  # a start immediately followed by its own end
    separate = before[-1]
    if flag2 == "0" and expected is not None and separate == str(expected) and len(before) - 1 <= width:
        fn2, first_values = expected, before[2:-1]
    else:
        glued = before[-1]
        if flag2 == "0" and expected is not None and glued.endswith(str(expected)) and len(glued) > len(str(expected)):
            fn2, head = expected, glued[: -len(str(expected))]
        else:
            # A start event: the longest suffix that is a valid function index.
            limit = function_count if function_count is not None else 10**9
            split = next((k for k in range(1, len(glued)) if int(glued[k:]) < limit), len(glued) - 1)
            fn2, head = int(glued[split:]), glued[:split]
        first_values = [*before[2:-1], head]
    values2 = _floats(second[1:])
    values1 = _floats(first_values)
    values1 += values2[len(values1) :]  # the first event's lost trailing values: the nearest reading there is
    apply(first_fn, first_flag, values1)
    apply(fn2, flag2, values2)
