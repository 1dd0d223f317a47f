"""Orchestration instances and their persistence: one JSON blob per instance in Azurite (or Azure Storage)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

TERMINAL = frozenset({"Completed", "Failed", "Terminated", "Canceled"})


@dataclass
class Instance:
    instance_id: str
    name: str
    status: str
    input: str | None
    created: str
    updated: str
    output: Any = None
    custom_status: Any = None
    history: list[dict[str, Any]] = field(default_factory=list)
    # Events the orchestrator has not seen yet (completions, timers, raised events); persisted so a
    # restart delivers them instead of re-running the work that produced them.
    inbox: list[dict[str, Any]] = field(default_factory=list)
    # Work scheduled but not yet answered, by task id: what a restart must resume.
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    parent: dict[str, Any] | None = None
    failure: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> Instance:
        return cls(**json.loads(text))


class InstanceStore:
    """Instances of one task hub in a blob container named after it; writes are whole-document."""

    def __init__(self, connection_string: str, hub: str) -> None:
        self._connection_string = connection_string
        self.container_name = f"durable-{hub.lower()}"[:63]
        self._service: Any = None
        self._container: Any = None

    async def _get(self) -> Any:
        if self._container is None:
            from azure.core.exceptions import ResourceExistsError
            from azure.storage.blob.aio import BlobServiceClient

            self._service = BlobServiceClient.from_connection_string(self._connection_string)
            self._container = self._service.get_container_client(self.container_name)
            with contextlib.suppress(ResourceExistsError):
                await self._container.create_container()
        return self._container

    @staticmethod
    def _blob(instance_id: str) -> str:
        return f"instances/{instance_id}.json"

    async def save(self, inst: Instance) -> None:
        container = await self._get()
        await container.upload_blob(self._blob(inst.instance_id), inst.to_json(), overwrite=True)

    async def load(self, instance_id: str) -> Instance | None:
        from azure.core.exceptions import ResourceNotFoundError

        container = await self._get()
        try:
            return Instance.from_json(await (await container.download_blob(self._blob(instance_id))).readall())
        except ResourceNotFoundError:
            return None

    async def load_all(self) -> list[Instance]:
        container = await self._get()
        found = []
        async for blob in container.list_blobs(name_starts_with="instances/"):
            data = await (await container.download_blob(blob.name)).readall()
            found.append(Instance.from_json(data))
        return found

    async def delete(self, instance_id: str) -> bool:
        from azure.core.exceptions import ResourceNotFoundError

        container = await self._get()
        try:
            await container.delete_blob(self._blob(instance_id))
            return True
        except ResourceNotFoundError:
            return False

    async def close(self) -> None:
        if self._service is not None:
            await self._service.close()
            self._service = self._container = None
