"""The LLM path hands over to the rules: a model that fails mid-run, and a plan that is invalid twice."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from devhost.processes import HostProcess
from tests.support import fake_llm, scenarios
from tests.support.investigations import investigate
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import serve_scenario

POD = "payment-processing-worker-747ccfb9db-pd6wz"
KEY = "sk-test-" + uuid.uuid4().hex
LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))


@pytest.fixture(scope="module")
def llm() -> Iterator[fake_llm.FakeLlm]:
    with fake_llm.fake_llm() as server:
        yield server


@pytest.fixture(scope="module")
def setup(start_host, scenario: dict[str, Any], llm: fake_llm.FakeLlm) -> Iterator[tuple[HostProcess, dict[str, Any]]]:
    """One host for the module, its model the fake LLM (each test scripts it), the scenario's MCP and runbook."""
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as rb:
        host = start_host(
            {
                **LOCAL,
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_LLM_ENDPOINT": llm.base_url,
                "FIREBREAK_LLM_MODEL": "fake-model",
                "OPENAI_API_KEY": KEY,
            }
        )
        alert = dict(scenario["alert"])
        alert["annotations"] = {**alert["annotations"], "runbook_url": rb.runbook_url}
        yield host, alert


def scripted(llm: fake_llm.FakeLlm, *replies: fake_llm.Reply, default: fake_llm.Reply | None = None) -> None:
    with llm.lock:
        llm.replies.clear()
        llm.requests.clear()
        llm.default = default
    llm.script(*replies)


def test_a_model_that_fails_mid_run_hands_over_to_the_rules(setup, llm, scenario: dict[str, Any]) -> None:
    first = fake_llm.plan(
        [{"tool": "events_list", "arguments": {"namespace": "default"}, "reason": "what happened lately"}],
        analysis="looking at events first",
    )
    scripted(llm, first, default=fake_llm.http_error(503, "overloaded"))
    host, alert = setup
    body = investigate(host, alert, {"x-dev-workspace": f"ws-llmfb-{uuid.uuid4().hex[:8]}"})
    assert body["status"] == "completed", body
    assert body["path"] == "llm->rule"
    assert "iteration 2" in body["path_reason"]
    assert "503" in body["path_reason"]
    calls = [c for it in body["iterations"] for c in it["calls"]]
    assert calls[0]["tool"] == "events_list"
    assert calls[0]["reason"] == "what happened lately"
    assert len(calls) > 1  # the rules went on from what the model had gathered
    report = body["report"]
    assert report["path"] == "llm->rule"
    assert "Rule-based report" in report["analysis"]
    assert len(report["analysis"]) <= 2000
    assert scenarios.score(report["analysis"], scenario) == pytest.approx(1.0)
    # The model's first answer was paid for and recorded; no more model calls after the failure's retry.
    assert body["token_usage"]["total"] == 120
    assert len(llm.requests) == 3  # plan 1, then plan 2 and the SDK's one retry
    assert KEY not in host.log()


def test_a_plan_invalid_twice_is_dropped_and_the_rules_choose_that_iteration(setup, llm) -> None:
    bad = fake_llm.plan([{"tool": "no_such_tool", "arguments": {}, "reason": "?"}])
    report = json.dumps(
        {
            "root_cause": "The container exits because DEPLOY_ENV is undefined.",
            "evidence": [{"tool": "pods_log", "quote": "Environment variable DEPLOY_ENV is undefined"}],
            "impact": "payments",
            "remediation": ["Set DEPLOY_ENV in the deployment"],
            "prevention": ["Validate env in CI"],
            "confidence": "high",
            "analysis": "**Cause:** DEPLOY_ENV is undefined, the container exits (CrashLoopBackOff).",
        }
    )
    scripted(llm, bad, bad, fake_llm.plan([], done=True, analysis="enough"), fake_llm.text(report))
    host, alert = setup
    body = investigate(host, alert, {"x-dev-workspace": f"ws-llmfb-{uuid.uuid4().hex[:8]}"})
    assert body["status"] == "completed", body
    assert body["path"] == "llm"
    first = body["iterations"][0]["calls"]
    assert first
    assert all(c["tool"] != "no_such_tool" for c in first)
    rep = body["report"]
    assert rep["root_cause"].startswith("The container exits because DEPLOY_ENV")
    assert rep["evidence"][0]["verified"] is True  # the quote is in the pods_log output the rules fetched
    assert rep["stopped_because"] == "the model said it had what it needed"
    assert [r.body["messages"][0]["role"] for r in llm.requests] == ["system"] * 4
