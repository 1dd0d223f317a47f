"""The platform's LLM: which model to call (`LlmConfig.from_settings`), one SDK client per process, typed failures.

The settings are one section (llm_settings.py, `settings.llm`), read when settings load; the client is
created on first use by `Deps.llm()` and closed with the Deps. Capabilities that ask a model
(investigations' planner, the task assistant) share this client: Azure
OpenAI (key or managed identity), OpenAI, or any OpenAI-compatible endpoint. Each call bounds its own time
(`LlmConfig.deadline_seconds` around the SDK's own timeout and retries) and raises `LlmUnavailable` when
the model cannot be reached. The API key lives in the SDK client only: never in messages, logs, errors or
return values.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import SpanKind
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from shared.core import telemetry
from shared.core.errors import UpstreamError
from shared.core.llm_settings import DEFAULT_AZURE_API_VERSION, LlmKind, infer_kind
from shared.core.settings import Settings

if TYPE_CHECKING:
    from azure.core.credentials_async import AsyncTokenCredential
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam

log = logging.getLogger(__name__)

__all__ = [
    "AZURE_SCOPE",
    "DEFAULT_AZURE_API_VERSION",
    "CallUsage",
    "Completion",
    "LlmClient",
    "LlmConfig",
    "LlmKind",
    "LlmProvider",
    "LlmUnavailable",
    "PromptLimits",
    "infer_kind",
]

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


# ---- configuration and client --------------------------------------------------------------------


class PromptLimits(BaseModel):
    """Character budgets for prompts (characters, not tokens: they bound cost and history size alike)."""

    model_config = ConfigDict(frozen=True)

    max_prompt_chars: int = Field(48_000, ge=4_000, description="All messages of one request together.")
    alert_chars: int = Field(4_000, ge=200)
    runbook_chars: int = Field(8_000, ge=0)
    tools_chars: int = Field(16_000, ge=500, description="The tool list with schemas.")
    tool_description_chars: int = Field(300, ge=40)
    output_chars: int = Field(4_000, ge=200, description="One tool output at most (head and tail kept).")
    min_output_chars: int = Field(300, ge=100, description="Below this share, older outputs are left out.")
    reply_chars: int = Field(4_000, ge=200, description="A rejected answer sent back for repair.")


class LlmConfig(BaseModel):
    """Which model to call and how patiently. Built by `LlmConfig.from_settings` or by hand in tests."""

    model_config = ConfigDict(frozen=True)

    kind: LlmKind
    endpoint: str = Field(description="Azure resource endpoint, or the OpenAI-compatible base URL (…/v1).")
    model: str = Field(min_length=1, description="The model, or the Azure OpenAI deployment.")
    api_key: SecretStr | None = Field(None, description="Absent on Azure: managed identity (DefaultAzureCredential).")
    api_version: str = DEFAULT_AZURE_API_VERSION
    timeout_seconds: float = Field(60.0, gt=0, description="One HTTP attempt.")
    connect_timeout_seconds: float = Field(10.0, gt=0)
    max_retries: int = Field(1, ge=0, le=5, description="SDK retries of 408/409/429/5xx and connection errors.")
    deadline_seconds: float = Field(150.0, gt=0, description="One call, retries included.")
    json_mode: bool = Field(True, description="Send response_format json_object (turn off for endpoints without).")
    temperature: float | None = 0.0
    max_completion_tokens: int = Field(2_000, ge=100)
    limits: PromptLimits = PromptLimits()

    @classmethod
    def from_settings(cls, settings: Settings) -> LlmConfig | None:
        """The config for the platform's LLM section (`settings.llm`), or None when no model is configured (the
        rule path runs). Every variable was read, and every fallback decided, when the settings loaded."""
        section = settings.llm
        if not (section.endpoint and section.model):
            return None
        return cls(
            kind=section.kind or infer_kind(section.endpoint),
            endpoint=section.endpoint,
            model=section.model,
            api_key=section.api_key,
            api_version=section.api_version,
        )


class CallUsage(BaseModel):
    """Token use of one model call, as the endpoint reported it (zeros when it reported none)."""

    purpose: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_chars: int = 0


class Completion(BaseModel):
    """One answer: the text (None when the model sent none), any tool_calls, why it stopped, its usage."""

    content: str | None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: CallUsage


class LlmUnavailable(UpstreamError):
    """The model could not be asked (timeout, HTTP error, no connection, no token): take the rule path.

    `reason` is one of timeout, http_status, connection, credential, error; `usage` holds the calls
    that did answer before this one failed. The message names no URL, key or response body.
    """

    def __init__(self, reason: str, message: str, *, status: int | None = None) -> None:
        super().__init__(
            message,
            details={"reason": reason, **({"status": status} if status is not None else {})},
            recovery_suggestions=[
                "The model could not be reached: retry later; features with a rule-based path use it."
            ],
        )
        self.reason = reason
        self.status = status
        self.usage: list[CallUsage] = []


class LlmClient:
    """The SDK client and its config, built once per worker process and passed to every call."""

    def __init__(self, sdk: AsyncOpenAI, config: LlmConfig, credential: AsyncTokenCredential | None = None) -> None:
        self.sdk = sdk
        self.config = config
        self._credential = credential

    @classmethod
    def create(cls, config: LlmConfig, credential: AsyncTokenCredential | None = None) -> LlmClient:
        """An AsyncAzureOpenAI (key, or a token provider over `credential` / DefaultAzureCredential) or an
        AsyncOpenAI for openai and compatible endpoints, with the config's timeouts and retries."""
        import openai

        timeout = openai.Timeout(config.timeout_seconds, connect=config.connect_timeout_seconds)
        key = config.api_key.get_secret_value() if config.api_key else None
        sdk: AsyncOpenAI
        if config.kind == "azure":
            if key:
                sdk = openai.AsyncAzureOpenAI(
                    azure_endpoint=config.endpoint,
                    azure_deployment=config.model,
                    api_version=config.api_version,
                    api_key=key,
                    timeout=timeout,
                    max_retries=config.max_retries,
                )
            else:
                from azure.identity.aio import DefaultAzureCredential, get_bearer_token_provider

                credential = credential or DefaultAzureCredential()
                sdk = openai.AsyncAzureOpenAI(
                    azure_endpoint=config.endpoint,
                    azure_deployment=config.model,
                    api_version=config.api_version,
                    azure_ad_token_provider=get_bearer_token_provider(credential, AZURE_SCOPE),
                    timeout=timeout,
                    max_retries=config.max_retries,
                )
        else:
            # Keyless compatible servers (vLLM, Ollama) accept any bearer value; the SDK insists on one, and
            # passing our own keeps it from reading OPENAI_API_KEY meant for another endpoint.
            sdk = openai.AsyncOpenAI(
                base_url=config.endpoint or "https://api.openai.com/v1",
                api_key=key or "no-key",
                timeout=timeout,
                max_retries=config.max_retries,
            )
        return cls(sdk, config, credential)

    async def aclose(self) -> None:
        """Close the HTTP pool and the credential this client made or was given."""
        await self.sdk.close()
        if self._credential is not None:
            await self._credential.close()

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        purpose: str,
        json_mode: bool | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | None = None,
    ) -> Completion:
        """One chat completion within the deadline; LlmUnavailable on any transport or HTTP failure.

        With `tools` (the tools API's `[{"type": "function", "function": {...}}]`) the model may answer with
        `tool_calls`; messages may then carry an assistant turn's `tool_calls` and `tool` results.
        """
        import openai

        cfg = self.config
        use_json = cfg.json_mode if json_mode is None else json_mode
        extra: dict[str, Any] = {}
        if use_json:
            extra["response_format"] = {"type": "json_object"}
        if tools:
            extra["tools"] = [dict(t) for t in tools]
            if tool_choice:
                extra["tool_choice"] = tool_choice
        if cfg.temperature is not None:
            extra["temperature"] = cfg.temperature
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        try:
            # The span names the model and purpose, never a prompt or an answer.
            attributes = {"gen_ai.request.model": cfg.model, "firebreak.llm.purpose": purpose}
            with telemetry.span(f"llm {purpose}", attributes, kind=SpanKind.CLIENT) as span:
                async with asyncio.timeout(cfg.deadline_seconds):
                    response = await self.sdk.chat.completions.create(
                        model=cfg.model,
                        messages=[_message(m) for m in messages],
                        max_completion_tokens=cfg.max_completion_tokens,
                        **extra,
                    )
                if response.usage is not None:
                    span.set_attribute("gen_ai.usage.input_tokens", response.usage.prompt_tokens or 0)
                    span.set_attribute("gen_ai.usage.output_tokens", response.usage.completion_tokens or 0)
        except (TimeoutError, openai.APITimeoutError):
            raise _unavailable("timeout", f"the LLM did not answer within {cfg.deadline_seconds:g}s") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise _unavailable("http_status", f"the LLM answered HTTP {status}", status=status) from None
        except openai.APIConnectionError:
            raise _unavailable("connection", "could not connect to the LLM endpoint") from None
        except Exception as exc:
            # Token providers raise azure.core errors; anything else from the SDK is an outage too. Only the
            # type name is kept: SDK messages can quote request details.
            reason = "credential" if _is_credential_error(exc) else "error"
            raise _unavailable(reason, f"the LLM call failed ({type(exc).__name__})") from None
        usage = CallUsage(purpose=purpose, model=cfg.model, prompt_chars=chars)
        if response.usage is not None:
            usage.prompt_tokens = response.usage.prompt_tokens or 0
            usage.completion_tokens = response.usage.completion_tokens or 0
            usage.total_tokens = response.usage.total_tokens or (usage.prompt_tokens + usage.completion_tokens)
        log.info(
            "llm %s: %d prompt chars, %d+%d tokens",
            purpose,
            chars,
            usage.prompt_tokens,
            usage.completion_tokens,
        )
        if not response.choices:
            return Completion(content=None, usage=usage)
        choice = response.choices[0]
        calls = [c.model_dump() for c in (choice.message.tool_calls or [])]
        return Completion(
            content=choice.message.content, tool_calls=calls, finish_reason=choice.finish_reason, usage=usage
        )


class LlmProvider:
    """The process's LLM client, created on first use and closed once (Deps holds one: `deps.llm()`).

    One client per config: a worker's settings load once, so in a deployment that is one client whose
    connection pool every activity and chat turn shares. A copy of the Deps (`dataclasses.replace`) shares
    the provider; a copy with other LLM settings gets a client of its own, closed with the rest.
    """

    def __init__(self) -> None:
        self._clients: dict[LlmConfig, LlmClient] = {}

    def client(self, settings: Settings) -> LlmClient | None:
        """The client for `settings.llm`, created on first use; None when no model is configured."""
        config = LlmConfig.from_settings(settings)
        if config is None:
            return None
        found = self._clients.get(config)
        if found is None:
            found = self._clients[config] = LlmClient.create(config)
        return found

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


def _message(m: Mapping[str, Any]) -> ChatCompletionMessageParam:
    role, content = str(m["role"]), str(m.get("content") or "")
    if role == "system":
        return {"role": "system", "content": content}
    if role == "assistant":
        calls = m.get("tool_calls")
        if calls:
            return {"role": "assistant", "content": content or None, "tool_calls": list(calls)}
        return {"role": "assistant", "content": content}
    if role == "tool":
        return {"role": "tool", "tool_call_id": str(m.get("tool_call_id") or ""), "content": content}
    return {"role": "user", "content": content}


def _unavailable(reason: str, message: str, *, status: int | None = None) -> LlmUnavailable:
    log.warning("llm unavailable: %s", message)
    return LlmUnavailable(reason, message, status=status)


def _is_credential_error(exc: Exception) -> bool:
    try:
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import CredentialUnavailableError
    except ImportError:  # pragma: no cover - azure-identity is a runtime dependency
        return False
    return isinstance(exc, (ClientAuthenticationError, CredentialUnavailableError))
