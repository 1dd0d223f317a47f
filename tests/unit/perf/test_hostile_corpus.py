"""Every hostile input gets a clear VALIDATION_ERROR or a result within the caps, in a process whose peak
RSS stays under the case's budget (200 MB). Sizes and counts only: times are in benchmarks/hostile_inputs.py.

Each case runs in a process of its own so that its peak RSS is its own. The timeout is a hang guard
for the old code's behaviour (minutes to hours on these inputs), not a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.perf.analysis.svg import MAX_ROWS
from shared.perf.parsers.slowlog.aggregate import MAX_FINGERPRINT_CHARS, MAX_SAMPLE_CHARS
from shared.perf.parsers.snapshot import MAX_QUERIES as MAX_QUERIES_IN_SNAPSHOT
from shared.perf.parsers.spx.export import MAX_COLLAPSED_BYTES
from tests.fixtures.hostile.corpus import CASES

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD_SECONDS = 600


def _run(name: str, tmp_path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.fixtures.hostile.corpus", name, str(tmp_path / name)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_gets_a_clear_error_or_a_bounded_result(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    result = _run(name, tmp_path)
    assert result["peak_rss_mb"] < case.budget_mb, result
    if case.expect == "error":
        assert result["outcome"] == "error", result
        assert result["code"] == "VALIDATION_ERROR", result
        return
    assert result["outcome"] == "ok", result
    if case.kind == "flame":
        assert result["frames"] <= MAX_ROWS
        assert result["svg_bytes"] < 1024 * 1024
        return
    assert result["longest_fingerprint"] <= MAX_FINGERPRINT_CHARS + 40
    assert result["longest_sample"] <= MAX_SAMPLE_CHARS
    assert result["collapsed_bytes"] <= MAX_COLLAPSED_BYTES + 64
    if case.kind == "slowlog" and name != "slowlog-6000-classes":
        assert (result["queries"], result["executions"]) == (1, 1), result


def test_a_100_mb_statement_is_kept_truncated(tmp_path: Path) -> None:
    result = _run("slowlog-100mb-statement", tmp_path)
    assert result["truncated_statements"] == 1
    assert result["peak_rss_mb"] < 200


def test_classes_beyond_the_cap_are_counted_together(tmp_path: Path) -> None:
    result = _run("slowlog-6000-classes", tmp_path)
    # 6000 distinct tables, 5000 classes kept: the other 1000 executions land in one overflow class,
    # which ranks first (most total time); the snapshot keeps its top classes.
    assert result["queries"] == MAX_QUERIES_IN_SNAPSHOT
    assert result["executions"] == 1000 + MAX_QUERIES_IN_SNAPSHOT - 1


def test_a_deep_chain_exports_within_the_output_budget(tmp_path: Path) -> None:
    result = _run("spx-chain-depth-20000", tmp_path)
    assert result["max_depth"] == 20_000
    assert 0 < result["collapsed_bytes"] <= MAX_COLLAPSED_BYTES + 64
