"""Settings of the debug-memory capability (FIREBREAK_MEMORY_*): its semantic search."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, SecretStr

from shared.core.settings import SettingsSection

# The LLM's key variables (the LLM section lists them for the deployment): the endpoint's key is the LLM's.
_KEY_SETTINGS = ("FIREBREAK_LLM_API_KEY", "OPENAI_API_KEY")


class MemorySettings(SettingsSection):
    env_prefix = "memory_"
    derived_fields: ClassVar[frozenset[str]] = frozenset({"embeddings_api_key"})

    local_embeddings: bool = Field(
        False,
        description="Rank by meaning too, with the static embedding model shipped in the wordllama wheel (offline,"
        " loaded on first use). Off by default: on both held-out paraphrase sets it ranked worse than the lexical"
        " index alone (shared/memory/README.md); the embeddings endpoint is the way to add meaning.",
    )
    embeddings_endpoint: str | None = Field(
        None,
        description="An OpenAI-compatible base URL (…/v1) whose /embeddings ranks by meaning as well; needs"
        " FIREBREAK_MEMORY_EMBEDDINGS_MODEL; its key is the LLM's (FIREBREAK_LLM_API_KEY, else OPENAI_API_KEY),"
        " a Key Vault secret on Azure. Incidents added while it is set get its vectors.",
    )
    embeddings_model: str | None = Field(None, max_length=200, description="The embeddings endpoint's model.")
    embeddings_timeout_seconds: float = Field(
        5.0, gt=0, le=60, description="One embeddings call; past it the search goes on without that signal."
    )
    embeddings_min_similarity: float = Field(
        0.3,
        ge=-1,
        le=1,
        description="The endpoint model's cosine below which an incident sharing no word with the query is not a"
        " match (each model has its own scale; the bundled model's is fixed in shared/memory/embeddings.py).",
    )

    embeddings_api_key: SecretStr | None = Field(
        None,
        description="The embeddings endpoint's key: the LLM's (FIREBREAK_LLM_API_KEY, else OPENAI_API_KEY), read "
        "when settings load; no variable of its own, so no second secret to deploy.",
    )

    @classmethod
    def values_from_env(cls, env: Mapping[str, str]) -> dict[str, Any]:
        values = super().values_from_env(env)
        values["embeddings_api_key"] = next((env[name] for name in _KEY_SETTINGS if env.get(name)), None)
        return values

    @property
    def endpoint_configured(self) -> bool:
        return bool(self.embeddings_endpoint and self.embeddings_model)
