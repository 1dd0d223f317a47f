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
    return subprocess.run([sys.executable, "-m", "shared.perf", "digest", *args], capture_output=True, text=True, cwd=FIXTURES.parents[2])


def test_json_and_markdown(tmp_path: Path) -> None:
    out = run(str(FIXTURES / "small.log"))
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["entries"] == 611 and report["classes"] == 142
    gz = tmp_path / "small.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "small.log").read_bytes()))
    both = json.loads(run(str(FIXTURES / "mysql80-sample.log"), str(gz)).stdout)
    assert both["entries"] == 641
    md = run(str(FIXTURES / "small.log"), "--format", "md", "--top", "3").stdout
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| rank")]
    assert md.startswith("# Slow query digest") and len(rows) == 3 and rows[0].startswith("| 1 |")


@pytest.mark.parametrize("content", [b"", b"\x00" * 1000, b"\xff\xfe" + "é".encode("latin-1") * 50])
def test_empty_and_binary_files_give_an_empty_digest(tmp_path: Path, content: bytes) -> None:
    f = tmp_path / "junk.log"
    f.write_bytes(content)
    out = run(str(f))
    assert out.returncode == 0 and json.loads(out.stdout)["entries"] == 0


def test_truncated_gzip_and_missing_files_are_clear_errors(tmp_path: Path) -> None:
    gz = tmp_path / "cut.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "small.log").read_bytes())[:5000])
    out = run(str(gz))
    assert out.returncode == 2 and "cannot read the input" in out.stderr and "Traceback" not in out.stderr
    missing = run(str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "not a file" in missing.stderr
