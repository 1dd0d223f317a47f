"""The first, line-by-line SPX aggregator, kept as the test oracle for the vectorised one.

It is the direct transcription of SPX's UI rules (a Python stack, one event at a time): slow (about 28x
`zcat | wc -l`) but easy to check by hand. tests/unit/perf/test_spx_trace.py compares both on every
fixture and on random traces; shared/perf/parsers/spx/trace.py documents the rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from shared.perf.parsers.spx.trace import FunctionStats, SpxProfile, TraceFormatError, TreeNode, _floats, _repair

MAX_TREE_NODES = 200_000


class _Frame:
    __slots__ = ("children", "fn", "node", "start")

    def __init__(self, fn: int, start: list[float], node: int) -> None:
        self.fn, self.start, self.node = fn, start, node
        self.children = [0.0] * len(start)


class _Aggregation:
    """The running state of one trace: a Python stack, one event at a time."""

    def __init__(self, metrics: list[str], function_count: int | None) -> None:
        m = len(metrics)
        self.metrics = metrics
        self.function_count = function_count
        self.m = m
        self.width = m + 2
        self.stack: list[_Frame] = []
        self.open_count: dict[int, int] = {}
        self.calls: dict[int, int] = {}
        self.inclusive: dict[int, list[float]] = {}
        self.exclusive: dict[int, list[float]] = {}
        self.recursion: dict[int, int] = {}
        self.tree: list[TreeNode] = [TreeNode(fn=-1, inclusive=[0.0] * m)]
        self.truncated = False
        self.names: list[str] = []
        self.section = ""
        self.max_depth = self.events = self.repaired = self.malformed = 0
        self.last = [0.0] * m

    def start(self, fn: int, values: list[float]) -> None:
        stack, tree = self.stack, self.tree
        parent_node = stack[-1].node if stack else 0
        node = tree[parent_node].children.get(fn)
        if node is None:
            if len(tree) < MAX_TREE_NODES:
                node = len(tree)
                tree.append(TreeNode(fn=fn, inclusive=[0.0] * self.m))
                tree[parent_node].children[fn] = node
            else:
                node, self.truncated = parent_node, True
        stack.append(_Frame(fn, values, node))
        depth_same = self.open_count.get(fn, 0)
        self.open_count[fn] = depth_same + 1
        if depth_same > self.recursion.get(fn, 0):
            self.recursion[fn] = depth_same
        if len(stack) > self.max_depth:
            self.max_depth = len(stack)

    def end(self, fn: int, values: list[float]) -> None:
        stack, m = self.stack, self.m
        if not stack or stack[-1].fn != fn:
            raise TraceFormatError(
                f"end event of function {fn} does not close the open frame "
                f"{stack[-1].fn if stack else None} (event {self.events})"
            )
        frame = stack.pop()
        incl = [e - s for e, s in zip(values, frame.start, strict=False)]
        excl = [i - c for i, c in zip(incl, frame.children, strict=False)]
        self.calls[fn] = self.calls.get(fn, 0) + 1
        acc = self.exclusive.setdefault(fn, [0.0] * m)
        for k in range(m):
            acc[k] += excl[k]
        self.open_count[fn] -= 1
        if self.open_count[fn] == 0:  # the outermost frame of this function: count its inclusive once
            acc_i = self.inclusive.setdefault(fn, [0.0] * m)
            for k in range(m):
                acc_i[k] += incl[k]
        node = self.tree[frame.node]
        node.calls += 1
        if frame.node != 0:
            for k in range(m):
                node.inclusive[k] += incl[k]
        if stack:
            parent = stack[-1].children
            for k in range(m):
                parent[k] += incl[k]

    def apply(self, fn: int, flag: str, values: list[float]) -> None:
        self.events += 1
        self.last = values
        if flag == "1":
            self.start(fn, values)
        elif flag == "0":
            self.end(fn, values)
        else:
            raise TraceFormatError(f"event flag {flag!r} is neither 1 nor 0 (event {self.events})")

    def feed(self, raw: bytes | str) -> None:
        line = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
        line = line.rstrip("\n")
        if line.startswith("["):
            self.section = line
            return
        if self.section == "[functions]":
            self.names.append(line)
            return
        if self.section != "[events]" or not line:
            return
        tokens = line.split()
        width = self.width
        if len(tokens) == width:
            self.apply(int(tokens[0]), tokens[1], _floats(tokens[2:]))
        elif width < len(tokens) < 2 * width:
            _repair(tokens, width, self.stack, self.function_count, self.apply)  # type: ignore[arg-type]  # duck-typed: _repair reads only .fn
            self.repaired += 1
        else:
            self.malformed += 1

    def result(self) -> SpxProfile:
        if self.stack:
            raise TraceFormatError(f"{len(self.stack)} frame(s) left open at the end of the trace")
        m, names, calls = self.m, self.names, self.calls
        functions = [
            FunctionStats(
                name=names[i] if i < len(names) else f"#{i}",
                calls=calls.get(i, 0),
                inclusive=self.inclusive.get(i, [0.0] * m),
                exclusive=self.exclusive.get(i, [0.0] * m),
                max_recursion=self.recursion.get(i, 0),
            )
            for i in range(max(len(names), max(calls, default=-1) + 1))
        ]
        return SpxProfile(
            metrics=list(self.metrics),
            functions=functions,
            tree=self.tree,
            max_depth=self.max_depth,
            events=self.events,
            totals=self.last,
            repaired_lines=self.repaired,
            malformed_lines=self.malformed,
            tree_truncated=self.truncated,
        )


def aggregate_trace(lines: Iterable[bytes | str], metrics: list[str], function_count: int | None = None) -> SpxProfile:
    """Aggregate a decompressed trace, read line by line."""
    state = _Aggregation(metrics, function_count)
    for raw in lines:
        state.feed(raw)
    return state.result()
