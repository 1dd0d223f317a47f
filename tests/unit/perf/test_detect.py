"""Artifact detection and validation on real fixtures and a bad-input corpus."""

from __future__ import annotations

import gzip
import io
import json
import time
from pathlib import Path

import pytest

from shared.perf.parsers.detect import Detection, detect, pair_spx, safe_name

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TINY = "spx-full-20261122_030646-vm-31166-1804289383"


def detect_bytes(name: str, data: bytes) -> Detection:
    return detect(name, len(data), lambda: io.BytesIO(data))


def detect_file(path: Path) -> Detection:
    return detect(path.name, path.stat().st_size, lambda: open(path, "rb"))


def test_spx_pair_is_detected_and_paired() -> None:
    found = pair_spx([detect_file(FIXTURES / "spx" / f"{TINY}.json"), detect_file(FIXTURES / "spx" / f"{TINY}.txt.gz")])
    meta, trace = found
    assert (meta.detected_type, meta.detected_version, meta.ok) == ("spx", "spx-json-v2", True)
    assert (trace.detected_type, trace.detected_version, trace.ok) == ("spx", "spx-text-gz-v1", True)
    assert meta.metadata["pair_status"] == trace.metadata["pair_status"] == "paired"
    assert meta.metadata["enabled_metrics"] == ["wt", "zm"]
    assert trace.metadata["metric_count"] == 2


def test_spx_json_without_its_trace_is_usable_with_a_partial_pair_status() -> None:
    # The spec: "SPX validates but metadata indicates pair status not fully paired"; ingest skips it.
    (meta,) = pair_spx([detect_file(FIXTURES / "spx" / f"{TINY}.json")])
    assert meta.metadata["pair_status"] == "partial"
    assert meta.ok
    assert meta.errors == []
    assert "trace (.txt.gz)" in meta.metadata["warnings"][0]


def test_spx_trace_without_its_metadata_is_partial_too() -> None:
    (trace,) = pair_spx([detect_file(FIXTURES / "spx" / f"{TINY}.txt.gz")])
    assert (trace.ok, trace.metadata["pair_status"]) == (True, "partial")
    assert "metadata (.json)" in trace.metadata["warnings"][0]


def _slow_log_after(noise_lines: int) -> bytes:
    noise = "".join(f"-- note {i}: rotated by logrotate, kept for reference\n" for i in range(noise_lines))
    entry = "# Time: 2026-03-02T09:00:00.000000Z\n# User@Host: app[app] @  [10.0.0.1]  Id:     7\n"
    entry += "# Query_time: 0.5  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 1\nSELECT 1;\n"
    return (noise + entry).encode()


def test_slow_log_markers_are_looked_for_in_the_first_500_lines() -> None:
    assert detect_bytes("late.log", _slow_log_after(450)).detected_type == "mysql_slow_log"
    assert not detect_bytes("too-late.log", _slow_log_after(500)).ok


def test_slow_log_markers_beyond_the_first_64_kb_but_within_500_lines_are_found() -> None:
    data = _slow_log_after(0)
    long_noise = b"".join(b"-- " + b"x" * 400 + b"\n" for _ in range(300))  # 120 KB in 300 lines
    assert detect_bytes("wide.log", long_noise + data).detected_type == "mysql_slow_log"


@pytest.mark.parametrize(("name", "flavor"), [("small.log", "mariadb"), ("mysql80-sample.log", "mysql")])
def test_slow_logs(name: str, flavor: str) -> None:
    d = detect_file(FIXTURES / "slowlog" / name)
    assert (d.ok, d.detected_type, d.detected_version, d.metadata["flavor"]) == (
        True,
        "mysql_slow_log",
        "mysql-slowlog-v1",
        flavor,
    )
    gz = gzip.compress((FIXTURES / "slowlog" / name).read_bytes())
    assert detect_bytes(name + ".gz", gz).metadata["compressed"] is True


def test_collector_timings() -> None:
    d = detect_bytes("timings.json", json.dumps({"format": "collector-v1", "samples": [{"url": "/health"}]}).encode())
    assert (d.ok, d.detected_type, d.detected_version, d.metadata) == (
        True,
        "ttfb_timings",
        "collector-v1",
        {"samples": 1},
    )


def _truncated_trace() -> bytes:
    import random

    rng = random.Random(1)
    lines = "\n".join(
        f"{rng.randrange(50)} {rng.randrange(2)} {rng.randrange(10**9)} {rng.randrange(10**7)}" for _ in range(20000)
    )
    whole = gzip.compress(f"[events]\n{lines}\n".encode())
    return whole[: len(whole) // 2]


def _bomb() -> bytes:
    return gzip.compress(b"\0" * (50 * 1024 * 1024), compresslevel=9)


BAD = [
    ("empty.log", b"", "empty file"),
    ("truncated.txt.gz", _truncated_trace(), "truncated gzip"),
    ("junk.bin", bytes(range(256)) * 100, "binary content"),
    ("latin1.log", "caf\xe9 cr\xe8me ".encode("latin-1") * 200, "not UTF-8"),
    ("oneline.log", b"x" * (10 * 1024 * 1024), "no slow-log header"),
    ("bomb.txt.gz", _bomb(), "zip bomb"),
    ("broken.json", b'{"key": "x", ', "invalid JSON"),
    ("other.json", b'{"hello": "world"}', "neither SPX metadata nor collector-v1"),
    ("garbage.gz", b"\x1f\x8b" + b"\x00" * 100, "gzip"),
]


@pytest.mark.parametrize(("name", "data", "error"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_corpus(name: str, data: bytes, error: str) -> None:
    started = time.perf_counter()
    d = detect_bytes(name, data)
    assert not d.ok, d.errors
    assert error in " ".join(d.errors), d.errors
    assert time.perf_counter() - started < 30  # bounded work: a guard against hangs, not a performance test


@pytest.mark.parametrize(
    "name",
    ["../etc/passwd", "a/b.log", "..", ".hidden", "x\\y.log", "name with space.log", "", "ünïcode.log", "a" * 300],
)
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="is not allowed: use letters, digits"):
        safe_name(name)


def test_safe_names_pass() -> None:
    assert safe_name(f"{TINY}.txt.gz") == f"{TINY}.txt.gz"
    assert safe_name("slow-2026_11.log") == "slow-2026_11.log"
