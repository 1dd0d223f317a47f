"""The scenario harness follows the fixtures README: first match wins, extra args ignored, not-found wording."""

from __future__ import annotations

import pytest

from tests.support import scenarios

FILES = scenarios.scenario_files()


def test_the_seventeen_scenarios_load() -> None:
    if not FILES:
        pytest.fail(f"no scenario files under {scenarios.FIXTURES}")
    assert len(FILES) == 17
    assert all(scenarios.load(f)["id"] == f.stem for f in FILES)


def test_first_matching_entry_wins_and_extra_arguments_are_ignored() -> None:
    s = {
        "tool_responses": [
            {"tool": "pods_log", "match": {"name": "p", "previous": True}, "output": "previous"},
            {"tool": "pods_log", "match": {"name": "p"}, "output": "current"},
        ]
    }
    assert scenarios.answer(s, "pods_log", {"name": "p", "previous": True, "tail": 5}).text == "previous"
    assert scenarios.answer(s, "pods_log", {"name": "p", "namespace": "x"}).text == "current"
    assert scenarios.answer(s, "pods_log", {"name": "p", "previous": "true"}).text == "current"  # true is not "true"


def test_unmatched_calls_answer_like_the_real_server() -> None:
    s: dict = {"tool_responses": []}
    missing = scenarios.answer(s, "pods_get", {"name": "a", "namespace": "b"})
    assert missing.is_error
    assert missing.text == 'failed to get pod a in namespace b: pods "a" not found'
    assert scenarios.answer(s, "events_list", {"namespace": "b"}).text == "# No events found"
    assert scenarios.answer(s, "resources_get", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}).text == (
        'failed to get resource: deployments.apps "x" not found'
    )
    assert scenarios.answer({"available_tools": []}, "pods_get", {}).is_error


def test_score_counts_groups_case_and_space_insensitively() -> None:
    s = {"expected_keywords": [["OOMKilled", "out of memory"], ["100Mi"]]}
    assert scenarios.score("The pod was  OUT OF\nmemory", s) == 0.5
    assert scenarios.score("oomkilled at 100mi", s) == 1.0
    assert scenarios.score("anything", {}) is None
