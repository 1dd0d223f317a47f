"""How a Cosmos container is declared (name, partition key, indexing, TTL, purpose) and how they are collected."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    partition_key: str
    purpose: str
    # Large free-text fields are never filtered on; leaving them out of the index saves RU on every write.
    excluded_paths: tuple[str, ...] = field(default=())
    # -1 turns Cosmos TTL on without a default, so items expire only where they set their own `ttl`.
    default_ttl: int | None = None

    @property
    def pk_field(self) -> str:
        return self.partition_key.lstrip("/")

    def indexing_policy(self) -> dict[str, Any]:
        return {
            "indexingMode": "consistent",
            "automatic": True,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": '/"_etag"/?'}] + [{"path": p} for p in self.excluded_paths],
        }


# Partition keys follow the principal: data is reachable only through its workspace (or user / chat session),
# so no query ever crosses principals and every read is single-partition. Each capability declares its
# own containers (its `capability.py`); the composition root collects them into one catalogue, which
# CosmosDatabase, the README tables and infra read.


def catalogue_of(specs: Iterable[ContainerSpec]) -> dict[str, ContainerSpec]:
    """Containers by name; two declarations of one name are an error (two capabilities would share data)."""
    by_name: dict[str, ContainerSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise ValueError(f"container {spec.name!r} is declared twice")
        by_name[spec.name] = spec
    return by_name
