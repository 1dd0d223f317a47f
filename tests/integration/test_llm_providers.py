"""DEFAULT_LLM_PROVIDER end to end on the wire: the settings, the platform's client and a real OpenAI-compatible
HTTP server on 127.0.0.1 (tests/support/fake_llm.py) standing in for the provider's endpoint.

The provider table's base URL is pointed at the fake server (the only change); everything else is what a
worker does: Settings.from_env -> LlmConfig.from_settings -> LlmClient -> one chat completion.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator

import pytest

from shared.core import llm_providers
from shared.core.llm import LlmClient, LlmConfig
from shared.core.settings import Settings
from tests.support.fake_llm import FakeLlm, fake_llm, text

GEMINI_KEY, GROK_KEY, OPENAI_KEY = "AIza-gemini-test-4e1b", "xai-grok-test-9d3a", "sk-openai-test-2c7f"
EVERY_KEY = {"GEMINI_API_KEY": GEMINI_KEY, "GROK_API_KEY": GROK_KEY, "OPENAI_API_KEY": OPENAI_KEY}


@pytest.fixture
def llm() -> Iterator[FakeLlm]:
    with fake_llm(default=text('{"ok": true}')) as server:
        yield server


def point(monkeypatch: pytest.MonkeyPatch, provider: str, base_url: str) -> None:
    monkeypatch.setitem(
        llm_providers.PROVIDERS, provider, dataclasses.replace(llm_providers.PROVIDERS[provider], base_url=base_url)
    )


async def ask(env: dict[str, str]) -> LlmConfig:
    settings = Settings.from_env(env)
    config = LlmConfig.from_settings(settings)
    assert config is not None
    client = LlmClient.create(config.model_copy(update={"max_retries": 0, "timeout_seconds": 10}))
    try:
        answer = await client.complete([{"role": "user", "content": "ping"}], purpose="probe")
    finally:
        await client.aclose()
    assert answer.content == '{"ok": true}'
    return config


def wire(llm: FakeLlm) -> str:
    return json.dumps([{"path": r.path, "headers": r.headers, "body": r.body} for r in llm.requests])


@pytest.mark.parametrize(
    ("provider", "base_path", "key", "model"),
    [
        ("gemini", "/v1beta/openai/", GEMINI_KEY, "gemini-2.5-flash"),
        ("grok", "/v1", GROK_KEY, "grok-4"),
        ("openai", "/v1", OPENAI_KEY, "gpt-4.1-mini"),
    ],
)
async def test_the_providers_key_is_sent_as_bearer_to_its_base_url_and_no_other_key_is(
    llm: FakeLlm,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    provider: str,
    base_path: str,
    key: str,
    model: str,
) -> None:
    point(monkeypatch, provider, llm.url + base_path)
    with caplog.at_level(logging.DEBUG):
        await ask({"DEFAULT_LLM_PROVIDER": provider, **EVERY_KEY})
    (request,) = llm.requests
    assert request.path == base_path.rstrip("/") + "/chat/completions"
    assert request.headers["authorization"] == f"Bearer {key}"
    assert request.body["model"] == model
    others = [k for k in (GEMINI_KEY, GROK_KEY, OPENAI_KEY) if k != key]
    assert not any(k in wire(llm) for k in others)
    assert not any(k in caplog.text for k in (GEMINI_KEY, GROK_KEY, OPENAI_KEY))


async def test_an_explicit_endpoint_wins_and_never_receives_the_providers_key(
    llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_llm(default=text('{"ok": true}')) as provider_side:
        point(monkeypatch, "gemini", provider_side.url + "/v1beta/openai/")
        env = {
            "DEFAULT_LLM_PROVIDER": "gemini",
            "FIREBREAK_LLM_ENDPOINT": llm.base_url,
            "FIREBREAK_LLM_MODEL": "team-model",
            **EVERY_KEY,
        }
        config = await ask(env)
        assert provider_side.requests == []  # the provider's endpoint is not asked at all
    (request,) = llm.requests
    assert (config.endpoint, request.path, request.body["model"]) == (
        llm.base_url,
        "/v1/chat/completions",
        "team-model",
    )
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"  # the explicit endpoint's usual key
    assert GEMINI_KEY not in wire(llm)


async def test_firebreak_llm_api_key_and_model_apply_to_the_provider(
    llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    point(monkeypatch, "grok", llm.base_url)
    await ask(
        {"DEFAULT_LLM_PROVIDER": "grok", "FIREBREAK_LLM_API_KEY": "fb-own-key-77", "FIREBREAK_LLM_MODEL": "grok-3-mini"}
    )
    (request,) = llm.requests
    assert (request.headers["authorization"], request.body["model"]) == ("Bearer fb-own-key-77", "grok-3-mini")
