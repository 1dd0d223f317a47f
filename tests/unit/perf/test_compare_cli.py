"""`python -m shared.perf snapshot` / `compare`: the CI gate's exit codes and clear errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.perf.analysis.compare import compare, worst_severity
from tests.unit.perf.compare_fixtures import FIXTURES, SMALL_LOG, SPX_DIR, TIMINGS, snapshot, timings_scaled

ROOT = FIXTURES.parents[1]


def perf(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shared.perf", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def test_fail_on_follows_the_worst_grade(tmp_path: Path) -> None:
    slower = timings_scaled(tmp_path, "/checkout", 1.4)
    worst = worst_severity(compare(snapshot([TIMINGS]), snapshot([slower])))
    assert worst is not None
    out = tmp_path / "out"
    gated = perf("compare", "--baseline", TIMINGS, "--candidate", slower, "--fail-on", worst, "--out", out)
    assert gated.returncode == 3
    assert f"a change at {worst}" in gated.stderr
    assert gated.stdout.startswith("# Comparison summary")
    stricter = {"P0": None, "P1": "P0", "P2": "P1"}[worst]
    if stricter:
        passed = perf("compare", "--baseline", TIMINGS, "--candidate", slower, "--fail-on", stricter)
        assert passed.returncode == 0
    written = sorted(p.name for p in out.iterdir())
    report = json.loads((out / written[0]).read_text())
    rid = report["report_id"]
    # Timings only: the report and its diff chart (no SPX profile, so no differential flame graph).
    assert written == [f"report_{rid}.json", f"report_{rid}.md", f"report_{rid}_diff.svg"]
    assert f"(report_{rid}_diff.svg)" in (out / f"report_{rid}.md").read_text()


def test_a_snapshot_file_compares_like_its_artifacts(tmp_path: Path) -> None:
    saved = tmp_path / "base.json"
    made = perf("snapshot", TIMINGS, SMALL_LOG, "--out", saved)
    assert made.returncode == 0
    doc = json.loads(saved.read_text())
    assert made.stdout.strip() == doc["snapshot_id"]
    assert set(doc) == {"content", "snapshot_id", "flamegraphs"}
    out = perf("compare", "--baseline", saved, "--candidate", SMALL_LOG, TIMINGS, "--format", "json", "--fail-on", "P2")
    result = json.loads(out.stdout)
    assert out.returncode == 0
    assert result["baseline_snapshot_id"] == result["candidate_snapshot_id"] == doc["snapshot_id"]
    assert result["changes"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--candidate", "nope.json"], "not a file"),
        (
            ["--candidate", str(SPX_DIR / "spx-full-20261122_030646-vm-31168-1804289383.json")],
            "cannot read the candidate",
        ),
        (["--candidate", str(TIMINGS), "--options", "{not json"], "--options is not JSON"),
        (["--candidate", str(TIMINGS), "--options", '{"confidence": 2}'], "options.confidence"),
        (
            ["--candidate", str(TIMINGS), "--options", '{"rules": {"count": {"P0": {"absolute": 1}}}}'],
            "options.rules.count",
        ),
    ],
)
def test_bad_input_exits_2_with_a_reason(args: list[str], message: str) -> None:
    out = perf("compare", "--baseline", TIMINGS, *args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_a_damaged_snapshot_file_exits_2(tmp_path: Path) -> None:
    saved = tmp_path / "base.json"
    assert perf("snapshot", SMALL_LOG, "--out", saved).returncode == 0
    doc = json.loads(saved.read_text())
    for q in doc["content"]["queries"]:
        del q["count"]
    saved.write_text(json.dumps(doc))
    out = perf("compare", "--baseline", saved, "--candidate", SMALL_LOG)
    assert out.returncode == 2
    assert "lacks what `snapshot` writes" in out.stderr
    assert "Traceback" not in out.stderr


def _hostile(doc: dict, edit: str) -> str:
    """The text of a SNAPSHOT.json edited by hand (or by an attacker) in one way `snapshot` never writes."""
    content = doc["content"]
    if edit == "count_infinity":
        content["queries"][0]["count"] = float("inf")  # json.dumps writes Infinity, json.loads reads it back
    elif edit == "histogram_infinity":
        content["queries"][0]["query_time_histogram"] = [[1.0, float("inf")]]
    elif edit == "wall_ms_text":
        content["profiles"][0]["wall_ms"] = "slow"
    elif edit == "flame_nan":
        doc["flamegraphs"] = dict.fromkeys(doc["flamegraphs"], "main;work nan\nmain;idle inf\n")
    elif edit == "nested_deep":
        return '{"content": ' + "[" * 50_000 + "]" * 50_000 + "}"
    return json.dumps(doc)


@pytest.mark.parametrize("edit", ["count_infinity", "histogram_infinity", "wall_ms_text", "flame_nan", "nested_deep"])
def test_a_hostile_snapshot_file_exits_2_without_a_traceback(tmp_path: Path, edit: str) -> None:
    saved = tmp_path / "base.json"
    spx = [SPX_DIR / f"spx-full-20261122_030646-vm-31168-1804289383{ext}" for ext in (".json", ".txt.gz")]
    assert perf("snapshot", SMALL_LOG, *spx, "--out", saved).returncode == 0
    doc = json.loads(saved.read_text())
    assert doc["flamegraphs"]
    assert doc["content"]["profiles"]
    hostile = tmp_path / "hostile.json"
    hostile.write_text(_hostile(doc, edit))
    out = perf("compare", "--baseline", saved, "--candidate", hostile, "--out", tmp_path / "out")
    assert "Traceback" not in out.stderr
    # Infinite or NaN stack weights are skipped (the rest of the graph still draws): a clean comparison.
    assert out.returncode == (0 if edit == "flame_nan" else 2)
    assert out.stderr.strip() or out.stdout.startswith("# Comparison summary")


@pytest.mark.parametrize(
    "options",
    [
        '{"rules": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"rules": {"count": {"P0": {"absolute": 1' + "0" * 400 + "}}}}",
    ],
)
def test_hostile_options_exit_2_without_a_traceback(options: str) -> None:
    out = perf("compare", "--baseline", TIMINGS, "--candidate", TIMINGS, "--options", options)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert len(out.stderr) < 1000
