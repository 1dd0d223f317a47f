"""The LLM path against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/support/fake_llm.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError

from shared.investigations.llm import (
    ANALYSIS_MAX_CHARS,
    FinalState,
    HistoryEntry,
    LlmClient,
    LlmConfig,
    LlmUnavailable,
    PlanBudget,
    final_analysis,
    plan_calls,
    total_usage,
)
from tests.support import scenarios
from tests.support.fake_llm import FakeLlm, Reply, fake_llm, http_error, plan, slow, text, tool_calls

KEY = "sk-test-5ecret-do-not-log"
SCENARIO = scenarios.load(scenarios.FIXTURES / "01_oom_kill.json")
ALERT = SCENARIO["alert"]
TOOLS = scenarios.all_tools()
POD = {"name": "analytics-exporter-fast-76897854c-cw5wh", "namespace": "default"}


def config(llm: FakeLlm, **kw: Any) -> LlmConfig:
    values: dict[str, Any] = {
        "kind": "compatible",
        "endpoint": llm.base_url,
        "model": "gpt-test",
        "api_key": KEY,
        "max_retries": 0,
        "timeout_seconds": 10,
        **kw,
    }
    return LlmConfig.model_validate(values)


@pytest.fixture
def llm() -> Iterator[FakeLlm]:
    with fake_llm() as server:
        yield server


@pytest.fixture
async def client(llm: FakeLlm) -> AsyncIterator[LlmClient]:
    c = LlmClient.create(config(llm))
    yield c
    await c.aclose()


async def plan_once(client: LlmClient, history: list[HistoryEntry] | None = None, **budget: int):
    return await plan_calls(client, ALERT, "Check the pod.", TOOLS, history or [], PlanBudget(**budget))


async def test_a_valid_plan_is_returned_with_its_usage_and_the_key_only_in_a_header(llm, client) -> None:
    llm.script(
        plan(
            [{"tool": "pods_get", "arguments": POD, "reason": "see the last state"}],
            analysis="crash looping",
            usage=(321, 45),
        )
    )
    result = await plan_once(client)
    assert [(c.tool, c.arguments, c.reason) for c in result.calls] == [("pods_get", POD, "see the last state")]
    assert (result.done, result.repaired, result.dropped, result.analysis_so_far) == (
        False,
        False,
        False,
        "crash looping",
    )
    assert [(u.purpose, u.prompt_tokens, u.completion_tokens, u.total_tokens) for u in result.usage] == [
        ("plan", 321, 45, 366)
    ]
    (request,) = llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(request.body)
    assert request.body["model"] == "gpt-test"
    assert request.body["response_format"] == {"type": "json_object"}
    prompt = request.messages[1]["content"]
    assert "KubePodCrashLooping" in prompt
    assert "Check the pod." in prompt
    assert '"name":"pods_log"' in prompt


async def test_an_invalid_plan_is_repaired_once(llm, client) -> None:
    llm.script(
        plan([{"tool": "pods_log", "arguments": {"namespace": "default"}, "reason": "logs"}]),  # `name` is required
        plan([{"tool": "pods_log", "arguments": {**POD, "previous": True}, "reason": "previous logs"}]),
    )
    result = await plan_once(client)
    assert result.repaired
    assert not result.dropped
    assert [c.arguments for c in result.calls] == [{**POD, "previous": True}]
    assert any("'name' is a required property" in e for e in result.errors)
    assert [u.purpose for u in result.usage] == ["plan", "plan_repair"]
    repair = llm.requests[1].messages
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert "'name' is a required property" in repair[-1]["content"]


async def test_a_plan_invalid_twice_is_dropped(llm, client) -> None:
    llm.script(text("I think we should look at the pod"), plan([{"tool": "pods_get", "arguments": {"name": 7}}]))
    result = await plan_once(client)
    assert result.dropped
    assert not result.calls
    assert not result.done
    assert result.errors[0] == "the answer is not a JSON object"
    assert any("calls[0].arguments.name: 7 is not of type 'string'" in e for e in result.errors)
    assert len(llm.requests) == 2  # one repair, no more


async def test_an_unknown_tool_is_rejected(llm, client) -> None:
    bad = plan([{"tool": "kubectl_exec", "arguments": {"command": "rm -rf /"}, "reason": "fix it"}])
    llm.script(bad, bad)
    result = await plan_once(client)
    assert result.dropped
    assert not result.calls
    assert result.errors[0].startswith("calls[0]: unknown tool 'kubectl_exec'; available tools: events_list")


async def test_a_tool_calls_style_answer_is_read_as_a_plan(llm, client) -> None:
    llm.script(tool_calls(("events_list", {"namespace": "default"}), ("pods_get", POD)))
    result = await plan_once(client)
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("events_list", {"namespace": "default"}),
        ("pods_get", POD),
    ]


async def test_extra_and_duplicate_calls_are_cut_to_the_budget(llm, client) -> None:
    call = {"tool": "events_list", "arguments": {"namespace": "default"}}
    others = [{"tool": "pods_get", "arguments": {"name": f"p{i}"}} for i in range(4)]
    llm.script(plan([call, call, *others]))
    result = await plan_once(client, calls_left=3)
    assert [c.key() for c in result.calls] == [
        'events_list {"namespace":"default"}',
        'pods_get {"name":"p0"}',
        'pods_get {"name":"p1"}',
    ]
    assert result.notes == ["2 calls cut: 3 allowed this iteration"]


async def test_a_planner_that_never_says_done_is_cut_by_the_callers_limits(llm, client) -> None:
    llm.default = plan(
        [{"tool": "events_list", "arguments": {"namespace": "default"}}, {"tool": "pods_get", "arguments": POD}]
    )
    history: list[HistoryEntry] = []
    seen: set[str] = set()
    repeats = 0
    calls_left, iteration = 15, 0
    while iteration < 5:  # the orchestrator's loop, reduced to its limits
        iteration += 1
        result = await plan_once(client, history, iteration=iteration, calls_left=calls_left)
        assert not result.done
        repeats += sum(c.key() in seen for c in result.calls)
        seen.update(c.key() for c in result.calls)
        history += [
            HistoryEntry(iteration=iteration, tool=c.tool, arguments=c.arguments, output="x") for c in result.calls
        ]
        calls_left -= len(result.calls)
    assert (iteration, len(history), len(llm.requests)) == (5, 10, 5)
    assert repeats == 8  # PlannedCall.key() lets the caller see the loop from iteration 2 on
    exhausted = await plan_once(client, history, calls_left=0)
    assert exhausted.done
    assert exhausted.notes == ["no tool calls left in the budget"]
    assert len(llm.requests) == 5  # the model is not asked when nothing may be called


async def test_no_tools_means_done_without_asking(llm, client) -> None:
    result = await plan_calls(client, ALERT, None, [], [], PlanBudget())
    assert result.done
    assert result.notes == ["no tools are available"]
    assert not llm.requests


async def test_http_500_is_llm_unavailable_after_the_configured_retries(llm, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    llm.script(http_error(500), http_error(500, f"upstream echoed {KEY}"))
    c = LlmClient.create(config(llm, max_retries=1))
    try:
        with pytest.raises(LlmUnavailable) as caught:
            await plan_once(c)
    finally:
        await c.aclose()
    assert (caught.value.reason, caught.value.status, caught.value.code) == ("http_status", 500, "UPSTREAM_ERROR")
    assert len(llm.requests) == 2
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    for text_ in (str(caught.value), repr(caught.value.details), caplog.text):
        assert KEY not in text_


async def test_429_is_retried_by_the_sdk(llm) -> None:
    llm.script(http_error(429, "slow down"), plan([], done=True))
    c = LlmClient.create(config(llm, max_retries=1))
    try:
        result = await plan_once(c)
    finally:
        await c.aclose()
    assert result.done
    assert len(llm.requests) == 2


async def test_a_slow_answer_is_a_timeout(llm) -> None:
    llm.script(slow(30))
    c = LlmClient.create(config(llm, timeout_seconds=0.3))
    try:
        with pytest.raises(LlmUnavailable) as caught:
            await plan_once(c)
    finally:
        await c.aclose()
    assert caught.value.reason == "timeout"


async def test_the_deadline_bounds_a_call_whatever_the_http_timeout(llm) -> None:
    llm.script(slow(30))
    c = LlmClient.create(config(llm, timeout_seconds=60, deadline_seconds=0.3))
    try:
        with pytest.raises(LlmUnavailable) as caught:
            await plan_once(c)
    finally:
        await c.aclose()
    assert caught.value.reason == "timeout"


async def test_a_failing_repair_keeps_the_usage_of_the_first_answer(llm, client) -> None:
    llm.script(text("not json", usage=(50, 5)), http_error(500))
    with pytest.raises(LlmUnavailable) as caught:
        await plan_once(client)
    assert total_usage(caught.value.usage) == {
        "calls": 1,
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "total_tokens": 55,
    }


async def test_nothing_listening_is_a_connection_failure() -> None:
    with fake_llm() as gone:
        cfg = config(gone)
    c = LlmClient.create(cfg)
    try:
        with pytest.raises(LlmUnavailable) as caught:
            await plan_once(c)
    finally:
        await c.aclose()
    assert caught.value.reason == "connection"


def big_history(n: int = 15, size: int = 100_000) -> list[HistoryEntry]:
    return [
        HistoryEntry(
            iteration=i // 3 + 1,
            tool="pods_log",
            arguments={**POD, "tail": i},
            reason="logs",
            output=f"BEGIN-{i}\n" + "x" * (size - 20) + f"\nEND-{i}",
        )
        for i in range(n)
    ]


async def test_prompts_stay_bounded_with_15_outputs_of_100_kb(llm, client) -> None:
    llm.script(plan([], done=True), text('{"root_cause": "r", "analysis": "a"}'))
    await plan_once(client, big_history(), calls_left=3)
    await final_analysis(client, FinalState(alert=ALERT, runbook="r" * 50_000, history=big_history()))
    limit = client.config.limits.max_prompt_chars
    for request in llm.requests:
        prompt = "".join(m["content"] for m in request.messages)
        assert request.prompt_chars <= limit
        # Every output keeps its head and its tail; the middle goes.
        assert all(f"BEGIN-{i}" in prompt and f"END-{i}" in prompt for i in range(15))
        assert prompt.count("chars omitted") >= 15
    sizes = [r.prompt_chars for r in llm.requests]
    print(f"prompt chars with 15 x 100 KB outputs: plan {sizes[0]}, final {sizes[1]} (limit {limit})")


async def test_azure_path_with_a_key(llm) -> None:
    llm.script(plan([], done=True))
    cfg = LlmConfig.model_validate(
        {"kind": "azure", "endpoint": llm.url, "model": "gpt-4o-dep", "api_key": KEY, "api_version": "2024-10-21"}
    )
    c = LlmClient.create(cfg)
    try:
        assert (await plan_once(c)).done
    finally:
        await c.aclose()
    (request,) = llm.requests
    assert request.path == "/openai/deployments/gpt-4o-dep/chat/completions"
    assert request.query["api-version"] == ["2024-10-21"]
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers


class StaticCredential:
    """An azure-identity style async credential (the managed identity is Azure's; this stands in for it)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.scopes: list[tuple[str, ...]] = []
        self.closed = False

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        if self.fail:
            raise ClientAuthenticationError("no managed identity endpoint")
        return AccessToken("entra-token-123", int(time.time()) + 3600)

    async def close(self) -> None:
        self.closed = True

    async def __aenter__(self) -> StaticCredential:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def test_azure_path_with_managed_identity(llm) -> None:
    llm.script(plan([], done=True))
    credential = StaticCredential()
    cfg = LlmConfig(kind="azure", endpoint=llm.url, model="dep", max_retries=0)
    c = LlmClient.create(cfg, credential=credential)
    await plan_once(c)
    await c.aclose()
    (request,) = llm.requests
    assert request.headers["authorization"] == "Bearer entra-token-123"
    assert "api-key" not in request.headers
    assert credential.scopes == [("https://cognitiveservices.azure.com/.default",)]
    assert credential.closed


async def test_a_credential_that_cannot_get_a_token_is_llm_unavailable(llm) -> None:
    cfg = LlmConfig(kind="azure", endpoint=llm.url, model="dep", max_retries=0)
    c = LlmClient.create(cfg, credential=StaticCredential(fail=True))
    try:
        with pytest.raises(LlmUnavailable) as caught:
            await plan_once(c)
    finally:
        await c.aclose()
    assert caught.value.reason == "credential"
    assert not llm.requests


def final_state() -> FinalState:
    out = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
    return FinalState(
        alert=ALERT,
        history=[HistoryEntry(iteration=1, tool="pods_get", arguments=POD, output=out)],
        analyses=["the container was OOMKilled"],
    )


REPORT = {
    "root_cause": "The memory-eater container exceeds its 100Mi limit and is OOMKilled.",
    "evidence": [
        {"tool": "pods_get", "quote": "Reason:       OOMKilled", "why": "killed for memory"},
        {"tool": "pods_get", "quote": "memory usage 512Mi", "why": "invented"},
    ],
    "impact": "analytics exporter down",
    "remediation": "Raise the memory limit",
    "prevention": ["alert on memory near limit"],
    "confidence": 0.9,
    "analysis": "## Cause\nOOMKilled.\n" + "detail line\n" * 400,
}


async def test_final_analysis_validates_verifies_quotes_and_bounds_the_analysis(llm, client) -> None:
    import json

    llm.script(text(json.dumps(REPORT), usage=(900, 300)))
    result = await final_analysis(client, final_state())
    assert result["ok"]
    assert not result["fallback"]
    assert not result["repaired"]
    report = result["report"]
    assert [e["verified"] for e in report["evidence"]] == [True, False]
    assert report["remediation"] == ["Raise the memory limit"]
    assert report["confidence"] == "high"
    assert len(report["analysis"]) <= ANALYSIS_MAX_CHARS
    assert report["analysis"].startswith("## Cause\nOOMKilled.")
    assert result["usage"] == [
        {
            "purpose": "final",
            "model": "gpt-test",
            "prompt_tokens": 900,
            "completion_tokens": 300,
            "total_tokens": 1200,
            "prompt_chars": llm.requests[0].prompt_chars,
        }
    ]


async def test_final_analysis_repairs_once_then_signals_the_fallback(llm, client) -> None:
    import json

    llm.script(text(json.dumps({"evidence": []})), text(json.dumps(REPORT)))
    repaired = await final_analysis(client, final_state())
    assert repaired["ok"]
    assert repaired["repaired"]
    assert "root_cause: Field required" in repaired["errors"]

    llm.script(text("The pod ran out of memory."), text('{"root_cause": ""}'))
    failed = await final_analysis(client, final_state())
    assert failed["fallback"]
    assert not failed["ok"]
    assert failed["report"] is None
    assert len(failed["usage"]) == 2
    assert failed["errors"][0] == "the answer is not a JSON object"


async def test_final_analysis_failure_is_llm_unavailable(llm, client) -> None:
    llm.script(http_error(503))
    with pytest.raises(LlmUnavailable):
        await final_analysis(client, final_state())


def test_replies_are_consumed_in_order() -> None:
    with fake_llm(Reply(content="a"), Reply(content="b")) as server:
        assert [server.next_reply().content for _ in range(2)] == ["a", "b"]  # type: ignore[union-attr]
        assert server.next_reply() is None
