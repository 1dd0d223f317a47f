"""The rule engine's cost per iteration (issue #26): planning and reading the evidence, on every scenario.

Each scenario of tests/fixtures/investigations, investigations_heldout and investigations_corpus is
investigated in process (devhost.rule_scores: the rules choose, the scenario answers). Per iteration the
engine runs `next_calls` (the walk) and, for the partial analysis, `findings`; at the end `report`. Timed
against a baseline run in the same loop on the same data: the iteration's state serialised and validated again
(`InvestigationState.model_validate_json(state.model_dump_json())`), the least the plan activity does to
read its input. Ratio = engine time / baseline time, median over the scenarios' iterations.

Budget BUDGET: measured 17-27 (p90 25-45) on the 2-core machine (the walk reads each output once per iteration: describe
text, YAML, logs); the plan activity's own overhead (loading the run, the record, the outputs) is measured by
the `investigations` benchmark, whose budget this must not break. Also reported: the mean calls per
investigation (the engine now makes more calls than the keyword rules did).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from devhost.rule_scores import investigate
from devhost.scenario_data import load
from devhost.stack import ROOT
from shared.investigations import rules

BUDGET = 80.0
FIXTURES = ROOT / "tests" / "fixtures"


def _files() -> list[Path]:
    dirs = [FIXTURES / "investigations", FIXTURES / "investigations_heldout"]
    dirs += [FIXTURES / "investigations_corpus" / half for half in ("dev", "test")]
    return [f for d in dirs for f in sorted(d.glob("*.json"))]


def _iteration_ratios(state: rules.InvestigationState) -> list[float]:
    """Replay the finished investigation iteration by iteration: engine time / baseline time for each."""
    ratios: list[float] = []
    last = max((c.iteration for c in state.calls), default=-1)
    for n in range(last + 1):
        partial = state.model_copy(update={"calls": [c for c in state.calls if c.iteration < n]})
        t0 = time.perf_counter()
        rules.InvestigationState.model_validate_json(partial.model_dump_json())
        base = time.perf_counter() - t0
        t0 = time.perf_counter()
        rules.next_calls(partial)
        rules.findings(partial)
        engine = time.perf_counter() - t0
        ratios.append(engine / max(base, 1e-6))
    return ratios


def run() -> list[dict[str, Any]]:
    ratios: list[float] = []
    calls: list[int] = []
    report_ms: list[float] = []
    for f in _files():
        scenario = load(f)
        _, state = investigate(scenario)
        calls.append(len(state.calls))
        ratios += _iteration_ratios(state)
        t0 = time.perf_counter()
        rules.report(state)
        report_ms.append((time.perf_counter() - t0) * 1000)
    ratio = statistics.median(ratios) if ratios else 0.0
    return [
        {
            "name": "rule_engine_per_iteration",
            "ratio": round(ratio, 2),
            "budget": BUDGET,
            "ok": ratio <= BUDGET,
            "scenarios": len(calls),
            "iterations": len(ratios),
            "ratio_p90": round(statistics.quantiles(ratios, n=10)[-1], 2) if len(ratios) > 10 else None,
            "mean_calls_per_investigation": round(statistics.mean(calls), 2) if calls else 0,
            "report_ms_median": round(statistics.median(report_ms), 1) if report_ms else 0,
            "report_ms_max": round(max(report_ms), 1) if report_ms else 0,
        }
    ]
