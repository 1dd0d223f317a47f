"""Flame-graph inputs from an aggregated SPX call tree: collapsed stacks and a speedscope profile.

Both carry each call path's *self* cost (its inclusive minus its children's), so a flame graph's
widths add up to the root calls' inclusive cost. speedscope gets a "sampled" profile whose samples
are the distinct call paths and whose weights are those self costs (https://www.speedscope.app).

Bounded output whatever the tree: the walk is iterative, a path keeps MAX_STACK_DEPTH frames (the cost
of deeper frames is drawn as one `[deeper frames]` frame on top of it), and the output keeps the
costliest paths within MAX_COLLAPSED_BYTES (collapsed) or MAX_SPEEDSCOPE_FRAMES (speedscope); the
cost of the paths left out is one `[more stacks]` root frame, so the widths still add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.perf.parsers.spx.trace import SpxProfile

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
MAX_STACK_DEPTH = 2048
MAX_COLLAPSED_BYTES = 4 * 1024 * 1024
MAX_SPEEDSCOPE_FRAMES = 1_000_000
DEEPER = "[deeper frames]"
MORE = "[more stacks]"
_UNITS = {
    "wt": "nanoseconds",
    "ct": "nanoseconds",
    "it": "nanoseconds",
    "zm": "bytes",
    "zmab": "bytes",
    "zmfb": "bytes",
    "mor": "bytes",
    "io": "bytes",
    "ior": "bytes",
    "iow": "bytes",
}


@dataclass
class _Stacks:
    """Every path with a self cost: `paths[i]` is (tree node, deeper flag); the path is the node's frames,
    plus one DEEPER frame when the flag is set. `parent`/`depth`/`chars` describe the tree's nodes."""

    paths: list[tuple[int, bool]]
    costs: list[float]
    parent: dict[int, int]
    depth: dict[int, int]
    chars: dict[int, int]  # length of the node's `a;b;c` path text


def _stacks(profile: SpxProfile, metric: int, names: list[str]) -> _Stacks:
    tree = profile.tree
    parent: dict[int, int] = {}
    depth: dict[int, int] = {0: 0}
    chars: dict[int, int] = {0: -1}
    anchor_of: dict[int, int] = {}  # node below MAX_STACK_DEPTH -> its ancestor at MAX_STACK_DEPTH
    own: dict[tuple[int, bool], float] = {}
    todo = list(tree[0].children.values())
    for c in todo:
        parent[c] = 0
    while todo:
        index = todo.pop()
        node, up = tree[index], parent[index]
        depth[index] = depth[up] + 1
        children = list(node.children.values())
        self_cost = node.inclusive[metric] - sum(tree[c].inclusive[metric] for c in children)
        if depth[index] <= MAX_STACK_DEPTH:
            chars[index] = chars[up] + 1 + len(names[node.fn])
            key = (index, False)
        else:
            anchor = anchor_of.get(up, up)
            anchor_of[index] = anchor
            key = (anchor, True)
        own[key] = own.get(key, 0.0) + self_cost
        for c in children:
            parent[c] = index
        todo.extend(children)
    paths = list(own)
    return _Stacks(paths, [own[p] for p in paths], parent, depth, chars)


def _frames(s: _Stacks, profile: SpxProfile, path: tuple[int, bool]) -> list[int]:
    node, deeper = path
    out = []
    while node:
        out.append(profile.tree[node].fn)
        node = s.parent[node]
    out.reverse()
    return [*out, -1] if deeper else out


def _within(sizes: list[int], costs: list[float], budget: int) -> tuple[list[int], float]:
    """Indexes of the costliest paths whose sizes fit the budget, and the cost of the others."""
    kept, used, rest = [], 0, 0.0
    for i in sorted(range(len(costs)), key=lambda i: -costs[i]):
        if used + sizes[i] <= budget:
            kept.append(i)
            used += sizes[i]
        else:
            rest += costs[i]
    return kept, rest


def collapsed(profile: SpxProfile, metric: str = "wt") -> str:
    """Brendan Gregg's collapsed-stack format: `root;child;leaf <self cost>` per line, sorted."""
    m = profile.metrics.index(metric)
    names = [f.name.replace(";", ":") for f in profile.functions]
    s = _stacks(profile, m, names)
    shown = [i for i, c in enumerate(s.costs) if round(c) > 0]
    sizes = [
        s.chars[s.paths[i][0]] + (len(DEEPER) + 1 if s.paths[i][1] else 0) + len(str(round(s.costs[i]))) + 2
        for i in shown
    ]
    kept, rest = _within(sizes, [s.costs[i] for i in shown], MAX_COLLAPSED_BYTES)
    lines = []
    for k in kept:
        i = shown[k]
        frames = [names[fn] if fn >= 0 else DEEPER for fn in _frames(s, profile, s.paths[i])]
        lines.append(f"{';'.join(frames)} {round(s.costs[i])}")
    if round(rest) > 0:
        lines.append(f"{MORE} {round(rest)}")
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def speedscope(profile: SpxProfile, name: str, metric: str = "wt") -> dict[str, Any]:
    m = profile.metrics.index(metric)
    s = _stacks(profile, m, [f.name for f in profile.functions])
    positive = [i for i, c in enumerate(s.costs) if c > 0]
    sizes = [min(s.depth[s.paths[i][0]], MAX_STACK_DEPTH) + s.paths[i][1] for i in positive]
    kept, rest = _within(sizes, [s.costs[i] for i in positive], MAX_SPEEDSCOPE_FRAMES)
    deeper, more = len(profile.functions), len(profile.functions) + 1
    samples, weights = [], []
    for k in sorted(kept):  # in the walk's order, as before the caps
        i = positive[k]
        samples.append([fn if fn >= 0 else deeper for fn in _frames(s, profile, s.paths[i])])
        weights.append(s.costs[i])
    if rest > 0:
        samples.append([more])
        weights.append(rest)
    total = sum(weights)
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "name": name,
        "exporter": "firebreak",
        "activeProfileIndex": 0,
        "shared": {"frames": [{"name": f.name} for f in profile.functions] + [{"name": DEEPER}, {"name": MORE}]},
        "profiles": [
            {
                "type": "sampled",
                "name": f"{name} ({metric})",
                "unit": _UNITS.get(metric, "none"),
                "startValue": 0,
                "endValue": total,
                "samples": samples,
                "weights": weights,
            }
        ],
    }
