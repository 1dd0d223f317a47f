"""The perf-advice corpus: each artifact has one known problem, and gets that finding and advice, and no other
case gets that problem's pattern (tests/fixtures/perf_advice/README.md; answers written before the rules ran).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from shared.perf.__main__ import _local_artifacts
from shared.perf.analysis.ranking import analyze
from shared.perf.parsers.snapshot import build

CORPUS = Path(__file__).parents[2] / "fixtures" / "perf_advice"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
CASES = EXPECTED["cases"]


@cache
def findings(case: str) -> tuple[dict[str, Any], ...]:
    built, _ = build(_local_artifacts([CORPUS / name for name in CASES[case]["files"]]))
    return tuple(analyze(built.content, built.snapshot_id, top_n=10)["findings"])


def _matching(case: str, want: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in findings(case) if f["metric"] == want["metric"] and want["subject_contains"] in f["subject"]]


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_gets_its_expected_finding_pattern_and_advice(case: str) -> None:
    for want in CASES[case]["expect"]:
        [found] = _matching(case, want)
        assert found["diagnosis"]["pattern"] == want["pattern"], found["suggestion"]
        text = found["suggestion"]
        missing = [p for p in want["advice_includes"] if p not in text]
        assert missing == [], text
        wrong = [p for p in want["advice_excludes"] if p.lower() in text.lower()]
        assert wrong == [], text


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_case_carries_only_the_patterns_its_problem_allows(case: str) -> None:
    seen = {f["diagnosis"]["pattern"] for f in findings(case)}
    assert seen <= set(CASES[case]["allowed"]), [(f["subject"], f["suggestion"]) for f in findings(case)]


@pytest.mark.parametrize("problem", sorted(EXPECTED["problem_patterns"]))
def test_no_other_case_gets_a_problems_pattern(problem: str) -> None:
    patterns = set(EXPECTED["problem_patterns"][problem])
    elsewhere = {
        case: sorted({f["diagnosis"]["pattern"] for f in findings(case)} & patterns)
        for case, spec in CASES.items()
        if spec["problem"] != problem
    }
    assert {case: hits for case, hits in elsewhere.items() if hits} == {}


def test_healthy_controls_have_no_finding() -> None:
    healthy = [case for case, spec in CASES.items() if spec["problem"] is None and not spec["expect"]]
    assert healthy
    assert {case: len(findings(case)) for case in healthy} == dict.fromkeys(healthy, 0)
