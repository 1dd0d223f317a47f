"""What the debug memory keeps per process between calls (deps.state["memory"]): its embedders and the
vector shards it has read. A fresh Deps (a test's) starts cold; aclose closes the endpoint's client."""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.memory.embeddings import Embedders
from shared.memory.settings import MemorySettings
from shared.memory.vectors import VectorCache
from shared.tools.deps import Deps

STATE_KEY = "memory"


@dataclass
class MemoryRuntime:
    embedders: Embedders
    vectors: VectorCache = field(default_factory=VectorCache)

    async def aclose(self) -> None:
        await self.embedders.aclose()


def runtime_of(deps: Deps) -> MemoryRuntime:
    found = deps.state.get(STATE_KEY)
    if not isinstance(found, MemoryRuntime):
        found = deps.state[STATE_KEY] = MemoryRuntime(Embedders.from_settings(deps.settings.section(MemorySettings)))
    return found
