"""Collapsed stacks and speedscope profiles from SPX traces."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from shared.perf.parsers.spx.export import collapsed, speedscope
from shared.perf.parsers.spx.trace import aggregate_trace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "spx"
TINY = "spx-full-20261122_030646-vm-31166-1804289383"


def profile(key: str):
    meta = json.loads((FIXTURES / f"{key}.json").read_text())
    with gzip.open(FIXTURES / f"{key}.txt.gz", "rb") as f:
        return aggregate_trace(f, meta["enabled_metrics"], meta["called_function_count"])


def test_collapsed_stacks_of_the_tiny_trace() -> None:
    lines = dict(line.rsplit(" ", 1) for line in collapsed(profile(TINY)).splitlines())
    main = "/tmp/spx/wl/tiny.php"
    assert lines[f"{main};Greeter::greet;Greeter::upper"] == "10862"
    assert lines[f"{main};Greeter::greet"] == "4832"
    assert lines[f"{main};leaf"] == "853"
    assert f"{main};fib;fib;fib;fib" in lines  # the recursion appears as nested frames
    assert sum(int(v) for v in lines.values()) == 2201380  # widths add up to the root's inclusive time


@pytest.mark.parametrize("key", [TINY, "spx-full-20261122_030648-vm-31172-1804289383"])
def test_speedscope_profile_is_well_formed(key: str) -> None:
    p = profile(key)
    doc = speedscope(p, key)
    prof = doc["profiles"][0]
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert prof["type"] == "sampled"
    assert prof["unit"] == "nanoseconds"
    assert len(prof["samples"]) == len(prof["weights"])
    frames = len(doc["shared"]["frames"])
    assert all(0 <= i < frames for sample in prof["samples"] for i in sample)
    roots = sum(p.tree[n].inclusive[p.metrics.index("wt")] for n in p.tree[0].children.values())
    assert prof["endValue"] == pytest.approx(roots)
    assert all(w > 0 for w in prof["weights"])
    json.dumps(doc)  # serialisable as is
