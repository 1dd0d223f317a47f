"""Slow-log digest vs pt-query-digest on the ~150 MB log that the fixture's make_large.sh generates.

Both run as separate processes under GNU time (wall seconds, peak RSS) on the same file in the same
run; the classes and their counts must agree. Budget: at least 3x faster, peak memory under 200 MB.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from devhost.stack import ROOT

FIXTURES = ROOT.parent / "shared" / "fixtures" / "slowlog" / "large"
WORK = ROOT / ".local" / "bench"
SPEED_BUDGET = 3.0
MEMORY_BUDGET_MB = 200


def _timed(cmd: list[str], out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `cmd`, its stdout written to `out`."""
    stats = out.with_suffix(".time")
    with open(out, "wb") as sink:
        subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", str(stats), *cmd],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            check=True,
            cwd=ROOT,
        )
    seconds, kb = stats.read_text().split()[-2:]
    return float(seconds), int(kb) / 1024


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
    ours_s, ours_mb = _timed([sys.executable, "-m", "shared.perf", "digest", str(log)], WORK / "ours.json")
    pt_s, pt_mb = _timed(["pt-query-digest", "--output", "json", "--limit", "100%", str(log)], WORK / "pt.json")
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
            "note": "ratio = pt-query-digest time / our time (higher is better)",
        }
    ]
