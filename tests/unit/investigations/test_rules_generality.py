"""The rule path reads what tools accept, not what they are called: a server that names its tools differently
(same input schemas) gets the same investigation, call for call, and the same report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.investigations import rules
from tests.support import scenarios

# Names another Kubernetes MCP server might use for the same tools.
RENAMED = {
    "events_list": "cluster_events",
    "namespaces_list": "list_all_namespaces",
    "nodes_log": "node_service_logs",
    "nodes_stats_summary": "node_summary",
    "nodes_top": "node_usage",
    "pods_list": "all_pods",
    "pods_list_in_namespace": "namespace_pods",
    "pods_get": "pod_details",
    "pods_top": "pod_usage",
    "pods_log": "container_logs",
    "resources_list": "k8s_list",
    "resources_get": "k8s_describe",
}
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
    ]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_renamed_tools_get_the_same_investigation(path: Path) -> None:
    scenario = scenarios.load(path)
    report, made = investigate(scenario, rename=False)
    renamed_report, renamed_made = investigate(scenario, rename=True)
    assert renamed_made == made
    text = renamed_report["analysis"]
    for new, old in BACK.items():
        text = text.replace(new, old)
    assert text == report["analysis"]
    assert made or not scenarios.tools_for(scenario) or rules.planner.is_heartbeat(scenario["alert"])
