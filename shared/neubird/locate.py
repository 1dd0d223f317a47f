"""Which project a session is in, when the caller did not say.

The spec makes `project_uuid` optional and auto-detected for status, inspect, summaries and follow-ups, while
NeuBird wants it on every call and has no "which project holds this session" route. So, in order:

1. the project the caller passed;
2. the project this caller learnt the session is in (store.py: remembered per principal and instance, when
   they created the session, found it for an alert, or a tool found it as below);
3. looking: inspect the session in the caller's default project (theirs, else the deployment's), then in the
   instance's other projects, ready ones first (at most `MAX_PROBED`). The first project that does not answer
   NOT_FOUND holds it, and is remembered. None does: NOT_FOUND, worded as for any unknown session (so it tells
   nothing about sessions of other workspaces).

A new investigation has no session to look for: it goes to `projects.choose` (the default, else the only ready
project, else a VALIDATION_ERROR listing the projects).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from shared.core.errors import NotFound
from shared.neubird import projects
from shared.neubird.connection import Connection, unknown_session
from shared.tools.deps import Deps

MAX_PROBED = 10
log = logging.getLogger("firebreak.neubird")


@dataclass
class Located:
    """The session's project, and the inspect answer read while looking for it (None when nothing was read)."""

    project: str
    inspected: dict[str, Any] | None = None


async def remember(conn: Connection, deps: Deps, session_uuid: str, project: str) -> None:
    """Note for this caller that `session_uuid` is in `project` (a failed write costs a later call a search)."""
    try:
        await conn.store.remember_session_project(conn.principal, conn.base_url, session_uuid, project, deps.clock())
    except Exception:
        log.warning("neubird: a session's project could not be remembered", exc_info=True)


async def _candidates(conn: Connection, deps: Deps) -> list[str]:
    listed = (await projects.projects(conn, deps))[0]
    default = projects.configured_default(conn)
    ready = [str(p["uuid"]) for p in listed if projects.is_ready(p)]
    rest = [str(p["uuid"]) for p in listed if not projects.is_ready(p)]
    return list(dict.fromkeys([*([default] if default else []), *ready, *rest]))


async def session_project(conn: Connection, deps: Deps, session_uuid: str, given: str | None) -> Located:
    """The project of `session_uuid` for this caller (see the module docstring); NOT_FOUND when no project holds
    it. The caller checked first that the session is not another workspace's (`conn.check_session`)."""
    if given:
        return Located(given)
    remembered = await conn.store.session_project(conn.principal, conn.base_url, session_uuid)
    if remembered:
        return Located(remembered)
    org = await conn.organization()
    for project in (await _candidates(conn, deps))[:MAX_PROBED]:
        try:
            found = await conn.client.inspect(session_uuid, project, org)
        except NotFound:  # not in this project (or the project is gone): look in the next
            continue
        await remember(conn, deps, session_uuid, project)
        return Located(project, found)
    raise unknown_session(session_uuid)
