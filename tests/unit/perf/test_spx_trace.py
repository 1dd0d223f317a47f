"""SPX trace aggregation, checked by hand on the tiny fixture and for consistency on every real fixture."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from shared.perf.parsers.spx import trace as trace_module
from shared.perf.parsers.spx.trace import TraceFormatError, aggregate_trace
from tests.unit.perf import spx_reference

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "spx"
TINY = "spx-full-20261122_030646-vm-31166-1804289383"


def profile(directory: Path, key: str):
    meta = json.loads((directory / f"{key}.json").read_text())
    with gzip.open(directory / f"{key}.txt.gz", "rb") as f:
        return meta, aggregate_trace(f, meta["enabled_metrics"], meta["called_function_count"])


def test_tiny_by_hand() -> None:
    meta, p = profile(FIXTURES, TINY)
    wt = p.metrics.index("wt")
    main = p.function("/tmp/spx/wl/tiny.php")
    assert (main.calls, main.inclusive[wt], main.exclusive[wt]) == (1, 2201380, 2167775)
    greet, upper, leaf, fib = (p.function(n) for n in ("Greeter::greet", "Greeter::upper", "leaf", "fib"))
    assert (greet.calls, greet.inclusive[wt], greet.exclusive[wt]) == (3, 15694, 4832)
    assert (upper.calls, upper.inclusive[wt], upper.exclusive[wt]) == (3, 10862, 10862)
    assert (leaf.calls, leaf.inclusive[wt], leaf.exclusive[wt]) == (3, 853, 853)
    # Recursion: 9 calls, the outermost's inclusive counted once, exclusive summed over all calls.
    assert (fib.calls, fib.inclusive[wt], fib.exclusive[wt], fib.max_recursion) == (9, 17058, 17058, 3)
    assert p.max_depth == 5
    assert p.events == 38
    assert p.wall_time_ns == 2201380
    assert meta["wall_time_ms"] == int(p.wall_time_ns // 1000)  # SPX's "ms" field is microseconds
    assert sum(f.calls for f in p.functions) == meta["recorded_call_count"]


KEYS = sorted(p.name[: -len(".json")] for p in FIXTURES.glob("spx-full-*.json"))


def test_all_fixture_pairs_are_here() -> None:
    assert len(KEYS) == 14
    assert all((FIXTURES / f"{k}.txt.gz").exists() for k in KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_every_fixture_is_consistent(key: str) -> None:
    meta, p = profile(FIXTURES, key)
    assert sum(f.calls for f in p.functions) == meta["recorded_call_count"] == p.events // 2
    wt = p.metrics.index("wt")
    roots = list(p.tree[0].children.values())
    # Exclusive times add up to the root calls' inclusive time exactly; that is the whole wall time for
    # a single root, and a little less with several roots (SPX_BUILTINS: compile, script, shutdown).
    roots_inclusive = sum(p.tree[n].inclusive[wt] for n in roots)
    assert sum(f.exclusive[wt] for f in p.functions) == pytest.approx(roots_inclusive, rel=1e-12)
    if len(roots) == 1:
        assert roots_inclusive == p.wall_time_ns
    else:
        assert 0.999 * p.wall_time_ns <= roots_inclusive <= p.wall_time_ns
    assert meta["wall_time_ms"] == int(p.wall_time_ns // 1000)
    if "allmetrics" in key or key.endswith("31178-1804289383"):
        assert p.repaired_lines == 5
    else:
        assert p.repaired_lines == 0
    assert p.malformed_lines == 0


def test_unbalanced_traces_are_errors() -> None:
    with pytest.raises(TraceFormatError):
        aggregate_trace([b"[events]\n", b"0 1 0 0\n", b"1 0 5 5\n"], ["wt", "zm"])
    with pytest.raises(TraceFormatError):
        aggregate_trace([b"[events]\n", b"0 1 0 0\n"], ["wt", "zm"])


# -- the vectorised aggregator against the line-by-line oracle ---------------------------------------


def _paths(profile) -> dict[tuple[int, ...], tuple[int, list[float]]]:
    """The call tree by call path (node numbering is an implementation detail: the oracle numbers
    nodes in event order, the vectorised aggregator level by level within a block)."""
    out: dict[tuple[int, ...], tuple[int, list[float]]] = {}
    todo: list[tuple[int, tuple[int, ...]]] = [(0, ())]
    while todo:
        index, path = todo.pop()
        node = profile.tree[index]
        out[path] = (node.calls, node.inclusive)
        todo.extend((child, (*path, fn)) for fn, child in node.children.items())
    assert len(out) == len(profile.tree)
    return out


def _same(fast, slow, tree: bool = True) -> None:
    assert [(f.name, f.calls, f.inclusive, f.exclusive, f.max_recursion) for f in fast.functions] == [
        (f.name, f.calls, f.inclusive, f.exclusive, f.max_recursion) for f in slow.functions
    ]
    if tree:
        assert _paths(fast) == _paths(slow)
    assert (
        fast.max_depth,
        fast.events,
        fast.totals,
        fast.repaired_lines,
        fast.malformed_lines,
        fast.tree_truncated,
    ) == (slow.max_depth, slow.events, slow.totals, slow.repaired_lines, slow.malformed_lines, slow.tree_truncated)


@pytest.mark.parametrize("block", [trace_module.BLOCK_BYTES, 4096])
@pytest.mark.parametrize("key", KEYS)
def test_vectorised_equals_oracle_on_every_fixture(key: str, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks carry open frames (and merged lines) across block boundaries many times."""
    monkeypatch.setattr(trace_module, "BLOCK_BYTES", block)
    meta = json.loads((FIXTURES / f"{key}.json").read_text())
    with gzip.open(FIXTURES / f"{key}.txt.gz", "rb") as f:
        fast = aggregate_trace(f, meta["enabled_metrics"], meta["called_function_count"])
    with gzip.open(FIXTURES / f"{key}.txt.gz", "rb") as f:
        slow = spx_reference.aggregate_trace(f, meta["enabled_metrics"], meta["called_function_count"])
    _same(fast, slow)


def _random_trace(rng: random.Random, metrics: int, functions: int, calls: int) -> list[bytes]:
    """Strictly nested events with recursion, several roots and memory-like values that go down."""
    lines, clock, made = [b"[events]\n"], [0] * metrics, 0
    stack: list[int] = []
    while made < calls or stack:
        if stack and (made >= calls or rng.random() < 0.45 or len(stack) > 12):
            lines.append(f"{stack.pop()} 0 {' '.join(map(str, clock))}\n".encode())
        else:
            fn = rng.choice(stack[-1:] * 3 + list(range(functions))) if stack else rng.randrange(functions)
            stack.append(fn)
            made += 1
            lines.append(f"{fn} 1 {' '.join(map(str, clock))}\n".encode())
        clock = [clock[0] + rng.randrange(0, 50)] + [v + rng.randrange(-40, 60) for v in clock[1:]]
    lines.append(b"[functions]\n")
    lines.extend(f"fn{i}\n".encode() for i in range(functions))
    return lines


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_equals_oracle_on_random_traces(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    metrics = ["wt", "zm", "zo"][: 1 + seed % 3]
    lines = _random_trace(rng, len(metrics), functions=1 + seed % 7, calls=rng.randrange(1, 3000))
    monkeypatch.setattr(trace_module, "BLOCK_BYTES", rng.choice([64, 500, 1 << 20]))
    _same(aggregate_trace(lines, metrics), spx_reference.aggregate_trace(lines, metrics))


def test_truncated_tree_matches_the_oracle(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _random_trace(random.Random(7), 2, functions=9, calls=4000)
    monkeypatch.setattr(trace_module, "MAX_TREE_NODES", 40)
    monkeypatch.setattr(spx_reference, "MAX_TREE_NODES", 40)
    monkeypatch.setattr(trace_module, "BLOCK_BYTES", 2000)
    fast, slow = aggregate_trace(lines, ["wt", "zm"]), spx_reference.aggregate_trace(lines, ["wt", "zm"])
    assert fast.tree_truncated
    assert len(fast.tree) == 40
    # Which 39 paths are kept depends on the numbering order; what is counted is not lost.
    assert sum(n.calls for n in fast.tree) == sum(n.calls for n in slow.tree) == sum(f.calls for f in slow.functions)
    _same(fast, slow, tree=False)


def test_junk_lines_are_counted_not_fatal() -> None:
    lines = [
        b"[events]\n",
        b"0 1 0 0\n",
        b"x y z w\n",
        b"\n",
        b"1 1 2 2\n",
        b"1 0 5 5 7 7 7 7 7\n",
        b"1 0 5 5\n",
        b"0 0 9 9\n",
    ]
    p = aggregate_trace(lines, ["wt", "zm"])
    assert (p.malformed_lines, p.events, p.function("#1").calls) == (2, 4, 1)


def test_bad_flags_and_mismatched_ends_are_errors() -> None:
    with pytest.raises(TraceFormatError, match="neither 1 nor 0"):
        aggregate_trace([b"[events]\n", b"0 2 0 0\n"], ["wt", "zm"])
    with pytest.raises(TraceFormatError, match="does not close the open frame 1"):
        aggregate_trace([b"[events]\n", b"0 1 0 0\n", b"1 1 1 1\n", b"0 0 2 2\n", b"1 0 3 3\n"], ["wt", "zm"])
