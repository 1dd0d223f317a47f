"""Caller -> callee edges of an SPX call tree: who calls a function how often, and where its inclusive time goes.

A callee's time under a caller follows SPX's own inclusive rule, per (caller, callee) pair: an edge is
counted only where no edge of the same pair is already open above it on the path. Without that rule a
recursive or nested pair (a middleware closure calling the next closure) counts the same wall time once
per nesting level, and a callee can appear to take several times its caller's total.

Calls are counted on every edge (recursive calls included, as SPX's "Called" column counts them), so
`callers[f]` sums to f's call count, minus calls the bounded tree folded into an ancestor.
Iterative (a trace thousands of frames deep is no recursion limit); linear in the tree's nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.perf.parsers.spx.trace import SpxProfile


@dataclass
class Edges:
    callees: dict[int, dict[int, float]]  # caller -> callee -> inclusive time of the metric, outermost edges only
    callers: dict[int, dict[int, int]]  # callee -> caller -> calls


def call_edges(profile: SpxProfile, metric: int) -> Edges:
    """The edges of `profile`'s call tree, times in `metric` (an index into profile.metrics)."""
    tree = profile.tree
    callees: dict[int, dict[int, float]] = {}
    callers: dict[int, dict[int, int]] = {}
    open_pairs: dict[tuple[int, int], int] = {}
    # (node, entering): on entering, count the node's edge from its parent and push its children.
    todo: list[tuple[int, int, bool]] = [(0, -1, True)]
    while todo:
        node_id, parent_fn, entering = todo.pop()
        node = tree[node_id]
        pair = (parent_fn, node.fn)
        if not entering:
            left = open_pairs[pair] - 1
            if left:
                open_pairs[pair] = left
            else:
                del open_pairs[pair]
            continue
        if parent_fn >= 0:
            by_caller = callers.setdefault(node.fn, {})
            by_caller[parent_fn] = by_caller.get(parent_fn, 0) + node.calls
            if pair not in open_pairs:
                slot = callees.setdefault(parent_fn, {})
                slot[node.fn] = slot.get(node.fn, 0.0) + node.inclusive[metric]
            open_pairs[pair] = open_pairs.get(pair, 0) + 1
            todo.append((node_id, parent_fn, False))
        todo.extend((child, node.fn, True) for child in node.children.values())
    return Edges(callees, callers)
