"""The LLM path starts from what the rules see and records why it chose each iteration's calls (issue #26).

The plan prompt carries "## What the rules found" (the objects the alert names, then the signals read from the
outputs); each iteration of the record keeps the model's `reasoning`; the last iteration's partial analysis is
never empty; a plan the loop refuses (every call a repeat) leaves no empty iteration behind.
Everything real: an offline host, scenario 02's MCP server and the fake LLM over HTTP on 127.0.0.1, the record
read back from the local Cosmos.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from devhost.processes import HostProcess
from shared.app.wiring import build_deps, load_settings
from shared.investigations.store import InvestigationStore
from tests.support import fake_llm, scenarios
from tests.support.investigations import investigate
from tests.support.scenario_mcp_server import serve_scenario

SCENARIO = scenarios.load(scenarios.FIXTURES / "02_crashloop_backoff.json")
KEY = "sk-test-" + uuid.uuid4().hex
LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
POD = {"name": "logging-agent", "namespace": "default"}
FINAL_MARK = "writing the final report"
RULES_FOUND = "## What the rules found"


@pytest.fixture(scope="module")
def llm() -> Iterator[fake_llm.FakeLlm]:
    with fake_llm.fake_llm() as server:
        yield server


@pytest.fixture(scope="module")
def host(start_host, llm: fake_llm.FakeLlm) -> Iterator[HostProcess]:
    with serve_scenario(SCENARIO) as mcp:
        yield start_host(
            {
                **LOCAL,
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_LLM_ENDPOINT": llm.base_url,
                "FIREBREAK_LLM_MODEL": "fake-model",
                "OPENAI_API_KEY": KEY,
            }
        )


def scripted(llm: fake_llm.FakeLlm, *replies: fake_llm.Reply) -> None:
    """Exactly these answers, in order; one more request than scripted is a 500 (and the test sees the rules)."""
    with llm.lock:
        llm.replies.clear()
        llm.requests.clear()
        llm.default = None
    llm.script(*replies)


def plan(reasoning: str | None, calls: list[dict[str, Any]], analysis: str, done: bool = False) -> fake_llm.Reply:
    body: dict[str, Any] = {"calls": calls, "analysis_so_far": analysis, "done": done}
    if reasoning is not None:
        body["reasoning"] = reasoning
    return fake_llm.Reply(content=json.dumps(body))


FINAL = fake_llm.text(
    json.dumps(
        {
            "root_cause": 'The init container downloader runs "wge", which is not found: a typo of wget.',
            "evidence": [{"tool": "pods_get", "quote": 'exec: "wge": executable file not found in $PATH: unknown'}],
            "impact": "logging-agent never starts",
            "remediation": ["Change the init container's command to wget"],
            "prevention": ["Lint container commands in CI"],
            "confidence": "high",
            "analysis": "**Cause:** the init container runs `wge` (not found); the intended command is `wget`.",
        }
    )
)


def record_of(app_env: dict[str, str], workspace: str, inv: str) -> dict[str, Any]:
    """The investigation document as stored (the API's view leaves some of it out)."""

    async def load() -> dict[str, Any]:
        deps = build_deps(load_settings(app_env))
        try:
            return (await InvestigationStore(deps.cosmos, deps.blobs).get(workspace, inv)).to_doc()
        finally:
            await deps.aclose()

    doc: dict[str, Any] = asyncio.run(load())
    return doc


def run(host: HostProcess) -> tuple[dict[str, Any], str]:
    workspace = f"ws-llmwhy-{uuid.uuid4().hex[:8]}"
    body = investigate(host, SCENARIO["alert"], {"x-dev-workspace": workspace})
    assert body["status"] == "completed", body
    return body, workspace


def user_prompt(request: fake_llm.Recorded) -> str:
    return str(request.messages[-1]["content"])


def test_each_iteration_keeps_the_models_reasoning_and_the_prompt_has_what_the_rules_found(
    host: HostProcess, llm: fake_llm.FakeLlm, app_env: dict[str, str]
) -> None:
    scripted(
        llm,
        plan(
            "The pod crash loops in its init container: its description says why.",
            [{"tool": "pods_get", "arguments": POD, "reason": "the init container's last state"}],
            "logging-agent's init container downloader crash loops.",
        ),
        plan(
            "The StartError message names the command; events confirm it repeats.",
            [{"tool": "events_list", "arguments": {"namespace": "default"}, "reason": "how often it failed"}],
            'The command "wge" is not found.',
        ),
        plan("enough", [], "wge is a typo of wget.", done=True),
        FINAL,
    )
    body, workspace = run(host)
    assert body["path"] == "llm", body["path_reason"]
    plans = [r for r in llm.requests if FINAL_MARK not in json.dumps(r.body)]
    assert len(plans) == 3

    # The first plan, before any call: the objects the alert names.
    first = user_prompt(plans[0])
    assert RULES_FOUND in first
    found = first.split(RULES_FOUND, 1)[1].split("\n## ", 1)[0]
    assert "Objects the alert names: " in found
    for obj in ("Pod default/logging-agent", "Node grafana-cloud-control-plane", "Namespace default"):
        assert obj in found
    assert "Calls the rules would make next" in found
    # The second, after the pod's description: the signal the rules read from it, quoted.
    second = user_prompt(plans[1]).split(RULES_FOUND, 1)[1].split("\n## ", 1)[0]
    assert "Signals in the outputs" in second
    assert "wge" in second
    # The final report's prompt gets the same signals.
    (final,) = [r for r in llm.requests if FINAL_MARK in json.dumps(r.body)]
    assert "wge" in user_prompt(final).split(RULES_FOUND, 1)[1]

    record = record_of(app_env, workspace, body["investigation_id"])
    iterations = record["iterations"]
    assert [it["n"] for it in iterations] == [1, 2]
    assert [it["reasoning"] for it in iterations] == [
        "The pod crash loops in its init container: its description says why.",
        "The StartError message names the command; events confirm it repeats.",
    ]
    # Iteration n's partial analysis is the next plan's `analysis_so_far`; the last one's, the last plan's.
    assert [it["partial_analysis"] for it in iterations] == [
        'The command "wge" is not found.',
        "wge is a typo of wget.",
    ]
    assert [it["partial_analysis"] for it in body["iterations"]] == [it["partial_analysis"] for it in iterations]


def test_the_last_iterations_partial_analysis_is_never_empty(
    host: HostProcess, llm: fake_llm.FakeLlm, app_env: dict[str, str]
) -> None:
    # A model that never writes an analysis so far, nor a reasoning (its calls' reasons stand in for it).
    scripted(
        llm,
        plan(None, [{"tool": "pods_get", "arguments": POD, "reason": "the init container's state"}], ""),
        plan(None, [], "", done=True),
        FINAL,
    )
    body, workspace = run(host)
    assert body["path"] == "llm", body["path_reason"]
    record = record_of(app_env, workspace, body["investigation_id"])
    (only,) = record["iterations"]
    assert only["reasoning"] == "pods_get: the init container's state"
    assert only["partial_analysis"]  # the final report's cause stands for the analysis no plan wrote
    assert "wge" in only["partial_analysis"]
    assert body["iterations"][-1]["partial_analysis"] == only["partial_analysis"]


def test_a_plan_of_repeated_calls_leaves_no_empty_iteration(
    host: HostProcess, llm: fake_llm.FakeLlm, app_env: dict[str, str]
) -> None:
    same = [{"tool": "pods_get", "arguments": POD, "reason": "look"}]
    scripted(
        llm,
        plan("first look at the pod", same, "the init container fails"),
        plan("look again, the same way", same, "still the init container"),
        FINAL,
    )
    body, workspace = run(host)
    assert body["path"] == "llm", body["path_reason"]
    assert body["report"]["stopped_because"].startswith("repeated calls")
    assert len(body["iterations"]) == 1
    record = record_of(app_env, workspace, body["investigation_id"])
    (only,) = record["iterations"]
    assert (only["n"], len(only["calls"])) == (1, 1)
    assert only["reasoning"] == "first look at the pod"  # not the refused plan's
    assert only["partial_analysis"] == "still the init container"
    assert all(it["reasoning"] != "look again, the same way" for it in record["iterations"])


def test_the_investigation_view_shows_each_iterations_reasoning(host: HostProcess, llm: fake_llm.FakeLlm) -> None:
    """The spec's iteration record has `reasoning` beside `partial_analysis`; the record keeps it, and a caller
    (GET /api/investigations/{id}, get_alert_investigation) reads the investigation through its view."""
    scripted(
        llm,
        plan("the init container is the one failing", [{"tool": "pods_get", "arguments": POD, "reason": "look"}], "a"),
        plan("enough", [], "b", done=True),
        FINAL,
    )
    body, _ = run(host)
    assert body["iterations"][0].get("reasoning") == "the init container is the one failing", body["iterations"][0]
