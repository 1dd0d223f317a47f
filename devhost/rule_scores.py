"""The rule path on scenario files, in process: each scenario investigated the way the orchestrator does it
(first_calls, then next_calls until the rules stop or the budget ends, every call answered by the scenario's
server rules), and the report's `analysis` scored by the fixtures README's keyword rule.

    python -m devhost.rule_scores DIR [DIR ...] [--markdown] [--ceiling]

Prints one row per scenario (score, analysis length, calls) and the mean per directory. `--ceiling` prints, per
directory, what the same keyword rule would give if the analysis also carried every byte the investigation fetched,
and every byte the scenario could have answered: how much of a set's miss is reading (the words were fetched) and
how much is knowledge (they were never in any output). No stack is needed:
the MCP server, the runbook and the orchestrator are replaced by their pure parts, the same ones the app runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devhost.scenario_data import answer, load, score, tools_for
from shared.investigations import rules


def investigate(scenario: dict[str, Any]) -> tuple[dict[str, Any], rules.InvestigationState]:
    """Investigate one scenario with the rules, as the orchestrator would; the report and the final state."""
    state = rules.InvestigationState(
        alert=scenario["alert"],
        runbook=scenario.get("runbook_markdown"),
        tools=[rules.ToolSpec.model_validate(t) for t in tools_for(scenario)],
    )
    calls = rules.first_calls(state)
    iteration = 0
    while calls:
        for call in calls:
            got = answer(scenario, call.tool, call.args)
            state.calls.append(
                rules.CallRecord(
                    tool=call.tool, args=call.args, output=got.text, is_error=got.is_error, iteration=iteration
                )
            )
        iteration += 1
        calls = rules.next_calls(state)
    return rules.report(state), state


@dataclass
class Ceiling:
    """Mean scores of one directory: the report, the report plus all it fetched, plus all it could have fetched."""

    report: float
    fetched: float
    offered: float


def ceiling(files: list[Path]) -> Ceiling:
    """How far reading alone could go on these scenarios (see the module docstring)."""
    totals = [0.0, 0.0, 0.0]
    for f in files:
        scenario = load(f)
        result, state = investigate(scenario)
        fetched = "\n".join(c.output for c in state.calls)
        offered = "\n".join(
            [str(r.get("output") or "") for r in scenario.get("tool_responses") or []]
            + [str(scenario.get("alert")), str(scenario.get("runbook_markdown") or "")]
        )
        for i, text in enumerate((result["analysis"], result["analysis"] + fetched, result["analysis"] + offered)):
            totals[i] += score(text, scenario) or 0.0
    n = max(1, len(files))
    return Ceiling(*(t / n for t in totals))


@dataclass
class Row:
    id: str
    score: float
    chars: int
    calls: int


def score_files(files: list[Path]) -> list[Row]:
    """One row per scenario file."""
    rows = []
    for f in files:
        scenario = load(f)
        result, state = investigate(scenario)
        s = score(result["analysis"], scenario) or 0.0
        rows.append(Row(scenario["id"], s, len(result["analysis"]), len(state.calls)))
    return rows


def mean(rows: list[Row]) -> float:
    return sum(r.score for r in rows) / len(rows) if rows else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--markdown", action="store_true", help="Markdown tables (for the README)")
    parser.add_argument("--ceiling", action="store_true", help="scores with all fetched / all offered output added")
    args = parser.parse_args(argv)
    for d in args.dirs:
        if args.ceiling:
            c = ceiling(sorted(d.glob("*.json")))
            print(f"{d}: report {c.report:.3f}, + all fetched output {c.fetched:.3f}, + all offered {c.offered:.3f}")
            continue
        rows = score_files(sorted(d.glob("*.json")))
        if args.markdown:
            print(f"\n`{d}`: mean **{mean(rows):.2f}** over {len(rows)}, lowest {min(r.score for r in rows):.2f}\n")
            print("| scenario | score | analysis chars | calls |\n|---|---|---|---|")
            for r in rows:
                print(f"| {r.id} | {r.score:.2f} | {r.chars} | {r.calls} |")
        else:
            for r in rows:
                print(f"{r.id:<45} {r.score:.2f} {r.chars:>5} chars {r.calls:>3} calls")
            print(f"{d}: mean {mean(rows):.3f} over {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
