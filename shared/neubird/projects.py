"""Projects: the cached list (5 minutes per caller and instance), the default, and choosing one for a call.

A project named like `SystemGlobalProject` is NeuBird's own and never shown (the CLI hides it too);
"inactive" means not ready (`ready` false and `project_state` not PROJECT_STATE_READY).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from shared.core.errors import NotFound, ValidationFailed
from shared.neubird.connection import Connection, describe
from shared.neubird.errors import neubird_error
from shared.neubird.models import Project
from shared.neubird.store import ProjectsCache
from shared.tools.deps import Deps

_SYSTEM = "systemglobalproject"
MAX_PROJECTS = 500
_FIELD_CHARS = 1000
_PROJECT_FIELDS = (
    "uuid",
    "name",
    "description",
    "project_state",
    "sync_state",
    "training_state",
    "create_time",
    "update_time",
)
log = logging.getLogger("firebreak.neubird")


def is_system(p: dict[str, Any]) -> bool:
    return _SYSTEM in str(p.get("name", "")).lower()


def is_ready(p: dict[str, Any]) -> bool:
    return p.get("ready") is True or p.get("project_state") == "PROJECT_STATE_READY"


def view(p: dict[str, Any], default: str | None) -> Project:
    uuid = str(p.get("uuid", ""))
    return Project(
        uuid=uuid,
        name=str(p.get("name", "")),
        description=str(p.get("description") or ""),
        state=str(p.get("project_state") or ("PROJECT_STATE_READY" if p.get("ready") is True else "")),
        sync_state=str(p.get("sync_state") or ""),
        training_state=str(p.get("training_state") or ""),
        created_at=str(p.get("create_time") or ""),
        updated_at=str(p.get("update_time") or ""),
        ready=is_ready(p),
        is_default=bool(default) and uuid == default,
    )


async def projects(conn: Connection, deps: Deps, *, save: bool = True) -> tuple[list[dict[str, Any]], bool]:
    """(the instance's projects without the system one, whether they came from the cache).

    A fetched list is kept in the caller's state and saved, unless `save` is False: the caller saves the state
    itself right after (one Cosmos write instead of two)."""
    now = deps.clock()
    cache = conn.state.projects
    ttl = timedelta(seconds=conn.settings.projects_cache_seconds)
    if cache is not None and cache.base_url.lower() == conn.base_url.lower() and now - cache.fetched_at < ttl:
        return cache.items, True
    listed = [p for p in await conn.client.list_projects() if isinstance(p, dict) and isinstance(p.get("uuid"), str)]
    items = [_kept(p) for p in listed if not is_system(p)][:MAX_PROJECTS]
    conn.state.projects = ProjectsCache(base_url=conn.base_url, fetched_at=now, items=items)
    if save:
        try:
            await conn.store.save_state(conn.state, now, ("projects",))
        except Exception:  # a cache that cannot be written costs the next call a fetch, not this call its answer
            log.warning("neubird: the project list could not be cached", exc_info=True)
    return items, False


def _kept(p: dict[str, Any]) -> dict[str, Any]:
    """The fields `view` shows, each cut: what the caller's state document holds (Cosmos documents end at 2 MB)."""
    kept: dict[str, Any] = {k: str(p[k])[:_FIELD_CHARS] for k in _PROJECT_FIELDS if isinstance(p.get(k), str)}
    if isinstance(p.get("ready"), bool):
        kept["ready"] = p["ready"]
    return kept


def configured_default(conn: Connection) -> str | None:
    return conn.state.defaults.project_uuid or conn.settings.default_project_uuid


async def default_project(conn: Connection, deps: Deps) -> str | None:
    """The caller's default, else the deployment's, else the only ready project (None when that is ambiguous)."""
    chosen = configured_default(conn)
    if chosen:
        return chosen
    ready = [p for p in (await projects(conn, deps))[0] if is_ready(p)]
    return str(ready[0]["uuid"]) if len(ready) == 1 else None


async def choose(conn: Connection, deps: Deps, project_uuid: str | None) -> str:
    """The project a call that starts or lists something uses: the one given, else the caller's default, else the
    deployment's, else the only ready project; several ready projects and no default is a VALIDATION_ERROR that
    lists them (name and uuid)."""
    if project_uuid:
        return project_uuid
    chosen = await default_project(conn, deps)
    if chosen:
        return chosen
    raise ambiguous((await projects(conn, deps))[0])


def choices(listed: list[dict[str, Any]], limit: int = 20) -> list[dict[str, str]]:
    """The ready projects as an error lists them: [{name, uuid}]."""
    return [{"name": str(p.get("name", "")), "uuid": str(p.get("uuid", ""))} for p in listed if is_ready(p)][:limit]


def ambiguous(listed: list[dict[str, Any]]) -> ValidationFailed:
    ready = choices(listed)
    if not ready:
        return neubird_error(
            ValidationFailed,
            "validation",
            "This NeuBird instance has no ready project to work in.",
            recovery=["Create or finish setting up a project in the NeuBird console, then call again."],
        )
    named = ", ".join(f"{p['name']} ({p['uuid']})" for p in ready)
    return neubird_error(
        ValidationFailed,
        "validation",
        f"Several NeuBird projects are ready and no default is set: pass project_uuid, one of {named}.",
        details={"field": "project_uuid", "projects": ready},
        recovery=[
            (
                "Pass project_uuid (one of details.projects), or call neubird_configure_defaults with "
                "default_project_uuid once so later calls use it."
            )
        ],
    )


async def resolve(conn: Connection, deps: Deps, ref: str) -> dict[str, Any]:
    """A project by UUID or case-insensitive name, from the instance's list (NOT_FOUND names the choices).

    Found, the caller saves the state (with a freshly fetched list in it); not found, the list is saved here."""
    listed, cached = await projects(conn, deps, save=False)
    for p in listed:
        if str(p.get("uuid")) == ref:
            return p
    by_name = [p for p in listed if str(p.get("name", "")).lower() == ref.lower()]
    if len(by_name) == 1:
        return by_name[0]
    if not cached:
        await conn.store.save_state(conn.state, deps.clock(), ("projects",))
    raise neubird_error(
        NotFound,
        "validation",
        f"No project {describe(ref)!r} on this NeuBird instance.",
        details={
            "field": "default_project_uuid",
            "projects": [{"name": str(p.get("name", "")), "uuid": str(p.get("uuid", ""))} for p in listed][:20],
        },
        recovery=["Pick a uuid or name from neubird_list_projects."],
    )
