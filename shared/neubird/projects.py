"""Projects: the cached list (5 minutes per caller and instance), the default, and choosing one for a call.

A project named like `SystemGlobalProject` is NeuBird's own and never shown (the CLI hides it too);
"inactive" means not ready (`ready` false and `project_state` not PROJECT_STATE_READY).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from shared.core.errors import NotFound, ValidationFailed
from shared.neubird.connection import Connection, describe
from shared.neubird.errors import neubird_error
from shared.neubird.models import Project
from shared.neubird.store import ProjectsCache
from shared.tools.deps import Deps

_SYSTEM = "systemglobalproject"


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
    if cache is not None and cache.base_url == conn.base_url and now - cache.fetched_at < ttl:
        return cache.items, True
    items = [p for p in await conn.client.list_projects() if isinstance(p, dict) and p.get("uuid")]
    items = [p for p in items if not is_system(p)]
    conn.state.projects = ProjectsCache(base_url=conn.base_url, fetched_at=now, items=items)
    if save:
        await conn.store.save_state(conn.state, now)
    return items, False


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
    """The project a call uses: the one given, else the default; several and no default is a clear error."""
    if project_uuid:
        return project_uuid
    chosen = await default_project(conn, deps)
    if chosen:
        return chosen
    raise ambiguous(await projects(conn, deps))


def ambiguous(listed: tuple[list[dict[str, Any]], bool]) -> ValidationFailed:
    names = [f"{p.get('name')} ({p.get('uuid')})" for p in listed[0] if is_ready(p)][:10]
    if not names:
        return neubird_error(
            ValidationFailed,
            "validation",
            "This NeuBird instance has no ready project to work in.",
            recovery=["Create or finish setting up a project in the NeuBird console, then call again."],
        )
    return neubird_error(
        ValidationFailed,
        "validation",
        "Several NeuBird projects are ready and no default is set: pass project_uuid.",
        details={"field": "project_uuid", "projects": names},
        recovery=[
            (
                "Pass project_uuid (neubird_list_projects lists them), or call neubird_configure_defaults with "
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
        await conn.store.save_state(conn.state, deps.clock())
    raise neubird_error(
        NotFound,
        "validation",
        f"No project {describe(ref)!r} on this NeuBird instance.",
        details={
            "field": "default_project_uuid",
            "projects": [f"{p.get('name')} ({p.get('uuid')})" for p in listed][:20],
        },
        recovery=["Pick a uuid or name from neubird_list_projects."],
    )
