"""Every scenario through the whole orchestration on the offline host (devhost/scenarios.py's runner).

One host per path on the session's stack: the real app (`python -m devhost`), the local Durable engine, the
scenario MCP servers (kubernetes tools and the prometheus_*/tempo_* extras) and the runbook server on
127.0.0.1, one POST /api/investigations per scenario, GET until it ends. Within a path the scenarios run one
after another; the two paths (two hosts, two sets of servers) run side by side, which halves the wall time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from devhost.scenario_servers import answer, extra_tool_names, served_scenario, split_scenario, tools_for
from devhost.scenarios import (
    ScenarioResult,
    ScenarioRunner,
    load_scenario,
    mean_score,
    offline_runner,
    table,
)
from devhost.scenarios import (
    run_files as run_all,
)
from shared.investigations import rules
from tests.support import scenarios
from tests.support.fake_llm import FakeLlm, Reply, fake_llm, plan

FILES = scenarios.scenario_files() + scenarios.scenario_files(scenarios.HELDOUT)


def loaded() -> list[tuple[Any, dict[str, Any]]]:
    assert len(FILES) >= 21, "the 17 scenarios and the held-out set"
    return [(f, load_scenario(f)) for f in FILES]


def _failed(results: list[ScenarioResult]) -> list[str]:
    return [f"{r.id}: {r.status} {r.error}" for r in results if r.status != "completed"]


def in_process_calls(scenario: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the rules make in-process (tests/unit/.../test_rules_scenarios.py's loop, no limits) with the
    tools the host is offered: the kubernetes server's and the extras server's."""
    k8s, extras = split_scenario(scenario), served_scenario(scenario, "extras")
    state = rules.InvestigationState(
        alert=scenario["alert"],
        runbook=scenario.get("runbook_markdown"),
        tools=[rules.ToolSpec.model_validate(t) for t in tools_for(k8s) + tools_for(extras)],
    )
    calls, iteration = rules.first_calls(state), 0
    while calls:
        iteration += 1
        for call in calls:
            served = extras if call.tool in extra_tool_names(scenario) else k8s
            found = answer(served, call.tool, call.args)
            state.calls.append(
                rules.CallRecord(
                    tool=call.tool, args=call.args, output=found.text, is_error=found.is_error, iteration=iteration
                )
            )
        calls = rules.next_calls(state)
    return [(c.tool, c.args) for c in state.calls]


def test_every_scenario_on_the_rule_path(both_paths: Paths) -> None:
    files = loaded()
    results = both_paths.rule.result()
    print("\n" + table(results))
    assert not _failed(results), _failed(results)
    assert {r.path for r in results} == {"rule"}
    assert all(len(r.analysis) <= 2000 for r in results), [(r.id, len(r.analysis)) for r in results]
    mean = mean_score(results)
    assert mean is not None
    assert mean >= 0.95
    # The orchestration makes the calls the in-process rule loop makes (the same rules, read back from the
    # record between activities): a difference is state lost or changed on the way through the engine.
    for (_, scenario), result in zip(files, results, strict=True):
        wanted = sorted(json.dumps(c, sort_keys=True) for c in in_process_calls(scenario))
        made = sorted(json.dumps([c["tool"], c["args"]], sort_keys=True) for c in result.tool_calls)
        assert made == wanted, scenario["id"]


# ---- the LLM path, scripted --------------------------------------------------------------------------------

PER_ITERATION, MAX_CALLS = 6, 15  # the default limits (FIREBREAK_INVESTIGATIONS_*)
API_VERSIONS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1"}
API_VERSIONS |= {"Job": "batch/v1", "CronJob": "batch/v1"}


def scripted_calls(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls a script plans: each tool_responses entry the servers offer, its `match` as the arguments (with
    the apiVersion a resources_* call needs when the entry leaves it out), when those are valid for the tool's
    schema (the app rejects others), without repeats, at most MAX_CALLS."""
    offered = {t["name"]: t for t in tools_for(split_scenario(scenario))}
    offered.update({n: {"name": n, "inputSchema": {"type": "object"}} for n in extra_tool_names(scenario)})
    calls: list[dict[str, Any]] = []
    for entry in scenario.get("tool_responses", []):
        tool, args = entry["tool"], dict(entry.get("match", {}))
        if tool.startswith("resources_") and "kind" in args and "apiVersion" not in args:
            args["apiVersion"] = API_VERSIONS.get(args["kind"], "v1")  # as a model fills a required field
        if tool not in offered or any(c["tool"] == tool and c["arguments"] == args for c in calls):
            continue
        schema = offered[tool]["inputSchema"]
        if list(jsonschema.validators.validator_for(schema)(schema).iter_errors(args)):
            continue
        calls.append({"tool": tool, "arguments": args, "reason": "scripted: the scenario has data for it"})
    return calls[:MAX_CALLS]


def script(scenario: dict[str, Any]) -> tuple[list[Reply], list[dict[str, Any]]]:
    """Plans of up to PER_ITERATION calls (the last says done) and a final report built from the outputs."""
    calls = scripted_calls(scenario)
    chunks = [calls[i : i + PER_ITERATION] for i in range(0, len(calls), PER_ITERATION)] or [[]]
    replies = [plan(c, done=i == len(chunks) - 1, analysis=f"step {i + 1}") for i, c in enumerate(chunks)]
    outputs = [e["output"] for e in scenario.get("tool_responses", []) if not e.get("is_error") and e["output"]]
    quote = next((line.strip() for o in outputs for line in o.splitlines() if line.strip()), "")
    called = ", ".join(sorted({c["tool"] for c in calls})) or "no tool"
    report = {
        "root_cause": "Scripted report: the cause is in the tool outputs quoted below.",
        "evidence": [{"quote": quote[:200]}] if quote else [],
        "remediation": ["Read the evidence."],
        "confidence": "low",
        "analysis": f"**{scenario['alert'].get('title', 'alert')}**: scripted run; called {called}.\n\n"
        f"First line of evidence: `{quote[:300]}`",
    }
    replies.append(Reply(content=json.dumps(report)))
    return replies, calls


@dataclass
class LlmRun:
    """One scenario on the scripted LLM path: what was scripted, what the model server saw, the result."""

    scenario: dict[str, Any]
    replies: int
    calls: list[dict[str, Any]]
    asked: int
    left: int
    result: ScenarioResult
    analysis: str  # the scripted report's


def run_llm(files: list[tuple[Any, dict[str, Any]]], runner: ScenarioRunner, llm: FakeLlm) -> list[LlmRun]:
    runs = []
    for _, scenario in files:
        replies, calls = script(scenario)
        before = len(llm.requests)
        llm.script(*replies)
        result = runner.run(scenario)
        scripted = json.loads(replies[-1].content or "{}")["analysis"]
        runs.append(
            LlmRun(scenario, len(replies), calls, len(llm.requests) - before, len(llm.replies), result, scripted)
        )
        llm.replies.clear()
    return runs


@dataclass
class Paths:
    rule: Future[list[ScenarioResult]]
    llm: Future[list[LlmRun]]


@pytest.fixture(scope="module")
def both_paths(app_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Paths]:
    """Both paths started at once on their own hosts; each test waits for its own."""
    files = loaded()
    with ExitStack() as stack:
        llm = stack.enter_context(fake_llm())
        environ = {
            "FIREBREAK_LLM_ENDPOINT": llm.base_url,
            "FIREBREAK_LLM_MODEL": "scripted-model",
            "FIREBREAK_LLM_API_KEY": "not-a-real-key",
        }
        work = tmp_path_factory.mktemp("scenario-hosts")
        rule_runner, _ = stack.enter_context(offline_runner({}, work, app_settings=app_env, timeout_s=120))
        llm_runner, _ = stack.enter_context(offline_runner(environ, work, app_settings=app_env, timeout_s=120))
        pool = stack.enter_context(ThreadPoolExecutor(2))
        yield Paths(pool.submit(run_all, files, rule_runner, True), pool.submit(run_llm, files, llm_runner, llm))


def test_every_scenario_on_the_llm_path(both_paths: Paths) -> None:
    runs = both_paths.llm.result()
    assert len(runs) == len(FILES)
    for run in runs:
        result, name = run.result, run.scenario["id"]
        assert result.status == "completed", (name, result.error)
        assert result.path == "llm", (name, result.path)
        assert (run.asked, run.left) == (run.replies, 0), name  # every scripted answer used: no repair, no fallback
        assert result.token_usage["total"] == 120 * run.replies, name
        wanted = sorted(json.dumps([c["tool"], c["arguments"]], sort_keys=True) for c in run.calls)
        made = sorted(json.dumps([c["tool"], c["args"]], sort_keys=True) for c in result.tool_calls)
        assert made == wanted, name
        assert result.iterations == (len(run.calls) + PER_ITERATION - 1) // PER_ITERATION, name
        assert result.analysis.startswith(run.analysis), name  # the model's report, not the rules'
    print("\n" + table([r.result for r in runs]))
    assert all(len(r.result.analysis) <= 2000 for r in runs)


def test_an_investigation_past_the_timeout_is_cancelled_and_the_next_scenario_runs(
    app_env: dict[str, str], tmp_path: Any
) -> None:
    """The runner cancels what outlives its timeout (its calls must not reach the next scenario's servers)."""
    slow, quick = (load_scenario(scenarios.FIXTURES / f) for f in ("06_job_failure.json", "08_memory_pressure.json"))
    with offline_runner({}, tmp_path, app_settings=app_env, timeout_s=0) as (runner, _):
        first = runner.run(slow)
        runner.timeout_s = 120
        second = runner.run(quick)
    print(first.status, first.error, first.iterations, len(first.tool_calls))
    assert first.status == "cancelled"
    assert first.score == 0.0  # a scenario with keywords that did not complete scores nothing
    assert second.status == "completed"
    assert second.score == 1.0
