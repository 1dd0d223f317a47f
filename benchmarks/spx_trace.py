"""SPX trace aggregation vs `zcat FILE | wc -l` on the large fixture trace (142 MB of text, 5.9 M events).

Both run as separate processes under GNU time in the same run. Budget: at most 4x the zcat baseline,
peak memory under 150 MB. The aggregation reads ahead: a thread decompresses the next blocks while the
parser works on the current one (shared/perf/parsers/spx/readahead.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from devhost.stack import ROOT

LARGE = ROOT.parent / "shared" / "fixtures" / "spx" / "large" / "spx-full-20261122_030723-vm-31305-1804289383"
WORK = ROOT / ".local" / "bench"
SPEED_BUDGET = 4.0
MEMORY_BUDGET_MB = 150
_AGGREGATE = (
    "import gzip, json, sys; from shared.perf.parsers.spx.trace import aggregate_trace; "
    "meta = json.load(open(sys.argv[1] + '.json')); "
    "p = aggregate_trace(gzip.open(sys.argv[1] + '.txt.gz', 'rb'), "
    "meta['enabled_metrics'], meta['called_function_count']); "
    "print(p.events)"
)


def _timed(cmd: list[str]) -> tuple[float, float, str]:
    stats = WORK / "spx.time"
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", "-o", str(stats), *cmd], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    seconds, kb = stats.read_text().split()[-2:]
    return float(seconds), int(kb) / 1024, out.strip()


def run() -> list[dict[str, Any]]:
    if not Path(f"{LARGE}.txt.gz").exists():
        return [
            {
                "name": "spx_aggregate_vs_zcat_wc",
                "ratio": 0.0,
                "budget": SPEED_BUDGET,
                "ok": False,
                "error": f"{LARGE}.txt.gz not found (../shared/fixtures)",
            }
        ]
    WORK.mkdir(parents=True, exist_ok=True)
    base_s, _, lines = _timed(["sh", "-c", f"zcat '{LARGE}.txt.gz' | wc -l"])
    ours_s, ours_mb, events = _timed([sys.executable, "-c", _AGGREGATE, str(LARGE)])
    ratio = ours_s / base_s
    return [
        {
            "name": "spx_aggregate_vs_zcat_wc",
            "ratio": round(ratio, 2),
            "budget": SPEED_BUDGET,
            "ok": ratio <= SPEED_BUDGET and ours_mb < MEMORY_BUDGET_MB,
            "zcat_wc_s": base_s,
            "ours_s": ours_s,
            "ours_peak_mb": round(ours_mb, 1),
            "lines": int(lines),
            "events": int(events),
            "note": "ratio = our time / zcat|wc -l time (lower is better)",
        }
    ]
