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


def aggregate_trace(lines: Iterable[bytes | str], metrics: list[str], function_count: int | None = None) -> SpxProfile:
    """Aggregate a decompressed trace, read line by line."""
    m = len(metrics)
    width = m + 2
    stack: list[_Frame] = []
    open_count: dict[int, int] = {}
    calls: dict[int, int] = {}
    inclusive: dict[int, list[float]] = {}
    exclusive: dict[int, list[float]] = {}
    recursion: dict[int, int] = {}
    tree: list[TreeNode] = [TreeNode(fn=-1, inclusive=[0.0] * m)]
    truncated = False
    names: list[str] = []
    section = ""
    max_depth = events = repaired = malformed = 0
    last = [0.0] * m

    def start(fn: int, values: list[float]) -> None:
        nonlocal max_depth, truncated
        parent_node = stack[-1].node if stack else 0
        node = tree[parent_node].children.get(fn)
        if node is None:
            if len(tree) < MAX_TREE_NODES:
                node = len(tree)
                tree.append(TreeNode(fn=fn, inclusive=[0.0] * m))
                tree[parent_node].children[fn] = node
            else:
                node, truncated = parent_node, True
        stack.append(_Frame(fn, values, node))
        depth_same = open_count.get(fn, 0)
        open_count[fn] = depth_same + 1
        if depth_same > recursion.get(fn, 0):
            recursion[fn] = depth_same
        if len(stack) > max_depth:
            max_depth = len(stack)

    def end(fn: int, values: list[float]) -> None:
        if not stack or stack[-1].fn != fn:
            raise TraceFormatError(
                f"end event of function {fn} does not close the open frame {stack[-1].fn if stack else None} (event {events})"
            )
        frame = stack.pop()
        incl = [e - s for e, s in zip(values, frame.start, strict=False)]
        excl = [i - c for i, c in zip(incl, frame.children, strict=False)]
        calls[fn] = calls.get(fn, 0) + 1
        acc = exclusive.setdefault(fn, [0.0] * m)
        for k in range(m):
            acc[k] += excl[k]
        open_count[fn] -= 1
        if open_count[fn] == 0:  # the outermost frame of this function: count its inclusive once
            acc_i = inclusive.setdefault(fn, [0.0] * m)
            for k in range(m):
                acc_i[k] += incl[k]
        node = tree[frame.node]
        node.calls += 1
        if frame.node != 0:
            for k in range(m):
                node.inclusive[k] += incl[k]
        if stack:
            parent = stack[-1].children
            for k in range(m):
                parent[k] += incl[k]

    def apply(fn: int, flag: str, values: list[float]) -> None:
        nonlocal events, last
        events += 1
        last = values
        if flag == "1":
            start(fn, values)
        elif flag == "0":
            end(fn, values)
        else:
            raise TraceFormatError(f"event flag {flag!r} is neither 1 nor 0 (event {events})")

    for raw in lines:
        line = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
        line = line.rstrip("\n")
        if line.startswith("["):
            section = line
            continue
        if section == "[functions]":
            names.append(line)
            continue
        if section != "[events]" or not line:
            continue
        tokens = line.split()
        if len(tokens) == width:
            apply(int(tokens[0]), tokens[1], _floats(tokens[2:]))
        elif width < len(tokens) < 2 * width:
            _repair(tokens, width, stack, function_count, apply)
            repaired += 1
        else:
            malformed += 1
    if stack:
        raise TraceFormatError(f"{len(stack)} frame(s) left open at the end of the trace")
    functions = [
        FunctionStats(
            name=names[i] if i < len(names) else f"#{i}",
            calls=calls.get(i, 0),
            inclusive=inclusive.get(i, [0.0] * m),
            exclusive=exclusive.get(i, [0.0] * m),
            max_recursion=recursion.get(i, 0),
        )
        for i in range(max(len(names), max(calls, default=-1) + 1))
    ]
    return SpxProfile(
        metrics=list(metrics),
        functions=functions,
        tree=tree,
        max_depth=max_depth,
        events=events,
        totals=last,
        repaired_lines=repaired,
        malformed_lines=malformed,
        tree_truncated=truncated,
    )
