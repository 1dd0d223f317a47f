"""Cold start: importing function_app.py (what the host does to index) vs azure.functions + azure.durable_functions."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

from devhost.stack import ROOT

BUDGET = 1.6
BASELINE = "import azure.functions, azure.durable_functions"
APP = "import function_app; function_app.app.get_functions()"


def _time_import(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def run(rounds: int = 15) -> dict[str, Any]:
    _time_import(BASELINE), _time_import(APP)  # warm the page cache for both
    base, app = [], []
    for _ in range(rounds):  # interleaved so drift on a shared machine hits both alike
        base.append(_time_import(BASELINE))
        app.append(_time_import(APP))
    ratio = statistics.median(app) / statistics.median(base)
    return {
        "name": "cold_start_import",
        "baseline_median_s": round(statistics.median(base), 4),
        "app_median_s": round(statistics.median(app), 4),
        "ratio": round(ratio, 3),
        "budget": BUDGET,
        "ok": ratio <= BUDGET,
        "rounds": rounds,
    }
