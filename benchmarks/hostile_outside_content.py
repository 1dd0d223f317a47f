"""Hostile outside content (tests/fixtures/hostile/outside_content.py) vs ordinary content of the same size, per
parser; and /api/health while a hostile runbook page is fetched and converted.

1. Per kind (runbook pages, redaction, the rules over tool outputs, model answers) the worst case over the
   corpus, as a ratio of its time to an ordinary input of the same kind and size, measured in the same run,
   each in a process of its own (`python -m tests.fixtures.hostile.outside_content`). A runbook's time is
   `fetch_runbook` against a server on 127.0.0.1 (fetch, decode, convert), after a warm-up fetch; its row
   also reports the longest the event loop went without a turn while it ran (`max_loop_stall_ms`).
   Budget TIME_BUDGET: linear parsers cost about what ordinary text of the size costs; dense markup and
   character references are more work per byte than prose (html.parser's worst cases were minutes, a
   ratio in the hundreds to thousands), and the machine's noise moves a ratio of small times by 2x.
2. The real app on the offline host, the runbook cap at its 8 MiB maximum, one investigation whose runbook
   is `busy_page` (half dense blocks: seconds of linear work; half `<a x`). From the moment the runbook host
   served the page until the investigation records the runbook, /api/health is asked back to back; the
   worst and median latency are reported against idle ones. Budget: every answer within HEALTH_BUDGET_S.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from benchmarks.hostile_inputs import health_seconds
from devhost.processes import HostProcess
from devhost.stack import ROOT

TIME_BUDGET = 5.0
MEMORY_BUDGET_MB = 200
HEALTH_BUDGET_S = 1.0
MAX_RUNBOOK_BYTES = 8 * 1024 * 1024
_MIN_SECONDS = 0.02  # below this both are noise: the ratio is taken against this floor
_ROUNDS = 2  # each input is timed this many times (the faster counts): the ratio of two noisy numbers


def _child(args: list[str]) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for _ in range(_ROUNDS):
        done = subprocess.run(
            [sys.executable, "-m", "tests.fixtures.hostile.outside_content", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode:
            return {"outcome": "crash", "stderr": done.stderr[-500:], "seconds": float("inf"), "peak_rss_mb": 1e9}
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def _corpus() -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.hostile.outside_content import CASES

    worst: dict[str, dict[str, Any]] = {}
    for name, case in CASES.items():
        hostile = _child([name])
        base = _child(["--benign", case.kind, str(hostile.get("input_bytes", 0))])
        ratio = max(hostile["seconds"], _MIN_SECONDS) / max(base["seconds"], _MIN_SECONDS)
        row = {
            "case": name,
            "input_kb": round(hostile.get("input_bytes", 0) / 1024),
            "outcome": hostile["outcome"],
            "hostile_s": hostile["seconds"],
            "benign_s": base["seconds"],
            "time_ratio": round(ratio, 2),
            "hostile_peak_mb": hostile["peak_rss_mb"],
            **({"max_loop_stall_ms": hostile.get("max_loop_stall_ms")} if case.kind == "runbook" else {}),
        }
        print(json.dumps(row), file=sys.stderr)
        kept = worst.get(case.kind)
        peak = max(row["hostile_peak_mb"], (kept or {}).get("peak_mb_any_case", 0))
        stall = max(row.get("max_loop_stall_ms") or 0, (kept or {}).get("max_loop_stall_ms_any_case", 0))
        crashed = row["outcome"] != "ok" or (kept or {}).get("any_crash", False)
        if kept is None or row["time_ratio"] > kept["time_ratio"]:
            kept = worst[case.kind] = dict(row)
        kept.update(peak_mb_any_case=peak, any_crash=crashed)
        if case.kind == "runbook":
            kept["max_loop_stall_ms_any_case"] = stall
    return [
        {
            "name": f"hostile_{kind}_worst_vs_benign_same_size",
            "ratio": w["time_ratio"],
            "budget": TIME_BUDGET,
            "ok": w["time_ratio"] <= TIME_BUDGET and w["peak_mb_any_case"] < MEMORY_BUDGET_MB and not w["any_crash"],
            **w,
            "note": (
                f"worst case over the {kind} corpus by time ratio (fastest of {_ROUNDS} runs each); "
                f"peak_mb_any_case: largest peak RSS of any {kind} case (budget < {MEMORY_BUDGET_MB} MB)"
            ),
        }
        for kind, w in worst.items()
    ]


def _health_during_runbook(env: dict[str, str], work: Path) -> dict[str, Any]:
    from tests.fixtures.hostile.outside_content import busy_page
    from tests.support import scenarios
    from tests.support.runbook_server import serve_runbook
    from tests.support.scenario_mcp_server import serve_scenario

    scenario = scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as runbooks:
        url = runbooks.page("/hostile.html", busy_page(MAX_RUNBOOK_BYTES), "text/html")
        host = HostProcess(
            {
                **env,
                "FIREBREAK_TASK_HUB": f"hub{uuid.uuid4().hex[:10]}",
                "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
                "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32",
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_INVESTIGATIONS_RUNBOOK_MAX_BYTES": str(MAX_RUNBOOK_BYTES),
            },
            work / "hostile-runbook-host.log",
        )
        try:
            host.wait_ready()
            idle = [health_seconds(host.base_url, timeout=120) for _ in range(20)]
            alert: dict[str, Any] = dict(scenario["alert"])
            alert["annotations"] = {**alert["annotations"], "runbook_url": url}
            headers = {"x-dev-workspace": f"ws-bench-runbook-{uuid.uuid4().hex[:8]}"}
            r = httpx.post(f"{host.base_url}/api/investigations", json=alert, headers=headers, timeout=60)
            r.raise_for_status()
            inv_id = r.json()["started"][0]["investigation_id"]
            while "/hostile.html" not in runbooks.requests:
                time.sleep(0.005)
            served = time.perf_counter()
            busy: list[float] = []
            while True:
                latency = health_seconds(host.base_url, timeout=120)
                view = httpx.get(f"{host.base_url}/api/investigations/{inv_id}", headers=headers, timeout=120).json()
                if view["runbook"]["status"] != "none" or view["status"] in ("completed", "failed", "cancelled"):
                    break
                busy.append(latency)
            window = time.perf_counter() - served
            httpx.post(f"{host.base_url}/api/investigations/{inv_id}/cancel", headers=headers, timeout=30)
        finally:
            host.stop()
    worst = max(busy) if busy else float("inf")
    return {
        "name": "health_latency_during_hostile_runbook",
        "ratio": round(statistics.median(busy) / statistics.median(idle), 2) if busy else 0.0,
        "budget": None,
        "ok": worst <= HEALTH_BUDGET_S and view["runbook"]["status"] == "fetched",
        "runbook_mb": round(MAX_RUNBOOK_BYTES / 1024 / 1024),
        "runbook_status": view["runbook"]["status"],
        "served_to_recorded_s": round(window, 2),
        "health_answers_during": len(busy),
        "idle_median_ms": round(statistics.median(idle) * 1000, 1),
        "busy_median_ms": round(statistics.median(busy) * 1000, 1) if busy else None,
        "busy_max_ms": round(worst * 1000, 1),
        "note": (
            "ratio = median health latency from the page served to the runbook recorded / idle; ok when every "
            f"answer took <= {HEALTH_BUDGET_S} s and the runbook was fetched"
        ),
    }


def run(env: dict[str, str] | None = None, *, corpus: bool = True) -> list[dict[str, Any]]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fb-outside-") as tmp:
        results = _corpus() if corpus else []
        if env is not None:
            results.append(_health_during_runbook(env, Path(tmp)))
        return results


if __name__ == "__main__":
    for r in run():
        print(json.dumps(r))
