"""Which workspace a NeuBird session belongs to, when a workspace created it through Firebreak.

Every workspace of a deployment uses the deployment's one NeuBird account (and only workspaces
FIREBREAK_NEUBIRD_WORKSPACES admits). Sessions NeuBird made itself (incident sessions from alerts) are the
organisation's and every admitted workspace sees them. A session a workspace created here (a custom
investigation, or a session from an alert id) is recorded as that workspace's: other workspaces get NOT_FOUND
for it (the same answer as an unknown id), do not see it in lists, cannot send it follow-ups or read its
reports. The record lives in `neubird_sessions`, one partition per instance, id = the session id, so a check
is a point read and a list page is one query inside one partition.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime

from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase, valid_id

SESSIONS_CONTAINER = ContainerSpec(
    "neubird_sessions",
    "/instance",
    "The workspace that created each NeuBird session through Firebreak (one partition per NeuBird instance); "
    "other workspaces get NOT_FOUND for it.",
    default_ttl=-1,
)
# Records outlive the sessions' usefulness; a year keeps the partition from growing without end.
_TTL_SECONDS = 365 * 86400


def _key(session_uuid: str) -> str:
    # Ids are compared without case: a caller must not reach another workspace's session by changing its
    # case, whether or not NeuBird itself ignores case.
    return session_uuid.lower()


def instance_key(base_url: str) -> str:
    # One key per backend however the URL was spelt: case, a trailing slash, an explicit default port.
    spelt = re.sub(r"^(https://[^/]+):443(?=/|$)", r"\1", base_url.strip().rstrip("/").lower())
    return "inst-" + hashlib.sha256(spelt.encode()).hexdigest()[:32]


class SessionOwners:
    def __init__(self, cosmos: CosmosDatabase, base_url: str) -> None:
        self._cosmos, self._instance = cosmos, instance_key(base_url)

    async def _container(self) -> CosmosContainer:
        return await self._cosmos.container(SESSIONS_CONTAINER.name)

    async def claim(self, session_uuid: str, workspace_id: str, now: datetime) -> None:
        """Record a session this workspace just created (NeuBird mints a new id for every session)."""
        if not valid_id(session_uuid):
            return
        await (await self._container()).upsert(
            {
                "id": _key(session_uuid),
                "instance": self._instance,
                "workspace_id": workspace_id,
                "created_at": now.isoformat(),
                "ttl": _TTL_SECONDS,
            }
        )

    async def owner(self, session_uuid: str) -> str | None:
        if not valid_id(session_uuid):
            return None
        doc = await (await self._container()).read(_key(session_uuid), self._instance)
        owner = (doc or {}).get("workspace_id")
        return owner if isinstance(owner, str) else None

    async def owners(self, session_uuids: Iterable[str]) -> dict[str, str]:
        """Owners of those of `session_uuids` that have one (one query inside the instance's partition)."""
        asked = {s for s in session_uuids if valid_id(s)}
        ids = sorted({_key(s) for s in asked})
        if not ids:
            return {}
        docs = await (await self._container()).query_all(
            self._instance, "ARRAY_CONTAINS(@ids, c.id)", {"@ids": ids}, limit=len(ids)
        )
        owner = {str(d["id"]): str(d["workspace_id"]) for d in docs if isinstance(d.get("workspace_id"), str)}
        return {s: owner[_key(s)] for s in asked if _key(s) in owner}
