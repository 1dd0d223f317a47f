"""The platform's LLM settings (FIREBREAK_LLM_*): one section, read once when settings load.

Every variable that says which model to call, where and with which key is read here, from the mapping
`Settings.from_env` reads: the FIREBREAK_LLM_* names, the names people know from Azure OpenAI and OpenAI
(AZURE_OPENAI_*, OPENAI_*), and the spec's DEFAULT_LLM_PROVIDER with its provider's key (llm_providers.py).
What is left undecided by the variables is decided here too (the endpoint's kind, which key goes with it),
so `LlmConfig.from_settings(settings)` (llm.py) needs nothing else. A bad value is a SettingsError naming
its variable. Capabilities read it as `settings.llm`; the client itself is `deps.llm()`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr

from shared.core.llm_providers import (
    PROVIDER_SETTING,
    PROVIDERS,
    Provider,
    ProviderName,
    chosen_provider,
    explicit_endpoint,
    normalised_name,
    provider_key,
)
from shared.core.settings_section import SettingsError, SettingsSection

log = logging.getLogger(__name__)

LlmKind = Literal["azure", "openai", "compatible"]
DEFAULT_AZURE_API_VERSION = "2024-10-21"  # the GA data-plane version that has json_object response_format
_AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")


def infer_kind(endpoint: str) -> LlmKind:
    """azure for Azure OpenAI / AI Services host names, openai for api.openai.com, compatible otherwise."""
    host = (urlsplit(endpoint).hostname or "").lower()
    if host.endswith(_AZURE_HOST_SUFFIXES):
        return "azure"
    return "openai" if host == "api.openai.com" else "compatible"


class LlmSettings(SettingsSection):
    """Which model the platform asks (investigations' planner, the chat assistant); without an endpoint and a
    model, features take their rule-based path."""

    env_prefix: ClassVar[str] = "llm_"
    env_aliases: ClassVar[Mapping[str, str]] = {
        "endpoint": "AZURE_OPENAI_ENDPOINT",
        "model": "AZURE_OPENAI_DEPLOYMENT",
        "provider": PROVIDER_SETTING,
    }
    extra_env_names: ClassVar[tuple[str, ...]] = (
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "AZURE_OPENAI_API_KEY",
        "OPENAI_API_KEY",
        *(p.key_setting for p in PROVIDERS.values() if p.key_setting != "OPENAI_API_KEY"),
        "AZURE_OPENAI_API_VERSION",
        "OPENAI_API_VERSION",
    )

    endpoint: str | None = Field(
        None,
        description="Azure OpenAI endpoint or any OpenAI-compatible base URL (OPENAI_BASE_URL is read too); "
        "without one, LLM features take their rule-based path.",
    )
    model: str | None = Field(
        None, description="The model or Azure OpenAI deployment (OPENAI_MODEL goes with OPENAI_BASE_URL)."
    )
    provider: ProviderName | None = Field(
        None,
        description="gemini, openai or grok: that provider's OpenAI-compatible endpoint with GEMINI_API_KEY, "
        "OPENAI_API_KEY or GROK_API_KEY (a GEMINI_ or GROK_API_KEY set alone chooses its provider). Ignored when "
        "FIREBREAK_LLM_ENDPOINT, AZURE_OPENAI_ENDPOINT or OPENAI_BASE_URL is set; FIREBREAK_LLM_MODEL (else a "
        "default per provider) and FIREBREAK_LLM_API_KEY still apply.",
    )
    kind: LlmKind | None = Field(
        None,
        description="azure, openai or compatible: how to call the endpoint. Unset: Azure OpenAI / AI Services "
        "host names are azure, api.openai.com is openai, anything else compatible.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="The endpoint's key; else AZURE_OPENAI_API_KEY (azure) or OPENAI_API_KEY (the others), or the "
        "provider's own key with FIREBREAK_LLM_PROVIDER. None on azure: the managed identity.",
    )
    api_version: str = Field(
        DEFAULT_AZURE_API_VERSION,
        min_length=1,
        description="Azure OpenAI's api-version; else AZURE_OPENAI_API_VERSION, then OPENAI_API_VERSION.",
    )

    @property
    def configured(self) -> bool:
        return bool(self.endpoint and self.model)

    @classmethod
    def values_from_env(cls, env: Mapping[str, str]) -> dict[str, Any]:
        """The FIREBREAK_LLM_* values, then the fallbacks in the order the module docstring gives."""
        values = super().values_from_env(env)
        if not values.get("endpoint") and env.get("OPENAI_BASE_URL"):
            values["endpoint"] = env["OPENAI_BASE_URL"]
            values["model"] = values.get("model") or env.get("OPENAI_MODEL", "")
        provider = _provider(values, env)
        if provider is not None:
            values["model"] = values.get("model") or env.get("OPENAI_MODEL") or provider.default_model
            values.update(provider=provider.name, endpoint=provider.base_url)
        else:
            values["provider"] = None
        endpoint = values.get("endpoint")
        if endpoint and not values.get("kind"):
            values["kind"] = infer_kind(str(endpoint))
        values["api_key"] = _key(values, env) or None
        values["api_version"] = (
            values.get("api_version")
            or env.get("AZURE_OPENAI_API_VERSION")
            or env.get("OPENAI_API_VERSION")
            or DEFAULT_AZURE_API_VERSION
        )
        return values


def _provider(values: Mapping[str, Any], env: Mapping[str, str]) -> Provider | None:
    """The provider DEFAULT_LLM_PROVIDER (or a lone provider key) stands for, unless an endpoint setting names
    one (llm_providers.py)."""
    requested = normalised_name(values.get("provider"))
    try:
        provider = chosen_provider(requested, env)
    except ValueError as exc:
        raise SettingsError(f"Invalid setting(s): {exc}") from None
    explicit = explicit_endpoint(env)
    if provider is None and requested is not None and explicit is not None:
        log.info("%s=%s is ignored: %s names the LLM endpoint", PROVIDER_SETTING, requested, explicit)
    return provider


def _key(values: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """With a provider, its own key (never another's); else FIREBREAK_LLM_API_KEY, then the kind's usual name."""
    if values.get("provider") is not None:
        return provider_key(PROVIDERS[values["provider"]], env)
    fallback = "AZURE_OPENAI_API_KEY" if values.get("kind") == "azure" else "OPENAI_API_KEY"
    return values.get("api_key") or env.get(fallback)
