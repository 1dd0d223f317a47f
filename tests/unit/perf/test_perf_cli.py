"""`python -m shared.perf digest`: the same analysis from the command line, and clear errors on bad files."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slowlog"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shared.perf", "digest", *args], capture_output=True, text=True, cwd=FIXTURES.parents[2]
    )


def test_json_and_markdown(tmp_path: Path) -> None:
    out = run(str(FIXTURES / "small.log"))
    report = json.loads(out.stdout)
    assert out.returncode == 0
    assert report["entries"] == 611
    assert report["classes"] == 142
    gz = tmp_path / "small.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "small.log").read_bytes()))
    both = json.loads(run(str(FIXTURES / "mysql80-sample.log"), str(gz)).stdout)
    assert both["entries"] == 641
    md = run(str(FIXTURES / "small.log"), "--format", "md", "--top", "3").stdout
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| rank")]
    assert md.startswith("# Slow query digest")
    assert len(rows) == 3
    assert rows[0].startswith("| 1 |")


@pytest.mark.parametrize("content", [b"", b"\x00" * 1000, b"\xff\xfe" + "é".encode("latin-1") * 50])
def test_empty_and_binary_files_give_an_empty_digest(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / "junk.log"
    f.write_bytes(content)
    out = run(str(f))
    assert out.returncode == 0
    assert json.loads(out.stdout)["entries"] == 0


def test_truncated_gzip_and_missing_files_are_clear_errors(tmp_path: Path) -> None:
    gz = tmp_path / "cut.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "small.log").read_bytes())[:5000])
    out = run(str(gz))
    assert out.returncode == 2
    assert "cannot read the input" in out.stderr
    assert "Traceback" not in out.stderr
    missing = run(str(tmp_path / "nope.log"))
    assert missing.returncode == 2
    assert "not a file" in missing.stderr


SPX = FIXTURES.parent / "spx" / "spx-full-20261122_030646-vm-31168-1804289383"
TIMINGS = FIXTURES.parent / "perf" / "timings.json"


def analyze(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "shared.perf", "analyze", *args], capture_output=True, text=True, cwd=FIXTURES.parents[2]
    )


def test_analyze_prints_the_tools_analysis_and_report(tmp_path: Path) -> None:
    files = [f"{SPX}.json", f"{SPX}.txt.gz", str(FIXTURES / "small.log"), str(TIMINGS)]
    out = analyze(*files, "--format", "json", "--top-n", "3")
    result = json.loads(out.stdout)
    assert out.returncode == 0
    assert len(result["normalized_snapshot_id"]) == 64
    assert result["summary"]["top_n"] == 3
    assert result["summary"]["finding_count"] == len(result["findings"]) > 0
    md = analyze(*files, "--out", str(tmp_path), "--fail-on", "P0")
    assert md.returncode == 3
    assert md.stdout.startswith("# Executive Summary")
    assert "finding(s) at P0" in md.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.endswith(".md") for n in written)
    assert any(n.endswith("_top.svg") for n in written)
    assert any("_flame_" in n for n in written)
    # The one SPX profile, exported for speedscope and as collapsed stacks.
    assert "profile_1.collapsed.txt" in written
    scope = json.loads((tmp_path / "profile_1.speedscope.json").read_text())
    assert scope["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert scope["profiles"][0]["endValue"] == sum(scope["profiles"][0]["weights"])
    again = analyze(*reversed(files))  # order does not matter: same snapshot, same report
    assert again.stdout == md.stdout


def test_analyze_explains_unusable_inputs(tmp_path: Path) -> None:
    out = analyze(f"{SPX}.json")
    assert out.returncode == 2
    assert "missing" in out.stderr
    assert "Traceback" not in out.stderr
    bad = analyze(str(FIXTURES / "small.log"), "--thresholds", '{"span_self_ms": {"P0": 1, "P1": 2, "P2": 3}}')
    assert bad.returncode == 2
    assert "P0 >= P1 >= P2" in bad.stderr
