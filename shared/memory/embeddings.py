"""Text to unit vectors for ranking by meaning: the model bundled in the wordllama wheel, or an endpoint.

LocalEmbedder loads wordllama's 256-dimension `l2_supercat` model from the package's own folder with downloads
disabled (WordLlama.load(cache_dir=<package folder>, disable_download=True): the weights and tokenizer ship
inside the wheel, so nothing is fetched), once per process and only when first asked, so a cold start that
serves no memory search pays nothing. EndpointEmbedder asks an OpenAI-compatible /embeddings endpoint
through the openai SDK. Both return L2-normalised float32 rows; `encode`/`decode` store a vector as base64
int8 (256 bytes for 256 dimensions; the ranking compares directions, so the scale is not kept).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from shared.memory.settings import MemorySettings

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 4_000  # an incident's title, signature, summary and tags; a query is at most 8,000 (cut here)


class Embedder(Protocol):
    """A model that turns texts into unit vectors; `model_id` names where its vectors are stored."""

    model_id: str
    # Below this cosine an incident that shares no word with the query is not a match (the model's own scale).
    min_similarity: float

    async def embed(self, texts: list[str]) -> np.ndarray | None:
        """One L2-normalised float32 row per text, or None when the model cannot answer now."""
        ...


def encode(vector: np.ndarray) -> str:
    peak = float(np.abs(vector).max()) or 1.0
    return base64.b64encode(np.round(vector / peak * 127).astype(np.int8).tobytes()).decode("ascii")


def decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.int8).astype(np.float32)


def normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def slug(name: str) -> str:
    """A model name as a store-safe id part."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "model"


@dataclass
class LocalEmbedder:
    """wordllama's bundled l2_supercat model (256 dimensions), loaded lazily, once, in a worker thread."""

    model_id: str = "wordllama-l2supercat-256"
    # Measured on our paraphrase sets: unrelated questions' best cosine stayed below 0.3, while a right
    # incident that shares no word with its query scored 0.35 or more.
    min_similarity: float = 0.35
    _model: Any = None
    _failed: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None and self._failed is None:
                try:
                    self._model = _load_wordllama()
                except Exception as exc:  # a missing or broken wheel: lexical search goes on alone
                    self._failed = f"{type(exc).__name__}: {exc}"
                    log.warning("debug memory: the bundled embedding model cannot be loaded (%s)", self._failed)
            return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    async def embed(self, texts: list[str]) -> np.ndarray | None:
        model = self._model or await asyncio.to_thread(self._load)
        if model is None:
            return None
        rows = model.embed([t[:MAX_TEXT_CHARS] for t in texts], norm=False)
        return normalise(np.asarray(rows, dtype=np.float32))


def _load_wordllama() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    # Deferred heavy dependency: 0.2 s to import (and a root-logger change), paid by the first semantic search only.
    import wordllama  # type: ignore[import-untyped]
    from wordllama import WordLlama

    # wordllama.inference calls logging.basicConfig(level=INFO) at import: undo that on the root logger.
    root.handlers[:], root.level = handlers, level
    return WordLlama.load(
        config="l2_supercat", dim=256, cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )


@dataclass
class EndpointEmbedder:
    """An OpenAI-compatible /embeddings endpoint. A failure (timeout, HTTP error) is logged without the key
    and answers None: the search goes on with the other signals."""

    client: AsyncOpenAI
    model: str
    min_similarity: float
    timeout_seconds: float
    model_id: str = ""

    def __post_init__(self) -> None:
        self.model_id = self.model_id or f"ep-{slug(self.model)}"

    @classmethod
    def from_settings(cls, settings: MemorySettings, api_key: str | None) -> EndpointEmbedder:
        # Deferred heavy optional dependency: openai takes over a second to import, needed only with an endpoint.
        from openai import AsyncOpenAI

        key = api_key or "not-needed"  # the SDK insists on one; an endpoint without auth ignores it
        client = AsyncOpenAI(
            base_url=settings.embeddings_endpoint,
            api_key=key,
            timeout=settings.embeddings_timeout_seconds,
            max_retries=0,
        )
        return cls(
            client=client,
            model=str(settings.embeddings_model),
            min_similarity=settings.embeddings_min_similarity,
            timeout_seconds=settings.embeddings_timeout_seconds,
        )

    async def embed(self, texts: list[str]) -> np.ndarray | None:
        try:
            async with asyncio.timeout(self.timeout_seconds):
                answer = await self.client.embeddings.create(
                    model=self.model, input=[t[:MAX_TEXT_CHARS] for t in texts]
                )
            rows = np.asarray([d.embedding for d in sorted(answer.data, key=lambda d: d.index)], dtype=np.float32)
        except Exception as exc:  # any failure of the endpoint: go on without it
            log.warning("debug memory: the embeddings endpoint did not answer (%s)", type(exc).__name__)
            return None
        if rows.ndim != 2 or len(rows) != len(texts) or rows.shape[1] == 0:
            log.warning("debug memory: the embeddings endpoint answered %s rows for %s texts", len(rows), len(texts))
            return None
        return normalise(rows)

    async def aclose(self) -> None:
        await self.client.close()


_LOCAL = LocalEmbedder()


def local_embedder() -> LocalEmbedder:
    """The process-wide bundled model (one load per worker, shared by every Deps)."""
    return _LOCAL


@dataclass
class Embedders:
    """The embedders a deployment uses, kept per Deps (deps.state["memory"]); closes the endpoint's client."""

    models: list[Embedder]
    _closers: list[Any] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> Embedders:
        """The bundled model unless turned off, and the endpoint when configured, whose key is the LLM's
        (`settings.embeddings_api_key`, read with the settings): no second secret to deploy."""
        models: list[Embedder] = []
        closers: list[Any] = []
        if settings.local_embeddings:
            models.append(local_embedder())
        if settings.endpoint_configured:
            key = settings.embeddings_api_key
            endpoint = EndpointEmbedder.from_settings(settings, key.get_secret_value() if key else None)
            models.append(endpoint)
            closers.append(endpoint)
        return cls(models, closers)

    async def aclose(self) -> None:
        for closer in self._closers:
            await closer.aclose()
