"""What every handler may touch: the stores, clients, clock and declared checks a worker process shares.

Built once per process by the composition root (`shared.app.wiring.build_deps`) and passed in; tests
build one pointed at the local emulators. The LLM client is one of these: `deps.llm()` creates it on first
use and `deps.aclose()` closes it, so every activity and chat turn of a process shares its connections.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from shared.core.llm import LlmClient, LlmProvider
from shared.core.settings import Settings
from shared.identity.api_keys import ApiKeyStore
from shared.identity.resolver import PrincipalResolver
from shared.storage.blob import BlobStore
from shared.storage.cosmos import CosmosDatabase

if TYPE_CHECKING:
    from shared.tools.checks import Check
    from shared.tools.registry import ToolRegistry


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Deps:
    """Everything a handler may touch."""

    settings: Settings
    cosmos: CosmosDatabase
    blobs: BlobStore
    api_keys: ApiKeyStore
    principals: PrincipalResolver
    clock: Callable[[], datetime] = utc_now
    started_monotonic: float = field(default_factory=time.monotonic)
    # Every capability's checks, collected by the composition root (health and diagnostics run them).
    checks: tuple[Check, ...] = ()
    # Every capability's tools, so one capability can use another's in-process (by name, as a caller
    # would, never by import): investigations ask debug memory's ranked_solutions this way.
    tools: ToolRegistry | None = None
    # Process-wide state a capability keeps between calls (caches such as NeuBird's tokens), keyed by the
    # capability's name; it lives and dies with this Deps, so a test's fresh Deps starts cold.
    state: dict[str, Any] = field(default_factory=dict)
    # The platform's LLM client (`llm()`); a copy of these Deps shares it, as it shares `state`.
    llm_provider: LlmProvider = field(default_factory=LlmProvider, repr=False)

    def llm(self) -> LlmClient | None:
        """The process's one LLM client (settings.llm), created on first use; None when no model is configured.

        Callers never close it: it lives as long as this Deps, whose `aclose` closes it.
        """
        return self.llm_provider.client(self.settings)

    async def aclose(self) -> None:
        await self.llm_provider.aclose()
        for kept in list(self.state.values()):  # a capability's pooled clients
            closer = getattr(kept, "aclose", None)
            if closer is not None:
                await closer()
        await self.cosmos.close()
        await self.blobs.close()
