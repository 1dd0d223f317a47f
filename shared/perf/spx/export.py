"""Flame-graph inputs from an aggregated SPX call tree: collapsed stacks and a speedscope profile.

Both carry each call path's *self* cost (its inclusive minus its children's), so a flame graph's
widths add up to the root calls' inclusive cost. speedscope gets a "sampled" profile whose samples
are the distinct call paths and whose weights are those self costs (https://www.speedscope.app).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shared.perf.spx.trace import SpxProfile

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
_UNITS = {"wt": "nanoseconds", "ct": "nanoseconds", "it": "nanoseconds", "zm": "bytes", "zmab": "bytes", "zmfb": "bytes", "mor": "bytes", "io": "bytes", "ior": "bytes", "iow": "bytes"}


def _paths(profile: SpxProfile, metric: int) -> Iterator[tuple[list[int], float]]:
    """(function path, self cost) for every node of the tree, depth first."""
    todo: list[tuple[int, list[int]]] = [(child, [profile.tree[child].fn]) for child in profile.tree[0].children.values()]
    while todo:
        index, path = todo.pop()
        node = profile.tree[index]
        children = list(node.children.values())
        self_cost = node.inclusive[metric] - sum(profile.tree[c].inclusive[metric] for c in children)
        yield path, self_cost
        todo.extend((c, path + [profile.tree[c].fn]) for c in children)


def collapsed(profile: SpxProfile, metric: str = "wt") -> str:
    """Brendan Gregg's collapsed-stack format: `root;child;leaf <self cost>` per line, sorted."""
    m = profile.metrics.index(metric)
    names = [f.name.replace(";", ":") for f in profile.functions]
    lines = [f"{';'.join(names[fn] for fn in path)} {int(round(cost))}" for path, cost in _paths(profile, m) if round(cost) > 0]
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def speedscope(profile: SpxProfile, name: str, metric: str = "wt") -> dict[str, Any]:
    m = profile.metrics.index(metric)
    samples, weights = [], []
    for path, cost in _paths(profile, m):
        if cost > 0:
            samples.append(path)
            weights.append(cost)
    total = sum(weights)
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "name": name,
        "exporter": "firebreak",
        "activeProfileIndex": 0,
        "shared": {"frames": [{"name": f.name} for f in profile.functions]},
        "profiles": [{"type": "sampled", "name": f"{name} ({metric})", "unit": _UNITS.get(metric, "none"), "startValue": 0, "endValue": total, "samples": samples, "weights": weights}],
    }
