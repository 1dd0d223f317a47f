"""devhost/scenarios.py without a stack: which settings reach the host, which files are refused and why, output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devhost.scenarios import ScenarioFileError, ScenarioResult, load_scenario, markdown, passed_env, summary
from tests.support import scenarios


def test_the_llm_and_limit_settings_reach_the_host_and_nothing_else() -> None:
    environ = {
        "FIREBREAK_LLM_ENDPOINT": "https://llm.example.com",
        "FIREBREAK_LLM_MODEL": "m",
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": "https://api.example.com/v1",
        "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com",
        "FIREBREAK_INVESTIGATIONS_MAX_ITERATIONS": "3",
        "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": "[]",  # the command's own servers win
        "FIREBREAK_COSMOS_DATABASE": "prod",  # the stack's settings are the command's
        "HOME": "/root",
    }
    assert set(passed_env(environ)) == {
        "FIREBREAK_LLM_ENDPOINT",
        "FIREBREAK_LLM_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_ENDPOINT",
        "FIREBREAK_INVESTIGATIONS_MAX_ITERATIONS",
    }


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[1, 2]", "the file's JSON is not an object"),
        ('{"alert": {}}', "no `alert` object"),
        ('{"alert": {"title": "t"}, "tool_responses": [{"tool": "pods_get"}]}', "`tool_responses[0]` has no `output`"),
        ('{"alert": {"title": "t"}, "expected_keywords": ["OOMKilled"]}', "`expected_keywords` is not a list of"),
        ('{"alert": {"title": "t"}, "available_tools": "all"}', "`available_tools` is not a list of tool names"),
    ],
)
def test_a_file_that_is_not_a_scenario_says_what_is_wrong(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ScenarioFileError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(f"{path}: not a scenario file ({problem}")


def test_every_fixture_loads_and_a_file_without_an_id_is_named_after_itself(tmp_path: Path) -> None:
    for f in scenarios.scenario_files() + scenarios.scenario_files(scenarios.HELDOUT):
        assert load_scenario(f)["id"] == f.stem
    (tmp_path / "my alert.json").write_text(json.dumps({"alert": {"title": "t"}}))
    assert load_scenario(tmp_path / "my alert.json")["id"] == "my alert"


def _result(id_: str, score: float | None, status: str = "completed") -> ScenarioResult:
    return ScenarioResult(
        id=id_,
        path="rule",
        analysis="text",
        score=score,
        tool_calls=[{"tool": "pods_get", "args": {"name": "p"}}],
        iterations=1,
        stopped_because="done",
        status=status,
    )


def test_the_mean_is_over_scored_scenarios_and_unscored_ones_carry_no_score() -> None:
    out = summary([_result("a", 1.0), _result("b", 0.5), _result("c", None)])
    assert out["mean_score"] == 0.75
    assert out["scored"] == 2
    assert "score" not in out["scenarios"][2]
    fields = {"id", "path", "analysis", "score", "tool_calls", "iterations", "stopped_because"}
    assert set(out["scenarios"][0]) >= fields
    md = markdown([_result("a", 1.0), _result("b", None, status="rejected")])
    assert "| a | 1.00 | rule | 1 | 4 |" in md
    assert "| b (rejected) | - | rule | 1 | 4 |" in md
    assert "Mean score: 1.000 over 1 scored scenario(s)." in md
