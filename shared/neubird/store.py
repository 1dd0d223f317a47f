"""What the NeuBird tools remember per caller, in Cosmos `neubird` (one partition per workspace).

- the caller's state (one document per principal): the instance they switched to, their defaults and
  the project list last read from that instance (reused for `projects_cache_seconds`);
- completed investigations (one document per workspace, instance and session): results reused for
  `completed_cache_seconds` (Cosmos TTL removes them after that). Status is never cached;
- which project a session is in (one document per principal, instance and session), learnt when the caller
  created it, found it for an alert, or a tool found it by looking (locate.py); kept 90 days.

Ids are hashes of the principal or of (instance, session), so nothing a caller types becomes an id and
no read can cross workspaces: every read is a point read in the caller's partition. No token or password
is ever stored here: tokens live only in process memory (tokens.TokenCache).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from shared.core.errors import Conflict, NotFound
from shared.identity.models import Principal
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase

NEUBIRD_CONTAINER = ContainerSpec(
    "neubird",
    "/workspace_id",
    "NeuBird tools' per-caller state (instance, defaults, cached project list) and completed investigations "
    "reused for an hour; never credentials or tokens.",
    excluded_paths=("/projects/*", "/results/*"),
    default_ttl=-1,
)


# Cosmos documents end at 2 MB; a completed investigation larger than this is simply not cached.
MAX_CACHED_CHARS = 1_500_000
# A session's project does not change; the record only has to outlive the caller's interest in the session.
SESSION_PROJECT_TTL_SECONDS = 90 * 86400


class Defaults(BaseModel):
    """A caller's defaults (neubird_configure_defaults); None falls back to the deployment's settings."""

    project_uuid: str | None = None
    organization_uuid: str | None = None
    timeframe: str | None = None
    streaming_enabled: bool | None = None


class ProjectsCache(BaseModel):
    base_url: str
    fetched_at: datetime
    items: list[dict[str, Any]] = Field(default_factory=list)


class CallerState(BaseModel):
    """One principal's NeuBird state."""

    id: str
    workspace_id: str
    user_id: str
    kind: str = "state"
    base_url: str | None = None  # None: the deployment's NEUBIRD_BASE_URL
    defaults: Defaults = Field(default_factory=Defaults)
    projects: ProjectsCache | None = None
    updated_at: datetime | None = None
    # Whether the document exists (it was read, or written since): the first write creates it in one request.
    _stored: bool = PrivateAttr(False)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def state_id(principal: Principal) -> str:
    return "state-" + _digest(principal.workspace_id, principal.user_id)


def completed_id(base_url: str, session_uuid: str) -> str:
    return "done-" + _digest(base_url.lower(), session_uuid)


def session_project_id(principal: Principal, base_url: str, session_uuid: str) -> str:
    instance = base_url.rstrip("/").lower()
    return "where-" + _digest(principal.workspace_id, principal.user_id, instance, session_uuid.lower())


class NeubirdStore:
    def __init__(self, cosmos: CosmosDatabase) -> None:
        self._cosmos = cosmos

    async def _container(self) -> CosmosContainer:
        return await self._cosmos.container(NEUBIRD_CONTAINER.name)

    async def state(self, principal: Principal) -> CallerState:
        """The caller's state (a fresh one when none was saved, or when the stored one no longer parses)."""
        container = await self._container()
        doc = await container.read(state_id(principal), principal.workspace_id)
        if doc is not None and doc.get("user_id") == principal.user_id:
            try:
                found = CallerState.model_validate(doc)
                found._stored = True
                return found
            except ValidationError:
                # Written by an older shape: start again rather than fail every tool (and drop it, so the
                # next save creates the document whole instead of patching fields into one that never parses).
                await container.delete(state_id(principal), principal.workspace_id)
        return CallerState(id=state_id(principal), workspace_id=principal.workspace_id, user_id=principal.user_id)

    async def save_state(self, state: CallerState, now: datetime, fields: tuple[str, ...]) -> None:
        """Write only `fields` of the caller's state (paths like "projects" or "defaults.timeframe").

        A patch, not a whole-document upsert: one call refreshing the project list must not write back the
        defaults it read earlier over a change another call of the same caller made meanwhile (lost update).
        The first write of a caller creates the document whole.
        """
        state.updated_at = now
        dumped = state.model_dump(mode="json")
        ops: list[dict[str, Any]] = [{"op": "set", "path": "/updated_at", "value": dumped["updated_at"]}]
        for name in fields:
            value: Any = dumped
            for part in name.split("."):
                value = value[part]
            ops.append({"op": "set", "path": "/" + name.replace(".", "/"), "value": value})
        container = await self._container()
        if not state._stored:
            try:
                await container.create(dumped)
                state._stored = True
                return
            except Conflict:  # another call created it first: apply ours on top
                pass
        try:
            await container.patch(state.id, state.workspace_id, ops)
        except NotFound:  # deleted since it was read
            await container.create(dumped)
        state._stored = True

    async def completed(
        self, workspace_id: str, base_url: str, session_uuid: str, now: datetime
    ) -> dict[str, Any] | None:
        """Cached results of a completed investigation, if still fresh."""
        doc = await (await self._container()).read(completed_id(base_url, session_uuid), workspace_id)
        if doc is None or doc.get("kind") != "completed" or doc.get("session_uuid") != session_uuid:
            return None
        try:
            expires = datetime.fromisoformat(str(doc.get("expires_at")))
        except ValueError:
            return None
        if expires <= now:
            return None
        results = doc.get("results")
        return results if isinstance(results, dict) else None

    async def drop_completed(self, workspace_id: str, base_url: str, session_uuid: str) -> None:
        """Forget a cached completed investigation (a new prompt in the session makes it stale)."""
        await (await self._container()).delete(completed_id(base_url, session_uuid), workspace_id)

    async def put_completed(
        self, workspace_id: str, base_url: str, session_uuid: str, results: dict[str, Any], now: datetime, ttl: int
    ) -> None:
        if ttl <= 0 or len(json.dumps(results, default=str)) > MAX_CACHED_CHARS:
            return  # too big for one document: the next read asks NeuBird again
        await (await self._container()).upsert(
            {
                "id": completed_id(base_url, session_uuid),
                "workspace_id": workspace_id,
                "kind": "completed",
                "session_uuid": session_uuid,
                "cached_at": now.isoformat(),
                "expires_at": (now + timedelta(seconds=ttl)).isoformat(),
                "results": results,
                "ttl": ttl + 60,
            }
        )

    async def session_project(self, principal: Principal, base_url: str, session_uuid: str) -> str | None:
        """The project this caller last learnt `session_uuid` is in, on that instance (None: not known)."""
        doc = await (await self._container()).read(
            session_project_id(principal, base_url, session_uuid), principal.workspace_id
        )
        if (
            doc is None
            or doc.get("kind") != "session_project"
            or doc.get("user_id") != principal.user_id
            or str(doc.get("session_uuid", "")).lower() != session_uuid.lower()
        ):
            return None
        project = doc.get("project_uuid")
        return project if isinstance(project, str) and project else None

    async def remember_session_project(
        self, principal: Principal, base_url: str, session_uuid: str, project_uuid: str, now: datetime
    ) -> None:
        await (await self._container()).upsert(
            {
                "id": session_project_id(principal, base_url, session_uuid),
                "workspace_id": principal.workspace_id,
                "user_id": principal.user_id,
                "kind": "session_project",
                "session_uuid": session_uuid,
                "project_uuid": project_uuid,
                "saved_at": now.isoformat(),
                "ttl": SESSION_PROJECT_TTL_SECONDS,
            }
        )

    async def forget_session_project(self, principal: Principal, base_url: str, session_uuid: str) -> None:
        await (await self._container()).delete(
            session_project_id(principal, base_url, session_uuid), principal.workspace_id
        )
