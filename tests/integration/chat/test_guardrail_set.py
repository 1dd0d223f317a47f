"""The guardrail set (tests/fixtures/chat/guardrail_set.json: 112 on-topic, off-topic, injection and mixed
messages, each labelled refuse or allow; 84 `tuned`, 28 `holdout` written afterwards) through the
assistant, on the rule path and on the LLM path, with figures per split.

"Declined" is the spec's refusal, or (rule path, no model) the help text without any tool call. On the
LLM path the model is the OpenAI-compatible test server answering as a model that follows its system
prompt would; what this measures there is our pipeline: what the guardrail decides before any model, and
that the model's refusals and answers pass through. Figures are printed (pytest -s) for the README.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from shared.chat.assistant import REFUSAL, AssistantReply, respond
from shared.chat.assistant.guardrail import classify
from shared.chat.assistant.rules import HELP
from shared.core.llm import LlmClient, LlmConfig
from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from tests.support.fake_llm import Recorded, Reply, fake_llm, text, tool_calls

SET = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "guardrail_set.json"


def messages() -> list[dict[str, str]]:
    data: list[dict[str, str]] = json.loads(SET.read_text())["messages"]
    return data


def declined(reply: AssistantReply) -> bool:
    return reply.mode == "refusal" or reply.text == REFUSAL or (not reply.tool_calls and reply.text.startswith(HELP))


def by_split(results: list[tuple[dict[str, str], bool]]) -> dict[str, dict[str, Any]]:
    return {
        split: scores([(m, d) for m, d in results if split == "all" or m.get("split") == split])
        for split in ("tuned", "holdout", "all")
    }


def scores(results: list[tuple[dict[str, str], bool]]) -> dict[str, Any]:
    tp = sum(1 for m, d in results if d and m["expected"] == "refuse")
    fp = sum(1 for m, d in results if d and m["expected"] != "refuse")
    fn = sum(1 for m, d in results if not d and m["expected"] == "refuse")
    return {
        "messages": len(results),
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
        "wrong": [(m["category"], m["expected"], m["message"]) for m, d in results if d != (m["expected"] == "refuse")],
    }


def ctx(deps: Deps) -> ToolContext:
    principal = Principal(workspace_id=f"ws-guard-{uuid.uuid4().hex[:8]}", user_id="alice", source="dev")
    return ToolContext(principal, deps, "corr-guard", transport="rest")


def test_the_set_is_big_and_covers_every_kind() -> None:
    found = messages()
    assert len(found) >= 60
    assert {m["category"] for m in found} == {"on_topic", "off_topic", "injection", "mixed"}
    assert {m["split"] for m in found} == {"tuned", "holdout"}
    assert {m["expected"] for m in found} == {"refuse", "allow"}


async def test_rule_path_refusal_precision_and_recall(deps: Deps) -> None:
    me = ctx(deps)
    results = [(m, declined(await respond(me, [], m["message"], llm=None))) for m in messages()]
    got = by_split(results)
    print("\nrule path:", json.dumps(got))
    for split in got.values():
        assert split["precision"] >= 0.9, got
        assert split["recall"] >= 0.9, got


def _model(labels: dict[str, str]) -> Callable[[Recorded], Reply]:
    """A model that follows its system prompt: the refusal for what the set says to refuse, else a tool call."""

    def answer(request: Recorded) -> Reply:
        sent = request.body["messages"]
        user = [m for m in sent if m["role"] == "user"][-1]["content"]
        if labels.get(user) == "refuse":
            return text(REFUSAL)
        if request.body.get("tools") and not any(m["role"] == "tool" for m in sent):
            return tool_calls(("get_all_tasks", {}))
        return text("Here are your tasks.")

    return answer


async def test_llm_path_refusal_precision_and_recall(deps: Deps) -> None:
    labels = {m["message"]: m["expected"] for m in messages()}
    with fake_llm(responder=_model(labels)) as llm:
        config = LlmConfig(
            kind="compatible", endpoint=llm.base_url, model="gpt-test", api_key=SecretStr("k"), max_retries=0
        )
        client = LlmClient.create(config)
        try:
            me = ctx(deps)
            results: list[tuple[dict[str, str], bool]] = []
            before_model = 0
            for m in messages():
                asked = len(llm.requests)
                reply = await respond(me, [], m["message"], llm=client)
                before_model += len(llm.requests) == asked
                results.append((m, declined(reply)))
        finally:
            await client.aclose()
    got: dict[str, Any] = by_split(results)
    got["decided_before_the_model"] = before_model
    print("\nllm path:", json.dumps(got))
    for split in ("tuned", "holdout", "all"):
        assert got[split]["precision"] >= 0.9, got
        assert got[split]["recall"] >= 0.9, got
    # What the guardrail is sure of costs no model call; everything else reached the model.
    assert before_model == sum(1 for m in messages() if classify(m["message"]).refuse)
    assert before_model < len(results)
