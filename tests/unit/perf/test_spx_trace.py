"""SPX trace aggregation, checked by hand on the tiny fixture and for consistency on every real fixture."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from shared.perf.spx.trace import TraceFormatError, aggregate_trace

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
    assert p.max_depth == 5 and p.events == 38 and p.wall_time_ns == 2201380
    assert meta["wall_time_ms"] == int(p.wall_time_ns // 1000)  # SPX's "ms" field is microseconds
    assert sum(f.calls for f in p.functions) == meta["recorded_call_count"]


KEYS = sorted(p.name[: -len(".json")] for p in FIXTURES.glob("spx-full-*.json"))


def test_all_fixture_pairs_are_here() -> None:
    assert len(KEYS) == 14 and all((FIXTURES / f"{k}.txt.gz").exists() for k in KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_every_fixture_is_consistent(key: str) -> None:
    meta, p = profile(FIXTURES, key)
    assert sum(f.calls for f in p.functions) == meta["recorded_call_count"] == p.events // 2
    wt = p.metrics.index("wt")
    roots = [n for n in p.tree[0].children.values()]
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
