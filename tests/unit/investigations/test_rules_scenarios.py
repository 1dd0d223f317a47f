"""The rule path on every scenario: an in-process loop (first_calls, next_calls, scenarios.answer) and the score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devhost import rule_scores
from shared.investigations import rules
from tests.support import scenarios

HELDOUT = Path(__file__).resolve().parents[2] / "fixtures" / "investigations_heldout"


def run(scenario: dict[str, Any]) -> tuple[dict[str, Any], rules.InvestigationState]:
    """Investigate one scenario the way the orchestrator will: iterate until the rules stop or the budget ends."""
    return rule_scores.investigate(scenario)


def _table(files: list[Path]) -> tuple[float, list[str]]:
    lines, total = [], 0.0
    for f in files:
        scenario = scenarios.load(f)
        result, state = run(scenario)
        s = scenarios.score(result["analysis"], scenario) or 0.0
        total += s
        lines.append(f"{scenario['id']:<40} {s:.2f} {len(result['analysis']):>5} chars {len(state.calls):>3} calls")
    return total / len(files), lines


# The mean the rule path reached when this test was written, minus 0.02: a regression floor.
FLOOR = 0.98


def test_rule_path_scores_on_the_seventeen_scenarios() -> None:
    files = scenarios.scenario_files()
    if not files:
        pytest.fail("no scenario files: ../shared must sit beside the repo")
    mean, lines = _table(files)
    print("\n" + "\n".join(lines) + f"\nmean {mean:.3f}")
    assert mean >= FLOOR


def test_rule_path_generalises_to_the_held_out_scenarios() -> None:
    """Hand-written scenarios the rules were not written against (same schema, tests/fixtures)."""
    files = scenarios.scenario_files(HELDOUT)
    assert len(files) >= 3
    mean, lines = _table(files)
    print("\n" + "\n".join(lines) + f"\nheld-out mean {mean:.3f}")
    assert mean >= HELDOUT_FLOOR


HELDOUT_FLOOR = 0.98
DEV_FLOOR = 0.87
TEST_FLOOR = 0.45
BLIND_FLOOR = 0.84
BLIND2_FLOOR = 0.79
BLIND3_FLOOR = 0.29


def test_an_error_the_rules_have_no_rule_for_is_still_named_from_the_log() -> None:
    """A crash whose previous log names a missing file (no dedicated rule keyed on it): the report quotes it."""
    scenario = {
        "alert": {
            "title": "KubePodCrashLooping",
            "description": "Pod billing/invoice-renderer-5d9f7 is crash looping.",
            "labels": {"alertname": "KubePodCrashLooping", "namespace": "billing", "pod": "invoice-renderer-5d9f7"},
            "severity": "warning",
            "starts_at": "2026-11-20T08:00:00Z",
        },
        "tool_responses": [
            {
                "tool": "pods_log",
                "match": {"name": "invoice-renderer-5d9f7", "namespace": "billing", "previous": True},
                "output": "starting renderer\n"
                "FATAL: could not open /etc/renderer/fonts.conf: no such file or directory",
            },
            {
                "tool": "resources_get",
                "match": {"apiVersion": "v1", "kind": "Pod", "name": "invoice-renderer-5d9f7", "namespace": "billing"},
                "output": "Name: invoice-renderer-5d9f7\nNamespace: billing\nContainers:\n  renderer:\n"
                "    State: Waiting\n      Reason: CrashLoopBackOff\n    Last State: Terminated\n      Reason: Error\n"
                "      Exit Code: 1\n",
            },
        ],
        "expected_keywords": [["fonts.conf"], ["CrashLoopBackOff", "crash loop"]],
    }
    result, _ = run(scenario)
    assert "fonts.conf" in result["root_cause"]
    assert scenarios.score(result["analysis"], scenario) == 1.0


def test_the_last_fatal_line_of_a_traceback_is_the_one_quoted() -> None:
    from shared.investigations.rules.log_rules import _last_fatal

    log = 'Traceback (most recent call last):\n  File "app.py", line 3\nKeyErrorish\nValueError: bad port "x"\nbye'
    assert _last_fatal(log) == 'ValueError: bad port "x"'
    assert _last_fatal("2026-11-20 FATAL cannot bind :80\nshutting down") == "2026-11-20 FATAL cannot bind :80"
    assert _last_fatal("all good\nINFO ready") == ""


CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "investigations_corpus"
# The corpus converted from public material (tests/fixtures/investigations_corpus/README.md), split by sha256(id)
# before the rules were run on it. The rules were tuned on dev/ only; test/ is reported, never tuned to.
# Floors: the means measured at the end of the second session of issue #26 (dev 0.907 over 56, test 0.483 over 54
# after a third batch of 24 public scenarios joined both halves, blind 0.873 and blind set 2 0.826, both tuned on
# once measured blind) minus about 0.03: a regression floor, not a target.
CORPUS_FLOORS = {"dev": DEV_FLOOR, "test": TEST_FLOOR}


@pytest.mark.parametrize("half", ["dev", "test"])
def test_rule_path_on_the_public_corpus(half: str) -> None:
    files = sorted((CORPUS / half).glob("*.json"))
    assert len(files) >= 20
    mean, lines = _table(files)
    print("\n" + "\n".join(lines) + f"\n{half} mean {mean:.3f}")
    assert mean >= CORPUS_FLOORS[half]


def test_rule_path_on_the_blind_set() -> None:
    """Scenarios written by a session that never saw the rules (tests/fixtures/investigations_blind/README.md)."""
    files = sorted((CORPUS.parent / "investigations_blind").glob("*.json"))
    assert len(files) == 15
    mean, lines = _table(files)
    print("\n" + "\n".join(lines) + f"\nblind mean {mean:.3f}")
    assert mean >= BLIND_FLOOR


# Sets written by sessions that never read the rules (each README says how it was used): blind set 2 measured blind
# at 0.462 and tuned on since; blind set 3 at 0.302 on its first run, never read.
LATER_BLIND_SETS = {"investigations_blind2": BLIND2_FLOOR, "investigations_blind3": BLIND3_FLOOR}


@pytest.mark.parametrize("folder", sorted(LATER_BLIND_SETS))
def test_rule_path_on_the_later_blind_sets(folder: str) -> None:
    files = sorted((CORPUS.parent / folder).glob("*.json"))
    assert len(files) == 20
    mean, lines = _table(files)
    print("\n" + "\n".join(lines) + f"\n{folder} mean {mean:.3f}")
    assert mean >= LATER_BLIND_SETS[folder]
