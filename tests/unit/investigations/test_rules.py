"""The rule path's contract: valid and unique calls within the budget, JSON in and out, honest reports."""

from __future__ import annotations

import json
import re

import pytest

from shared.investigations import rules
from tests.support import scenarios
from tests.unit.investigations.test_rules_scenarios import HELDOUT, run

FILES = scenarios.scenario_files() + scenarios.scenario_files(HELDOUT)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_calls_are_unique_valid_and_within_the_budget(path) -> None:
    scenario = scenarios.load(path)
    result, state = run(scenario)
    keys = [rules.ToolCall(tool=c.tool, args=c.args).key() for c in state.calls]
    assert len(keys) == len(set(keys))
    assert len(state.calls) <= state.budget.max_calls
    assert state.iterations_done() <= state.budget.max_iterations
    schemas = {t["name"]: t.get("inputSchema") or {} for t in scenarios.tools_for(scenario)}
    for call in state.calls:
        schema = schemas[call.tool]
        assert set(schema.get("required", [])) <= set(call.args), call
        assert set(call.args) <= set(schema.get("properties") or call.args), call
    assert len(result["analysis"]) <= 2000
    assert json.loads(json.dumps(result)) == result


def test_a_smaller_budget_is_respected() -> None:
    scenario = scenarios.load(scenarios.FIXTURES / "07_job_syntax_error.json")
    state = rules.InvestigationState(
        alert=scenario["alert"],
        tools=[rules.ToolSpec.model_validate(t) for t in scenarios.tools_for(scenario)],
        budget=rules.Budget(max_calls=3, max_iterations=2),
    )
    iteration = 0
    while calls := rules.next_calls(state):
        for call in calls:
            answer = scenarios.answer(scenario, call.tool, call.args)
            state.calls.append(
                rules.CallRecord(tool=call.tool, args=call.args, output=answer.text, iteration=iteration)
            )
        iteration += 1
    assert len(state.calls) == 3


def test_tempo_traces_name_the_slow_query_when_offered() -> None:
    scenario = scenarios.load(scenarios.FIXTURES / "14_tempo.json")
    scenario["available_tools"] = [t["name"] for t in scenarios.all_tools()] + [
        "tempo_fetch_traces",
        "tempo_fetch_trace_by_id",
    ]
    result, state = run(scenario)
    assert "tempo_fetch_trace_by_id" in {c.tool for c in state.calls}
    slow = [f for f in result["findings"] if f["rule"] == "slow_query"]
    assert slow
    assert "fraud-service" in slow[0]["cause"]
    assert "banned_card_numbers" in slow[0]["cause"]


def test_no_tools_says_so_and_what_to_connect() -> None:
    result, state = run(scenarios.load(scenarios.FIXTURES / "16_dns_resolution_no_tool.json"))
    assert state.calls == []
    assert "no tools are available" in result["analysis"].lower()
    assert "kubernetes-mcp-server" in result["analysis"]
    assert result["tools_unavailable"]


def test_without_a_finding_the_report_says_what_was_checked() -> None:
    scenario = {
        "alert": {"title": "SomethingOdd", "labels": {"alertname": "SomethingOdd", "namespace": "x", "pod": "p"}},
        "tool_responses": [],
    }
    result, state = run(scenario)
    assert state.calls
    assert result["root_cause"] is None
    assert "No cause found" in result["analysis"]
    assert "events_list" in result["analysis"]


def test_evidence_quotes_are_verbatim_lines_of_the_outputs() -> None:
    for path in scenarios.scenario_files():
        result, state = run(scenarios.load(path))
        outputs = {rules.ToolCall(tool=c.tool, args=c.args).key(): c.output for c in state.calls}
        for e in result["evidence"]:
            if e["tool"] in ("alert", "runbook"):
                continue
            text = outputs[rules.ToolCall(tool=e["tool"], args=e["args"]).key()]
            # Quotes are lines (or "Key: value" pairs of a description) of that call's output.
            flat = re.sub(r"\s+", " ", text)
            quote = re.sub(r"\s+", " ", e["quote"]).split(": ")[-1]
            assert quote[:60] in flat, (path.stem, e)


def test_the_rules_add_to_a_report_that_only_restates_the_alert() -> None:
    """The baseline (alert text and labels only) scores well below the rule path on the same scenarios."""
    baseline, ruled = [], []
    for path in scenarios.scenario_files():
        scenario = scenarios.load(path)
        alert = scenario["alert"]
        restated = " ".join([alert.get("title", ""), alert.get("description", ""), json.dumps(alert.get("labels"))])
        baseline.append(scenarios.score(restated, scenario) or 0.0)
        ruled.append(scenarios.score(run(scenario)[0]["analysis"], scenario) or 0.0)
    print(f"\nbaseline {sum(baseline) / len(baseline):.3f} rules {sum(ruled) / len(ruled):.3f}")
    assert sum(ruled) > sum(baseline) + 0.3 * len(ruled)


POD_YAML = """apiVersion: v1
kind: Pod
metadata:
  name: api-1
  namespace: shop
spec:
  containers:
  - image: example/api:1
    name: api
    resources:
      limits:
        memory: 128Mi
status:
  containerStatuses:
  - containerID: containerd://abc
    lastState:
      terminated:
        exitCode: 137
        reason: OOMKilled
    name: api
    restartCount: 7
    state:
      waiting:
        reason: CrashLoopBackOff
"""

EVENTS_YAML = """# The following events (YAML format) were found:
- InvolvedObject:
    Kind: Pod
    Name: api-1
    apiVersion: v1
  Message: 'Readiness probe failed: HTTP probe failed with statuscode: 503'
  Namespace: shop
  Reason: Unhealthy
  Timestamp: 2026-03-01 10:00:00 +0000 UTC
  Type: Warning
"""


def test_the_real_servers_yaml_pods_and_events_are_read() -> None:
    """kubernetes-mcp-server answers pods_get in YAML and events_list as a YAML list."""
    state = rules.InvestigationState(
        alert={"labels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "api-1"}},
        tools=[rules.ToolSpec.model_validate(t) for t in scenarios.all_tools()],
        calls=[
            rules.CallRecord(tool="pods_get", args={"name": "api-1", "namespace": "shop"}, output=POD_YAML),
            rules.CallRecord(tool="events_list", args={"namespace": "shop"}, output=EVENTS_YAML),
        ],
    )
    found = {f.rule: f for f in rules.findings(state)}
    assert "128Mi" in found["oom"].cause
    assert "crashloop" in found
    assert "Readiness probe failed" in found["probe"].evidence[0].quote


def test_the_runbooks_promql_is_queried_when_prometheus_is_offered() -> None:
    scenario = scenarios.load(scenarios.FIXTURES / "17_investigate_correct_date.json")
    scenario["available_tools"] = ["prometheus_execute_range_query", "resources_get"]
    result, state = run(scenario)
    queries = [c.args["query"] for c in state.calls if c.tool == "prometheus_execute_range_query"]
    assert queries == ["avg by(node,mode)(rate(node_cpu_seconds_total[5m]))"]
    assert "Metrics queried for:** 2025-08-25 05:25:00 UTC to 2025-08-25 05:55:00 UTC" in result["analysis"]


@pytest.mark.parametrize(
    "line",
    ['["responseTime", 1]', '{"responseTime": ' + "[" * 50_000, '"responseTime"'],
    ids=["a-list", "nested-past-the-stack", "a-string"],
)
def test_a_log_line_that_only_mentions_response_time_is_not_a_duration(line: str) -> None:
    # The JSON reading of a log line raised AttributeError on a list and RecursionError on deep nesting: the
    # rules' report (the fallback of every investigation) failed on one hostile line in a pod's log.
    state = rules.InvestigationState(
        alert={"title": "HighLatency", "labels": {"namespace": "shop"}},
        tools=[rules.ToolSpec.model_validate(t) for t in scenarios.all_tools()],
    )
    slow = '{"msg": "GET /api/orders", "responseTime": 2500}'
    output = "\n".join([line, slow, line])
    state.calls.append(rules.CallRecord(tool="pods_log", args={"name": "api-0"}, output=output, iteration=0))
    assert "up to 2.5 seconds per request" in rules.report(state)["root_cause"]
