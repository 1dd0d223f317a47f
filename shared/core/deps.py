"""Dependency wiring: the stores, clients and clock a worker process shares, built once and passed in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from shared.core.settings import Settings
from shared.identity.api_keys import ApiKeyStore
from shared.identity.entra import EntraValidator
from shared.identity.resolver import PrincipalResolver
from shared.storage.blob import BlobStore
from shared.storage.cosmos import CosmosDatabase


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Deps:
    """Everything a handler may touch. Tests build one pointed at the local emulators."""

    settings: Settings
    cosmos: CosmosDatabase
    blobs: BlobStore
    api_keys: ApiKeyStore
    principals: PrincipalResolver
    clock: Callable[[], datetime] = utc_now
    started_monotonic: float = field(default_factory=time.monotonic)

    async def aclose(self) -> None:
        await self.cosmos.close()
        await self.blobs.close()


def build_deps(settings: Settings, *, cosmos_database: str | None = None, blob_container: str | None = None) -> Deps:
    """Wire the process's dependencies. Does no I/O: clients connect on first use."""
    cosmos = CosmosDatabase(settings, database=cosmos_database)
    api_keys = ApiKeyStore(cosmos)
    return Deps(
        settings=settings,
        cosmos=cosmos,
        blobs=BlobStore(settings, container=blob_container),
        api_keys=api_keys,
        principals=PrincipalResolver(settings, api_keys, EntraValidator(settings)),
    )
