"""The LLM path's pure parts: prompt bounds, trimming, parsing and validation, config from settings."""

from __future__ import annotations

import pytest

from shared.core.errors import UpstreamError
from shared.core.settings import Settings
from shared.investigations.llm import (
    CallUsage,
    Completion,
    HistoryEntry,
    LlmConfig,
    LlmUnavailable,
    PlanBudget,
    PromptLimits,
    ToolSpec,
    build_plan_messages,
    infer_kind,
    parse_json_object,
    parse_plan,
    render_history,
    trim_middle,
    without_regexes,
)
from tests.support import scenarios

TOOLS = [ToolSpec.model_validate(t) for t in scenarios.all_tools()]


def answer(content: str) -> Completion:
    return Completion(content=content, usage=CallUsage(purpose="plan", model="m"))


def test_trim_middle_keeps_head_and_tail_within_the_limit() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    cut = trim_middle(text, 500)
    assert len(cut) <= 500
    assert cut.startswith("HEAD")
    assert cut.endswith("TAIL")
    assert "chars omitted" in cut
    assert trim_middle("short", 500) == "short"


def test_the_plan_prompt_is_bounded_whatever_the_inputs() -> None:
    limits = PromptLimits()
    many_tools = [
        ToolSpec(name=f"tool_{i}", description="d" * 5_000, input_schema={"type": "object", "description": "s" * 9_000})
        for i in range(300)
    ]
    history = [HistoryEntry(iteration=i, tool="pods_log", output=f"OUT-{i}" + "y" * 50_000) for i in range(200)]
    alert = {"title": "t" * 100_000, "labels": {f"k{i}": "v" * 1_000 for i in range(100)}}
    messages = build_plan_messages(alert, "r" * 1_000_000, many_tools, history, PlanBudget(), limits)
    total = sum(len(m["content"]) for m in messages)
    assert total <= limits.max_prompt_chars
    assert "schemas left out for" in messages[1]["content"]


def test_oldest_outputs_are_named_only_when_the_share_gets_too_small() -> None:
    limits = PromptLimits()
    history = [HistoryEntry(iteration=i, tool=f"t{i}", output=f"OUT-{i}" + "y" * 10_000) for i in range(60)]
    text = render_history(history, 20_000, limits)
    assert len(text) <= 20_000
    assert "earlier calls left out for space: t0#0" in text
    assert "OUT-59" in text
    assert "OUT-0" not in text


def test_json_objects_are_found_fenced_or_amid_prose() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('  ```\n{"a": 1}```\n') == {"a": 1}
    assert parse_json_object('```json{"a": 1}   ```') == {"a": 1}
    assert parse_json_object('Here is the plan: {"a": 1} hope it helps') == {"a": 1}
    assert parse_json_object('Plan:\n```json\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert parse_json_object("[1, 2]") == "the answer is JSON but not an object"
    assert parse_json_object("") == "the answer was empty"


def test_an_answer_nested_past_the_parsers_stack_is_not_json() -> None:
    # json.loads raises RecursionError (not ValueError) past ~1,000 levels: the plan failed with a crash.
    assert parse_json_object('{"calls": ' + "[" * 100_000) == "the answer is not a JSON object"
    assert parse_json_object("```json\n" + "{}" * 10 + "[" * 5000 + "]" * 5000 + "\n```") == (
        "the answer is not a JSON object"
    )


def test_plans_in_the_specs_older_shape_are_accepted() -> None:
    content = '{"continue": false, "reasoning": "enough", "tools": [{"tool": "events_list", "parameters": {}}]}'
    plan, errors = parse_plan(answer(content), TOOLS, PlanBudget())
    assert errors == []
    assert plan.done
    assert plan.analysis_so_far == "enough"
    assert [c.tool for c in plan.calls] == ["events_list"]


def test_a_non_boolean_done_and_a_non_list_calls_are_errors() -> None:
    _, errors = parse_plan(answer('{"calls": {}, "done": "yes"}'), TOOLS, PlanBudget())
    assert errors == ["calls: must be a list", "done: must be true or false"]


def test_a_broken_server_schema_does_not_block_the_call() -> None:
    tool = ToolSpec(name="odd", input_schema={"type": "no-such-type"})
    plan, errors = parse_plan(answer('{"calls": [{"tool": "odd", "arguments": {"a": 1}}]}'), [tool], PlanBudget())
    assert errors == []
    assert plan.calls[0].arguments == {"a": 1}


def test_a_catastrophic_pattern_in_a_server_schema_is_never_run() -> None:
    # (a+)+$ on "a" * 40 + "!" backtracks about 2^40 steps: run, it would hold the event loop for hours.
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}, "pattern": {"type": "integer"}},
        "patternProperties": {"^(x+)+$": {"type": "string"}},
        "additionalProperties": False,
    }
    tool = ToolSpec(name="evil", input_schema=schema)
    plan, errors = parse_plan(
        answer('{"calls": [{"tool": "evil", "arguments": {"name": "' + "a" * 40 + '!", "pattern": 3}}]}'),
        [tool],
        PlanBudget(),
    )
    assert errors == []
    assert plan.calls[0].arguments["name"].endswith("!")
    # A property called "pattern" is a name, not the keyword: it stays, and its type is still checked.
    _, errors = parse_plan(answer('{"calls": [{"tool": "evil", "arguments": {"pattern": "x"}}]}'), [tool], PlanBudget())
    assert len(errors) == 1
    assert "pattern" in errors[0]


def test_a_schema_nested_absurdly_deep_does_not_block_the_call() -> None:
    deep: dict = {"type": "object"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(RecursionError):
        without_regexes(deep)
    plan, errors = parse_plan(
        answer('{"calls": [{"tool": "deep", "arguments": {"x": 1}}]}'),
        [ToolSpec(name="deep", input_schema=deep)],
        PlanBudget(),
    )
    assert errors == []
    assert plan.calls[0].arguments == {"x": 1}


@pytest.mark.parametrize(
    ("endpoint", "kind"),
    [
        ("https://contoso.openai.azure.com/", "azure"),
        ("https://contoso.cognitiveservices.azure.com", "azure"),
        ("https://api.openai.com/v1", "openai"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "compatible"),
        ("https://api.x.ai/v1", "compatible"),
    ],
)
def test_the_kind_is_inferred_from_the_endpoint(endpoint: str, kind: str) -> None:
    assert infer_kind(endpoint) == kind


def test_config_from_the_platform_settings() -> None:
    assert LlmConfig.from_settings(Settings.from_env({})) is None

    env = {"AZURE_OPENAI_ENDPOINT": "https://contoso.openai.azure.com", "AZURE_OPENAI_DEPLOYMENT": "gpt-4o"}
    azure = LlmConfig.from_settings(Settings.from_env(env))
    assert azure is not None
    assert (azure.kind, azure.model, azure.api_key, azure.api_version) == ("azure", "gpt-4o", None, "2024-10-21")

    env = {**env, "AZURE_OPENAI_API_KEY": "azure-secret", "OPENAI_API_VERSION": "2025-01-01-preview"}
    keyed = LlmConfig.from_settings(Settings.from_env(env))
    assert keyed is not None
    assert keyed.api_key is not None
    assert keyed.api_key.get_secret_value() == "azure-secret"
    assert keyed.api_version == "2025-01-01-preview"
    assert "azure-secret" not in repr(keyed)
    assert "azure-secret" not in keyed.model_dump_json()

    env = {"OPENAI_BASE_URL": "https://api.x.ai/v1", "OPENAI_MODEL": "grok-4", "OPENAI_API_KEY": "xai-secret"}
    grok = LlmConfig.from_settings(Settings.from_env(env))
    assert grok is not None
    assert (grok.kind, grok.model, grok.endpoint) == (
        "compatible",
        "grok-4",
        "https://api.x.ai/v1",
    )

    forced = LlmConfig.from_settings(Settings.from_env({**env, "FIREBREAK_LLM_KIND": "openai"}))
    assert forced is not None
    assert forced.kind == "openai"


def test_llm_unavailable_is_an_upstream_error_with_a_reason() -> None:
    exc = LlmUnavailable("timeout", "the LLM did not answer within 5s")
    assert isinstance(exc, UpstreamError)
    assert exc.details == {"reason": "timeout"}
    assert exc.usage == []
