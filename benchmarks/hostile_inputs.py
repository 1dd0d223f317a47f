"""Hostile inputs (tests/fixtures/hostile) vs ordinary inputs of the same size, per parser; and /api/health
while the crafted slow log is being ingested.

Each input runs in a process of its own (its peak RSS is its own); its parse time is measured inside
that process, after the imports. Per parser, the worst case over its corpus is reported as a ratio
against an ordinary input of the same size parsed in the same run. Budgets: parse time at most
TIME_BUDGET x the benign input's (linear parsers: hostile text costs what ordinary text costs), peak
RSS under MEMORY_BUDGET_MB; health answered within HEALTH_BUDGET_S, its latency reported against the
idle one.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from devhost.processes import HostProcess
from devhost.stack import ROOT

TIME_BUDGET = 5.0
MEMORY_BUDGET_MB = 200
HEALTH_BUDGET_S = 1.0
_MIN_SECONDS = 0.05  # below this both are noise: the ratio is taken against this floor


def _child(args: list[str], directory: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.fixtures.hostile.corpus", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode:
        return {"outcome": "crash", "stderr": done.stderr[-500:], "seconds": float("inf"), "peak_rss_mb": float("inf")}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _corpus(work: Path) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.hostile.corpus import CASES, input_bytes

    worst: dict[str, dict[str, Any]] = {}
    for name, case in CASES.items():
        sized = work / f"size-{name}"
        sized.mkdir()
        size = input_bytes(case, sized)
        hostile = _child([name, str(work / name)], work)
        base = _child(["--benign", case.kind, str(size), str(work / f"benign-{name}")], work)
        ratio = max(hostile["seconds"], _MIN_SECONDS) / max(base["seconds"], _MIN_SECONDS)
        mem_ratio = hostile["peak_rss_mb"] / base["peak_rss_mb"]
        row = {
            "case": name,
            "input_mb": round(size / 1e6, 2),
            "outcome": hostile["outcome"],
            "hostile_s": hostile["seconds"],
            "benign_s": base["seconds"],
            "time_ratio": round(ratio, 2),
            "hostile_peak_mb": hostile["peak_rss_mb"],
            "benign_peak_mb": base["peak_rss_mb"],
            "memory_ratio": round(mem_ratio, 2),
        }
        kept = worst.get(case.kind)
        if kept is None or (row["time_ratio"], row["hostile_peak_mb"]) > (kept["time_ratio"], kept["hostile_peak_mb"]):
            worst[case.kind] = {
                **row,
                "peak_mb_any_case": max(row["hostile_peak_mb"], (kept or {}).get("peak_mb_any_case", 0)),
            }
        else:
            kept["peak_mb_any_case"] = max(kept["peak_mb_any_case"], row["hostile_peak_mb"])
    return [
        {
            "name": f"hostile_{kind}_worst_vs_benign_same_size",
            "ratio": w["time_ratio"],
            "budget": TIME_BUDGET,
            "ok": w["time_ratio"] <= TIME_BUDGET
            and w["peak_mb_any_case"] < MEMORY_BUDGET_MB
            and w["outcome"] != "crash",
            **w,
            "note": (
                "worst case over the corpus by parse-time ratio; peak_mb_any_case is the largest peak RSS "
                f"of any {kind} case (budget < {MEMORY_BUDGET_MB} MB)"
            ),
        }
        for kind, w in worst.items()
    ]


def health_seconds(base_url: str, timeout: float = 60) -> float:
    """Seconds one `GET /api/health` took (raises unless it answered 2xx)."""
    started = time.perf_counter()
    r = httpx.get(f"{base_url}/api/health", timeout=timeout)
    r.raise_for_status()
    return time.perf_counter() - started


def _health_during_ingest(env: dict[str, str], work: Path) -> dict[str, Any]:
    host = HostProcess(
        {**env, "FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "true", "FIREBREAK_TASK_HUB": f"hub{uuid.uuid4().hex[:10]}"},
        work / "hostile-host.log",
    )
    try:
        host.wait_ready()
        idle = [health_seconds(host.base_url) for _ in range(20)]
        from tests.fixtures.hostile.corpus import crafted_log

        log = work / "crafted-slow.log"
        crafted_log(log, 600)
        busy: list[float] = []
        running = threading.Event()
        result: dict[str, Any] = {}

        def ingest() -> None:
            running.set()
            started = time.perf_counter()
            r = httpx.post(
                f"{host.base_url}/api/tools/artifacts.ingest",
                json={"artifacts": [{"path": str(log)}]},
                headers={"x-dev-workspace": "ws-bench-hostile"},
                timeout=1800,
            )
            result.update(status=r.status_code, seconds=time.perf_counter() - started)
            running.clear()

        worker = threading.Thread(target=ingest)
        worker.start()
        running.wait()
        while running.is_set():
            latency = health_seconds(host.base_url)
            if running.is_set():
                busy.append(latency)
        worker.join()
    finally:
        host.stop()
    worst = max(busy) if busy else float("inf")
    return {
        "name": "health_latency_during_crafted_slowlog_ingest",
        "ratio": round(statistics.median(busy) / statistics.median(idle), 2) if busy else 0.0,
        "budget": None,
        "ok": worst <= HEALTH_BUDGET_S and result.get("status") == 200,
        "log_mb": round(log.stat().st_size / 1e6, 1),
        "ingest_s": round(result.get("seconds", 0.0), 2),
        "health_answers_during": len(busy),
        "idle_median_ms": round(statistics.median(idle) * 1000, 1),
        "busy_median_ms": round(statistics.median(busy) * 1000, 1) if busy else None,
        "busy_max_ms": round(worst * 1000, 1),
        "note": (
            f"ratio = median health latency during the ingest / idle; ok when every answer took <= {HEALTH_BUDGET_S} s"
        ),
    }


def run(env: dict[str, str] | None = None, *, corpus: bool = True) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="fb-hostile-") as tmp:
        work = Path(tmp)
        results = _corpus(work) if corpus else []
        if env is not None:
            results.append(_health_during_ingest(env, work))
        return results


if __name__ == "__main__":
    for r in run():
        print(json.dumps(r))
