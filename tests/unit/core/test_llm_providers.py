"""The spec's LLM settings (shared/core/llm_providers.py): DEFAULT_LLM_PROVIDER with GEMINI_API_KEY / GROK_API_KEY /
OPENAI_API_KEY map to the providers' OpenAI-compatible endpoints; FIREBREAK_LLM_* / OPENAI_* / AZURE_OPENAI_* win."""

from __future__ import annotations

import logging

import pytest

from devhost.scenarios import passed_env
from shared.core.llm import LlmConfig
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings, SettingsError

GEMINI_KEY, GROK_KEY, OPENAI_KEY, OWN_KEY = "gm-key-1f9", "xai-key-7c2", "sk-openai-3b8", "fb-llm-key-5d1"
GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"


def config(env: dict[str, str]) -> LlmConfig | None:
    return LlmConfig.from_settings(Settings.from_env(env))


def key_of(cfg: LlmConfig | None) -> str | None:
    assert cfg is not None
    return cfg.api_key.get_secret_value() if cfg.api_key else None


@pytest.mark.parametrize(
    ("provider", "key_setting", "key", "endpoint", "model", "kind"),
    [
        ("gemini", "GEMINI_API_KEY", GEMINI_KEY, GEMINI_URL, "gemini-2.5-flash", "compatible"),
        ("grok", "GROK_API_KEY", GROK_KEY, "https://api.x.ai/v1", "grok-4", "compatible"),
        ("openai", "OPENAI_API_KEY", OPENAI_KEY, "https://api.openai.com/v1", "gpt-4.1-mini", "openai"),
    ],
)
def test_each_provider_maps_to_its_openai_compatible_endpoint_with_its_own_key(
    provider: str, key_setting: str, key: str, endpoint: str, model: str, kind: str
) -> None:
    env = {"DEFAULT_LLM_PROVIDER": provider, key_setting: key}
    settings = Settings.from_env(env)
    assert (settings.llm.provider, settings.llm.endpoint, settings.llm.model) == (provider, endpoint, model)
    assert settings.llm_configured
    cfg = LlmConfig.from_settings(settings)
    assert cfg is not None
    assert (cfg.kind, cfg.endpoint, cfg.model, key_of(cfg)) == (kind, endpoint, model, key)


def test_the_provider_name_is_read_without_regard_to_case_and_the_firebreak_name_wins() -> None:
    env = {"DEFAULT_LLM_PROVIDER": " Grok ", "GROK_API_KEY": GROK_KEY, "GEMINI_API_KEY": GEMINI_KEY}
    assert Settings.from_env(env).llm.provider == "grok"
    both = {**env, "FIREBREAK_LLM_PROVIDER": "gemini"}
    assert (Settings.from_env(both).llm.provider, key_of(config(both))) == ("gemini", GEMINI_KEY)


def test_another_providers_key_is_never_sent() -> None:
    # Every key set: each provider gets its own, never OPENAI_API_KEY (which the compatible kind reads otherwise).
    env = {"GEMINI_API_KEY": GEMINI_KEY, "GROK_API_KEY": GROK_KEY, "OPENAI_API_KEY": OPENAI_KEY}
    assert key_of(config({**env, "DEFAULT_LLM_PROVIDER": "gemini"})) == GEMINI_KEY
    assert key_of(config({**env, "DEFAULT_LLM_PROVIDER": "grok"})) == GROK_KEY
    assert key_of(config({**env, "DEFAULT_LLM_PROVIDER": "openai"})) == OPENAI_KEY


def test_a_lone_gemini_or_grok_key_chooses_its_provider_and_openai_api_key_alone_chooses_nothing() -> None:
    assert Settings.from_env({"GEMINI_API_KEY": GEMINI_KEY}).llm.provider == "gemini"
    assert Settings.from_env({"GROK_API_KEY": GROK_KEY, "OPENAI_API_KEY": OPENAI_KEY}).llm.provider == "grok"
    # OPENAI_API_KEY also serves OPENAI_BASE_URL endpoints: alone it never started calls to api.openai.com.
    alone = {"OPENAI_API_KEY": OPENAI_KEY}
    assert not Settings.from_env(alone).llm_configured
    assert config(alone) is None
    with pytest.raises(SettingsError, match=r"GEMINI_API_KEY and GROK_API_KEY are both set.*DEFAULT_LLM_PROVIDER"):
        Settings.from_env({"GEMINI_API_KEY": GEMINI_KEY, "GROK_API_KEY": GROK_KEY})


def test_the_model_and_key_settings_still_apply_to_a_provider() -> None:
    env = {"DEFAULT_LLM_PROVIDER": "gemini", "GEMINI_API_KEY": GEMINI_KEY}
    assert Settings.from_env({**env, "FIREBREAK_LLM_MODEL": "gemini-2.5-pro"}).llm.model == "gemini-2.5-pro"
    assert Settings.from_env({**env, "OPENAI_MODEL": "gemini-2.5-flash-lite"}).llm.model == "gemini-2.5-flash-lite"
    assert key_of(config({**env, "FIREBREAK_LLM_API_KEY": OWN_KEY})) == OWN_KEY
    # FIREBREAK_LLM_API_KEY alone is enough for a provider (Azure deployments keep it in Key Vault).
    assert key_of(config({"DEFAULT_LLM_PROVIDER": "grok", "FIREBREAK_LLM_API_KEY": OWN_KEY})) == OWN_KEY
    # An empty endpoint setting (local.settings.json templates) names no endpoint.
    empty = {**env, "FIREBREAK_LLM_ENDPOINT": "", "AZURE_OPENAI_ENDPOINT": ""}
    assert Settings.from_env(empty).llm.endpoint == GEMINI_URL


@pytest.mark.parametrize(
    "explicit",
    [
        {"FIREBREAK_LLM_ENDPOINT": "https://llm.example.com/v1", "FIREBREAK_LLM_MODEL": "m"},
        {"AZURE_OPENAI_ENDPOINT": "https://contoso.openai.azure.com", "AZURE_OPENAI_DEPLOYMENT": "gpt-4o"},
        {"OPENAI_BASE_URL": "https://vllm.example.com/v1", "OPENAI_MODEL": "m"},
    ],
    ids=["firebreak", "azure", "openai_base_url"],
)
def test_an_explicit_endpoint_wins_and_the_providers_key_never_goes_there(
    explicit: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    env = {**explicit, "DEFAULT_LLM_PROVIDER": "gemini", "GEMINI_API_KEY": GEMINI_KEY}
    with caplog.at_level(logging.INFO):
        settings = Settings.from_env(env)
    assert settings.llm.provider is None
    assert settings.llm.endpoint == next(v for k, v in explicit.items() if "ENDPOINT" in k or "BASE_URL" in k)
    cfg = LlmConfig.from_settings(settings)
    assert cfg is not None
    assert key_of(cfg) is None  # no OPENAI_/AZURE_OPENAI_API_KEY set: no key at all, certainly not Gemini's
    assert key_of(LlmConfig.from_settings(Settings.from_env({**env, "FIREBREAK_LLM_API_KEY": OWN_KEY}))) == OWN_KEY
    assert "DEFAULT_LLM_PROVIDER=gemini is ignored" in caplog.text
    assert GEMINI_KEY not in caplog.text


def test_a_provider_without_its_key_or_an_unknown_one_stops_the_worker_naming_the_setting() -> None:
    with pytest.raises(SettingsError, match="DEFAULT_LLM_PROVIDER=gemini needs GEMINI_API_KEY"):
        Settings.from_env({"DEFAULT_LLM_PROVIDER": "gemini", "GROK_API_KEY": GROK_KEY})
    with pytest.raises(SettingsError, match="DEFAULT_LLM_PROVIDER='claude' is not one of gemini, openai, grok"):
        Settings.from_env({"DEFAULT_LLM_PROVIDER": "claude"})
    # With an explicit endpoint the provider settings are not read at all, so they cannot stop the worker.
    assert Settings.from_env({"OPENAI_BASE_URL": "https://h/v1", "DEFAULT_LLM_PROVIDER": "claude"}).llm.provider is None


def test_keys_stay_out_of_reprs_and_dumps() -> None:
    env = {"DEFAULT_LLM_PROVIDER": "grok", "GROK_API_KEY": GROK_KEY}
    settings = Settings.from_env(env)
    cfg = LlmConfig.from_settings(settings)
    for text in (repr(settings), settings.model_dump_json(), repr(cfg), cfg.model_dump_json() if cfg else ""):
        assert GROK_KEY not in text


def test_the_outbound_allow_lists_are_untouched_by_a_provider() -> None:
    """The provider's endpoint is the operator's, like FIREBREAK_LLM_ENDPOINT: it adds no host to any
    FIREBREAK_OUTBOUND_* list, and the guard of caller-chosen URLs refuses what it refused before."""
    env = {"DEFAULT_LLM_PROVIDER": "gemini", "GEMINI_API_KEY": GEMINI_KEY, "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true"}
    settings = Settings.from_env(env)
    assert settings.outbound_allowed_hosts == settings.outbound_mcp_allowed_hosts == []
    assert settings.outbound_runbooks_allowed_hosts == []
    for feature in ("runbooks", "mcp", "collect", "neubird"):
        guard = OutboundGuard(settings, feature)
        assert not guard.allowed_address("127.0.0.1", "127.0.0.1", 443)
        assert not guard.allowed_address("llm.internal", "10.0.0.5", 443)


def test_the_scenario_command_hands_the_provider_settings_to_its_host() -> None:
    environ = {"DEFAULT_LLM_PROVIDER": "gemini", "GEMINI_API_KEY": GEMINI_KEY, "GROK_API_KEY": GROK_KEY, "HOME": "/"}
    assert set(passed_env(environ)) == {"DEFAULT_LLM_PROVIDER", "GEMINI_API_KEY", "GROK_API_KEY"}


def test_every_llm_variable_is_read_when_settings_load_and_never_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """LlmConfig comes from the settings alone: the process environment after load changes nothing."""
    env = {"OPENAI_BASE_URL": "https://vllm.example.com/v1", "OPENAI_MODEL": "m", "OPENAI_API_KEY": OPENAI_KEY}
    settings = Settings.from_env(env)
    for name, value in {
        "FIREBREAK_LLM_API_KEY": OWN_KEY,
        "FIREBREAK_LLM_KIND": "azure",
        "OPENAI_API_VERSION": "x",
    }.items():
        monkeypatch.setenv(name, value)
    cfg = LlmConfig.from_settings(settings)
    assert cfg is not None
    assert (cfg.kind, cfg.api_version, key_of(cfg)) == ("compatible", "2024-10-21", OPENAI_KEY)


def test_a_bad_llm_value_names_its_variable_and_keys_are_secret() -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_LLM_KIND"):
        Settings.from_env({"FIREBREAK_LLM_ENDPOINT": "https://h/v1", "FIREBREAK_LLM_KIND": "anthropic"})
    azure = Settings.from_env(
        {
            "AZURE_OPENAI_ENDPOINT": "https://contoso.openai.azure.com",
            "AZURE_OPENAI_DEPLOYMENT": "gpt-4o",
            "AZURE_OPENAI_API_KEY": OWN_KEY,
            "AZURE_OPENAI_API_VERSION": "2025-01-01-preview",
        }
    )
    assert (azure.llm.kind, azure.llm.api_version) == ("azure", "2025-01-01-preview")
    assert azure.llm.api_key is not None
    assert azure.llm.api_key.get_secret_value() == OWN_KEY
    assert OWN_KEY not in repr(azure)
