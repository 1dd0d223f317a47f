"""The rule path reads what tools accept, not what they are called: a server that names its tools differently
(same input schemas) gets the same investigation, call for call, and the same report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.investigations import rules
from tests.support import scenarios

# Other names for the same tools, each as long as the original: the report quotes tool names and is cut at 2,000
# characters, so names of other lengths would move the cut, not the investigation.
RENAMED = {
    name: name[::-1]
    for name in (
        "events_list", "namespaces_list", "nodes_log", "nodes_stats_summary", "nodes_top", "pods_list",
        "pods_list_in_namespace", "pods_get", "pods_top", "pods_log", "resources_list", "resources_get",
    )
}  # fmt: skip
BACK = {v: k for k, v in RENAMED.items()}


def investigate(scenario: dict[str, Any], rename: bool) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    tools = scenarios.tools_for(scenario)
    if rename:
        tools = [{**t, "name": RENAMED.get(t["name"], t["name"])} for t in tools]
    state = rules.InvestigationState(
        alert=scenario["alert"],
        runbook=scenario.get("runbook_markdown"),
        tools=[rules.ToolSpec.model_validate(t) for t in tools],
    )
    calls = rules.first_calls(state)
    iteration = 0
    while calls:
        for call in calls:
            served = BACK.get(call.tool, call.tool) if rename else call.tool
            answer = scenarios.answer(scenario, served, call.args)
            state.calls.append(
                rules.CallRecord(
                    tool=call.tool, args=call.args, output=answer.text, is_error=answer.is_error, iteration=iteration
                )
            )
        iteration += 1
        calls = rules.next_calls(state)
    made = [(BACK.get(c.tool, c.tool) if rename else c.tool, json.dumps(c.args, sort_keys=True)) for c in state.calls]
    return rules.report(state), made


def _files() -> list[Path]:
    corpus = scenarios.FIXTURES.parent / "investigations_corpus"
    return [
        *scenarios.scenario_files(),
        *scenarios.scenario_files(scenarios.HELDOUT),
        *sorted(corpus.glob("*/*.json")),
        *sorted((scenarios.FIXTURES.parent / "investigations_blind").glob("*.json")),
    ]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_renamed_tools_get_the_same_investigation(path: Path) -> None:
    scenario = scenarios.load(path)
    report, made = investigate(scenario, rename=False)
    renamed_report, renamed_made = investigate(scenario, rename=True)
    assert renamed_made == made
    text = renamed_report["analysis"]
    for new, old in sorted(BACK.items(), key=lambda no: -len(no[0])):  # a longer name may hold a shorter one
        text = text.replace(new, old)
    assert text == report["analysis"]
    assert made or not scenarios.tools_for(scenario) or rules.planner.is_heartbeat(scenario["alert"])
