"""Slow-log digest vs pt-query-digest on the ~150 MB log that the fixture's make_large.sh generates.

Rows, all from processes run under GNU time (wall seconds, peak RSS) on the same files in the same run:
- slowlog_digest_vs_pt_query_digest: pt-query-digest time / our `digest` time; the classes and their
  counts must agree. Budget: at least 6x faster (the CLI parses a large log's two halves on two cores,
  shared/perf/parsers/slowlog/parallel.py), peak memory under 200 MB.
- slowlog_digest_gzip: our time on a gzip of the same log / (our plain time + `zcat` time), with the
  same JSON as the plain log's. Budget: at most 1.3.
- slowlog_digest_phases (reported, no budget): one process times each stage alone over the same log:
  read (blocks), split (lines), headers (the parser's entries), fingerprint (class keys as aggregate
  computes them, with its cache) and aggregate (the classes' counters, given the keys); plus the
  sequential digest end to end, for the parallel speed-up.
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from devhost.stack import ROOT

FIXTURES = ROOT.parent / "shared" / "fixtures" / "slowlog" / "large"
WORK = ROOT / ".local" / "bench"
SPEED_BUDGET = 6.0
GZIP_BUDGET = 1.3
MEMORY_BUDGET_MB = 200


def _timed(cmd: list[str], out: Path | None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system, children included) of `cmd`; its stdout is
    written to `out`, or discarded when None (a baseline such as zcat is timed without a disk write)."""
    stats = WORK / f"{out.name if out else cmd[0]}.time"
    with open(out or os.devnull, "wb") as sink:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(stats), *cmd],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            check=True,
            cwd=ROOT,
        )
    seconds, kb, user, system = stats.read_text().split()[-4:]
    # On a machine others load, wall-time ratios move; CPU seconds much less: both are reported.
    return float(seconds), int(kb) / 1024, round(float(user) + float(system), 2)


def _large_log() -> Path:
    target = WORK / "large.log"
    if not target.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["bash", str(FIXTURES / "make_large.sh"), str(target), "150"], check=True, cwd=WORK, capture_output=True
        )
    return target


def run() -> list[dict[str, Any]]:
    if not shutil.which("pt-query-digest") or not Path("/usr/bin/time").exists():
        return [
            {
                "name": "slowlog_digest_vs_pt_query_digest",
                "ratio": 0.0,
                "budget": SPEED_BUDGET,
                "ok": False,
                "error": "pt-query-digest (Debian percona-toolkit) or GNU time is missing: `make bench` installs them",
            }
        ]
    log = _large_log()
    ours_s, ours_mb, ours_cpu = _timed([sys.executable, "-m", "shared.perf", "digest", str(log)], WORK / "ours.json")
    pt_s, pt_mb, pt_cpu = _timed(["pt-query-digest", "--output", "json", "--limit", "100%", str(log)], WORK / "pt.json")
    ours = {c["fingerprint"]: c["count"] for c in json.loads((WORK / "ours.json").read_text())["ranked"]}
    pt = {c["fingerprint"]: int(c["query_count"]) for c in json.loads((WORK / "pt.json").read_text())["classes"]}
    same = sum(1 for k, v in ours.items() if pt.get(k) == v)
    speedup = pt_s / ours_s
    return [
        {
            "name": "slowlog_digest_vs_pt_query_digest",
            "ratio": round(speedup, 2),
            "budget": SPEED_BUDGET,
            "ok": speedup >= SPEED_BUDGET and ours_mb < MEMORY_BUDGET_MB,
            "file_mb": round(log.stat().st_size / 1e6, 1),
            "ours_s": ours_s,
            "pt_s": pt_s,
            "ours_peak_mb": round(ours_mb, 1),
            "pt_peak_mb": round(pt_mb, 1),
            "classes_ours": len(ours),
            "classes_pt": len(pt),
            "classes_identical": same,
            "entries_ours": sum(ours.values()),
            "entries_pt": sum(pt.values()),
            "ours_cpu_s": ours_cpu,
            "pt_cpu_s": pt_cpu,
            "note": "ratio = pt-query-digest time / our time (higher is better); cpu = user + system seconds",
        },
        _gzip_row(log, ours_s),
        _phases_row(log, ours_s),
    ]


def _gzip_log(log: Path) -> Path:
    target = log.with_suffix(".log.gz")
    if not target.exists() or target.stat().st_mtime < log.stat().st_mtime:
        with open(log, "rb") as source, gzip.open(target, "wb", compresslevel=6) as sink:
            shutil.copyfileobj(source, sink, 4 * 1024 * 1024)
    return target


def _gzip_row(log: Path, plain_s: float) -> dict[str, Any]:
    packed = _gzip_log(log)
    gz_s, gz_mb, gz_cpu = _timed([sys.executable, "-m", "shared.perf", "digest", str(packed)], WORK / "ours-gz.json")
    zcat_s, _, _ = _timed(["zcat", str(packed)], None)
    ratio = gz_s / (plain_s + zcat_s)
    same = (WORK / "ours-gz.json").read_bytes() == (WORK / "ours.json").read_bytes()
    return {
        "name": "slowlog_digest_gzip",
        "ratio": round(ratio, 2),
        "budget": GZIP_BUDGET,
        "ok": ratio <= GZIP_BUDGET and same,
        "gz_mb": round(packed.stat().st_size / 1e6, 1),
        "gz_s": gz_s,
        "plain_s": plain_s,
        "zcat_s": zcat_s,
        "gz_peak_mb": round(gz_mb, 1),
        "gz_cpu_s": gz_cpu,
        "same_json_as_plain": same,
        "note": "ratio = our time on the .gz / (our time on the plain log + zcat time) (lower is better)",
    }


def _phases_row(log: Path, ours_s: float) -> dict[str, Any]:
    code = "import json, sys; from benchmarks.slowlog_parser import phases; print(json.dumps(phases(sys.argv[1])))"
    done = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, check=True, cwd=ROOT)
    times = json.loads(done.stdout)
    return {
        "name": "slowlog_digest_phases",
        "ratio": round(times["sequential_digest_s"] / ours_s, 2),
        "budget": None,
        "ok": True,
        **times,
        "note": "ratio = one sequential pass / the CLI's time (two processes); seconds per stage run alone in "
        "one process: split includes read, headers includes both",
    }


def _read(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(1024 * 1024):
            pass


def _split(path: str) -> None:
    from shared.perf.parsers.slowlog.parser import MAX_LINE_BYTES

    with open(path, "rb") as f:
        readline = f.readline
        while readline(MAX_LINE_BYTES):
            pass


def _headers(path: str) -> list[Any]:
    from shared.perf.parsers.slowlog.parser import parse

    with open(path, "rb") as f:
        return list(parse(f))


def _fingerprints(entries: list[Any]) -> list[str]:
    """Class keys as aggregate() computes them, with its cache."""
    from shared.perf.parsers.slowlog.aggregate import ClassKeys

    key_of = ClassKeys()
    return [key_of(e.query) for e in entries]


def _aggregate(entries: list[Any], keys: list[str]) -> None:
    from shared.perf.parsers.slowlog.aggregate import QueryClass

    classes: dict[str, QueryClass] = {}
    for e, fp in zip(entries, keys, strict=True):
        qc = classes.get(fp)
        if qc is None:
            qc = classes[fp] = QueryClass(fp)
        qc.add(e)


def _sequential(path: str) -> None:
    from shared.perf.parsers.slowlog.aggregate import digest
    from shared.perf.parsers.slowlog.parser import parse

    with open(path, "rb") as f:
        digest(parse(f))


def phases(path: str) -> dict[str, float]:
    """Seconds of each stage of the digest, each run alone over the same log (holds every entry in memory)."""
    out: dict[str, float] = {}

    def clock(name: str, stage: Any, *args: Any) -> Any:
        start = time.perf_counter()
        result = stage(*args)
        out[name] = round(time.perf_counter() - start, 3)
        return result

    # Every entry stays in memory between the stages: the collector would scan them again and again,
    # which one pass (it keeps none) never pays.
    gc.disable()
    clock("read_s", _read, path)
    clock("split_s", _split, path)
    entries = clock("headers_s", _headers, path)
    keys = clock("fingerprint_s", _fingerprints, entries)
    clock("aggregate_s", _aggregate, entries, keys)
    out["entries"] = len(entries)
    del entries, keys
    gc.enable()
    gc.collect()
    clock("sequential_digest_s", _sequential, path)
    return out
