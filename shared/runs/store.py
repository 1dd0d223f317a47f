"""The `runs` container: run records and their encrypted secrets, read by id only."""

from __future__ import annotations

from typing import Any

from shared.core.errors import Conflict
from shared.runs.models import RunDoc
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase

SECRETS_PREFIX = "secrets-"

# Keyed by run id (= the Durable instance id, minted server-side) rather than by workspace: the
# orchestration that claims a record knows only its own instance id and must not take a workspace
# from its input, so "load by instance id" has to be a point read. The owner fields are checked in
# code on every caller-facing read instead. Secrets documents (`secrets-<run id>`) live here too,
# with a per-item ttl (TTL on, no default).
RUNS_CONTAINER = ContainerSpec(
    "runs",
    "/id",
    "Durable run records: owner, validated plan, state and output; encrypted run secrets with a short TTL.",
    excluded_paths=("/plan/*", "/output/*", "/ciphertext/?"),
    default_ttl=-1,
)


class RunStore:
    def __init__(self, container: CosmosContainer) -> None:
        self.c = container

    @classmethod
    async def open(cls, cosmos: CosmosDatabase) -> RunStore:
        return cls(await cosmos.container(RUNS_CONTAINER.name))

    async def create(self, doc: RunDoc) -> None:
        await self.c.create(doc.model_dump(mode="json", exclude_none=True))

    async def load(self, run_id: str) -> tuple[RunDoc, str] | None:
        """The record and its etag, or None. Partition key = id: a point read that trusts nothing but the id."""
        raw = await self.c.read(run_id, run_id)
        if raw is None or raw.get("type") != "run":
            return None
        return RunDoc.model_validate(raw), raw.get("_etag", "")

    async def replace(self, doc: RunDoc, etag: str) -> bool:
        """Write `doc` only if the record is unchanged since it was read with `etag`; False when it changed."""
        try:
            await self.c.replace(doc.model_dump(mode="json", exclude_none=True), etag=etag)
        except Conflict:
            return False
        return True

    # -- secrets ---------------------------------------------------------------------------------
    @staticmethod
    def secrets_id(run_id: str) -> str:
        return SECRETS_PREFIX + run_id

    async def put_secrets(
        self, run_id: str, workspace_id: str, sealed: dict[str, str], expires_at: str, ttl_seconds: int
    ) -> str:
        sid = self.secrets_id(run_id)
        await self.c.create(
            {
                "id": sid,
                "type": "run_secrets",
                "run_id": run_id,
                "workspace_id": workspace_id,
                "expires_at": expires_at,
                "ttl": ttl_seconds,
                **sealed,
            }
        )
        return sid

    async def get_secrets(self, secrets_id: str) -> dict[str, Any] | None:
        raw = await self.c.read(secrets_id, secrets_id)
        return raw if raw is not None and raw.get("type") == "run_secrets" else None

    async def delete_secrets(self, secrets_id: str) -> None:
        await self.c.delete(secrets_id, secrets_id)
