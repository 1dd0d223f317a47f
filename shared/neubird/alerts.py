"""An alert's sessions, found without a filter NeuBird does not document.

NeuBird documents no list filter by alert id (contract 4.6: `investigation_status`, `session_type`,
`create_time`, `incident_info.title`). The alert id is only in each row's `incident_info.id`. So:

1. [GAP, a shortcut] The list is first asked with the undocumented `incident_info.id ==` filter, one page. A
   server that refuses it (HTTP 400/422, or an envelope error 400) is remembered for the worker's life and not
   asked again; a server that ignores it answers unfiltered rows, which step 3 sorts out.
2. Otherwise, and whenever the shortcut found nothing: the documented `session_type == SESSION_TYPE_INCIDENT`
   filter, pages of 100, newest first, until a page holds the alert or comes back short: at most
   `PAGES` pages (the 500 most recent incident sessions) in the project searched first, `OTHER_PAGES` in others.
3. Every row is checked here: only an exact `incident_info.id` match counts, whatever the server filtered.

What it cannot know: an alert whose sessions are all older than the incident sessions searched looks new, and
a new session is started for it (the answer's message says how many sessions were searched).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from shared.core.errors import UpstreamError
from shared.neubird import projects
from shared.neubird.client import looks_like_id
from shared.neubird.connection import Connection, runtime
from shared.neubird.times import newest_first
from shared.neubird.vocabulary import INCIDENT
from shared.tools.deps import Deps

ALERT_ID_KEY = "incident_info.id"
PAGE = 100
PAGES = 5
OTHER_PAGES = 2
MAX_PROJECTS = 5
log = logging.getLogger("firebreak.neubird")


@dataclass
class AlertSearch:
    """Where an alert's sessions were looked for and what was found (this workspace's view, newest first)."""

    project: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    searched: int = 0  # incident sessions the documented scan read
    projects_searched: list[str] = field(default_factory=list)


def _of_alert(row: Any, alert_id: str) -> bool:
    info = row.get("incident_info") if isinstance(row, dict) else None
    return isinstance(info, dict) and info.get("id") == alert_id and looks_like_id(row.get("session_uuid"))


def _refused(exc: UpstreamError) -> bool:
    """NeuBird refused the request itself (a filter it does not know), not failed at it."""
    status = exc.details.get("status")
    code = str(exc.details.get("upstream_error_code", ""))
    return status in (400, 422) or code in ("400", "422")


async def _scan(
    conn: Connection, project: str, org: str, alert_id: str, filters: list[dict[str, str]], pages: int
) -> tuple[list[dict[str, Any]], int]:
    found: list[dict[str, Any]] = []
    read = 0
    for page in range(pages):
        rows = await conn.client.list_sessions(project, org, start=page * PAGE, limit=PAGE, filters=filters)
        read += len(rows)
        found += [r for r in rows if _of_alert(r, alert_id)]
        if len(rows) < PAGE or found:
            break
    return found, read


async def find_in_project(
    conn: Connection, deps: Deps, project: str, org: str, alert_id: str, pages: int = PAGES
) -> AlertSearch:
    """The alert's sessions in one project (see the module docstring for how)."""
    refused = runtime(deps).refused_filters
    memo = (conn.base_url.rstrip("/").lower(), ALERT_ID_KEY)
    found: list[dict[str, Any]] = []
    if memo not in refused:
        try:
            by_id = [{"key": ALERT_ID_KEY, "value": alert_id, "operator": "=="}]
            found, _ = await _scan(conn, project, org, alert_id, by_id, 1)
        except UpstreamError as exc:
            if not _refused(exc):
                raise
            refused.add(memo)
            log.info("neubird: the instance refuses the %s filter; using the documented ones", ALERT_ID_KEY)
    searched = 0
    if not found:
        incidents = [{"key": "session_type", "value": INCIDENT, "operator": "=="}]
        found, searched = await _scan(conn, project, org, alert_id, incidents, pages)
    # Sessions another workspace created here are not this caller's to reuse.
    mine = await conn.visible([str(r["session_uuid"]) for r in found])
    rows = newest_first([r for r in found if r["session_uuid"] in mine])
    return AlertSearch(project, rows, searched, [project])


async def find(conn: Connection, deps: Deps, alert_id: str, project_uuid: str | None) -> AlertSearch:
    """The alert's sessions: in `project_uuid` when given; else in the caller's default project, then in the other
    ready ones. Not found anywhere, the search names the project a new session goes to: the default (the
    caller's, the deployment's, or the only ready project); with several ready projects and no default, a
    VALIDATION_ERROR listing them."""
    org = await conn.organization()
    if project_uuid:
        return await find_in_project(conn, deps, project_uuid, org, alert_id)
    default = await projects.default_project(conn, deps)
    listed = (await projects.projects(conn, deps))[0]
    others = [str(p["uuid"]) for p in listed if projects.is_ready(p) and p["uuid"] != default][:MAX_PROJECTS]
    order = [default, *others] if default else others
    results: list[AlertSearch] = []
    if order:
        # The first project alone: it learns whether the instance takes the shortcut filter, so the others, searched
        # together, do not each try it.
        results.append(await find_in_project(conn, deps, order[0], org, alert_id, PAGES if default else OTHER_PAGES))
        if not results[0].rows:
            rest = order[1:]
            results += await asyncio.gather(
                *(find_in_project(conn, deps, p, org, alert_id, pages=OTHER_PAGES) for p in rest)
            )
    for result in results:
        if result.rows:
            return result
    if not default:
        raise projects.ambiguous(listed)
    first = results[0]
    first.searched = sum(r.searched for r in results)
    first.projects_searched = [r.project for r in results]
    return first
