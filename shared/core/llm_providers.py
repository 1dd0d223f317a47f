"""The spec's LLM settings: `DEFAULT_LLM_PROVIDER` (gemini, openai, grok) with that provider's API key.

Each provider is called on its OpenAI-compatible endpoint with the platform's one client (llm.py):

| provider | base URL | key | default model |
|---|---|---|---|
| gemini | https://generativelanguage.googleapis.com/v1beta/openai/ | GEMINI_API_KEY | gemini-2.5-flash |
| openai | https://api.openai.com/v1 | OPENAI_API_KEY | gpt-4.1-mini |
| grok | https://api.x.ai/v1 | GROK_API_KEY | grok-4 |

The explicit settings win: when FIREBREAK_LLM_ENDPOINT, AZURE_OPENAI_ENDPOINT or OPENAI_BASE_URL names an
endpoint, the provider settings are ignored altogether, so a provider's key is never sent to another host.
With a provider, FIREBREAK_LLM_MODEL (or OPENAI_MODEL) still picks the model and FIREBREAK_LLM_API_KEY the
key. Without DEFAULT_LLM_PROVIDER, a GEMINI_API_KEY or GROK_API_KEY set alone chooses its provider (both
set: choose with DEFAULT_LLM_PROVIDER); OPENAI_API_KEY alone chooses nothing, as before (it also serves
compatible endpoints named by OPENAI_BASE_URL). These are the operator's settings, not a caller's: like
FIREBREAK_LLM_ENDPOINT they do not pass the outbound guard, and they open no FIREBREAK_OUTBOUND_* list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

ProviderName = Literal["gemini", "openai", "grok"]
PROVIDER_SETTING = "DEFAULT_LLM_PROVIDER"
# Settings that name an endpoint themselves: any of them and the provider settings step aside.
EXPLICIT_ENDPOINT_SETTINGS = ("FIREBREAK_LLM_ENDPOINT", "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL")


@dataclass(frozen=True)
class Provider:
    name: ProviderName
    base_url: str
    key_setting: str
    default_model: str


PROVIDERS: dict[str, Provider] = {
    "gemini": Provider(
        "gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY", "gemini-2.5-flash"
    ),
    "openai": Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4.1-mini"),
    "grok": Provider("grok", "https://api.x.ai/v1", "GROK_API_KEY", "grok-4"),
}
PROVIDER_NAMES: tuple[str, ...] = get_args(ProviderName)
# Keys that choose their provider when set alone (OPENAI_API_KEY does not: it predates the provider settings).
_INFERRING_KEYS = ("gemini", "grok")


def normalised_name(value: object) -> str | None:
    """The provider name as written in a setting ('Gemini ' -> 'gemini'); None for an empty value."""
    if value is None:
        return None
    text = str(value).strip().lower()
    return text or None


def explicit_endpoint(env: Mapping[str, str]) -> str | None:
    """The first endpoint setting that is set (its name), else None."""
    return next((name for name in EXPLICIT_ENDPOINT_SETTINGS if env.get(name)), None)


def chosen_provider(requested: str | None, env: Mapping[str, str]) -> Provider | None:
    """The provider whose endpoint the platform's LLM uses, or None (no provider settings, or an explicit endpoint).

    `requested` is DEFAULT_LLM_PROVIDER / FIREBREAK_LLM_PROVIDER, normalised. Raises ValueError naming the
    setting to change: an unknown provider, a provider without its key, or two inferring keys and no choice.
    """
    if explicit_endpoint(env):
        return None
    if requested is None:
        present = [name for name in _INFERRING_KEYS if env.get(PROVIDERS[name].key_setting)]
        if len(present) > 1:
            keys = " and ".join(PROVIDERS[n].key_setting for n in present)
            raise ValueError(f"{keys} are both set: choose one with {PROVIDER_SETTING} ({', '.join(present)})")
        if not present:
            return None
        requested = present[0]
    provider = PROVIDERS.get(requested)
    if provider is None:
        raise ValueError(f"{PROVIDER_SETTING}={requested!r} is not one of {', '.join(PROVIDER_NAMES)}")
    if not (env.get(provider.key_setting) or env.get("FIREBREAK_LLM_API_KEY")):
        raise ValueError(
            f"{PROVIDER_SETTING}={provider.name} needs {provider.key_setting} (or FIREBREAK_LLM_API_KEY): "
            "its endpoint refuses calls without a key"
        )
    return provider


def provider_key(provider: Provider, env: Mapping[str, str]) -> str | None:
    """The key sent to `provider`'s endpoint: FIREBREAK_LLM_API_KEY, else the provider's own key (never another's)."""
    return env.get("FIREBREAK_LLM_API_KEY") or env.get(provider.key_setting) or None
