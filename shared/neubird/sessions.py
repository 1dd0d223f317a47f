"""Reading sessions: list (filters, pages, compact rows, hints), inspect, reports, summary, incident report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from shared.core.errors import ValidationFailed
from shared.neubird import locate, projects, shapes
from shared.neubird.client import as_object
from shared.neubird.connection import Connection
from shared.neubird.errors import neubird_error
from shared.neubird.instances import console_url
from shared.neubird.models import SessionDetails, SessionList, SessionReports, SessionSummary
from shared.neubird.stream import state_from_prompt_cycle, strip_html
from shared.neubird.times import newest_first
from shared.neubird.vocabulary import (
    INCIDENT,
    NOT_STARTED,
    STATUS_NAMES,
    STATUSES,
    TYPE_NAMES,
    TYPES,
    enum_value,
)
from shared.tools.deps import Deps

COMPACT_ABOVE = 10


def session_link(base_url: str, project_uuid: str, session_uuid: str) -> str:
    return f"{console_url(base_url)}/console/project/{project_uuid}/session/{session_uuid}?tab=results"


def _bound(value: str, field: str) -> tuple[str, datetime]:
    """(what NeuBird is sent, the instant for ordering checks): a date stays a date, a datetime becomes UTC."""
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return day.isoformat(), datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text)
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise neubird_error(
            ValidationFailed,
            "validation",
            f"{field}: {value!r} is not an ISO 8601 date or datetime.",
            details={"field": field, "examples": ["2026-11-01", "2026-11-01T08:00:00Z"]},
            recovery=["Pass a date like 2026-11-01 or a datetime like 2026-11-01T08:00:00Z."],
        ) from None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ"), moment


def _row(s: dict[str, Any]) -> dict[str, Any]:
    """The spec's session row (its fields only, each of its type), plus NeuBird's status and type."""
    row: dict[str, Any] = {
        "session_uuid": str(s.get("session_uuid", "")),
        "name": shapes.text(s.get("name")) or "",
        "create_time": shapes.text(s.get("create_time")) or "",
        "last_update": shapes.text(s.get("last_update")) or "",
        "prompt_cycle_count": shapes.prompt_cycle_count(s),
        "investigation_status": shapes.text(s.get("investigation_status")),
        "session_type": shapes.text(s.get("session_type")),
    }
    info = shapes.incident_info(s.get("incident_info"))
    if info is not None:
        row["incident_info"] = info
    return row


def _compact(row: dict[str, Any]) -> dict[str, Any]:
    info = row.get("incident_info") or {}
    out = {
        "session_uuid": row["session_uuid"],
        "name": row["name"][:80],
        "create_time": row["create_time"],
        "status": str(row.get("investigation_status") or "").removeprefix("INVESTIGATION_STATUS_").lower() or None,
    }
    if info:
        out["incident_id"] = info.get("id")
        out["priority"] = info.get("priority")
    return out


def _grouped(s: dict[str, Any]) -> bool:
    info = s.get("incident_info")
    group = info.get("grouped_incidents") if isinstance(info, dict) else None
    return isinstance(group, dict) and bool(group.get("id"))


def _title_matches(s: dict[str, Any], term: str) -> bool:
    info = s.get("incident_info")
    title = info.get("title") if isinstance(info, dict) else None
    return term.lower() in str(title or "").lower()


@dataclass
class SessionQuery:
    """The list filters as NeuBird is sent them, and as `filters_applied` echoes them."""

    filters: list[dict[str, str]] = field(default_factory=list)
    applied: dict[str, Any] = field(default_factory=dict)
    status: str | None = None
    kind: str | None = None
    term: str = ""

    def add(self, key: str, value: str, operator: str, name: str) -> None:
        self.filters.append({"key": key, "value": value, "operator": operator})
        self.applied[name] = value

    def matches(self, s: dict[str, Any]) -> bool:
        """Applied again to the rows: a server that ignores a filter must not widen the answer."""
        return (
            (not self.term or _title_matches(s, self.term))
            and s.get("investigation_status") in (None, self.status or s.get("investigation_status"))
            and s.get("session_type") in (None, self.kind or s.get("session_type"))
        )


def _status_and_type(args: Any) -> tuple[str | None, str | None]:
    status = (
        enum_value(args.investigation_status, STATUSES, STATUS_NAMES, "investigation_status")
        if args.investigation_status
        else None
    )
    kind = enum_value(args.session_type, TYPES, TYPE_NAMES, "session_type") if args.session_type else None
    if not args.only_uninvestigated:
        return status, kind
    if status not in (None, NOT_STARTED) or kind not in (None, INCIDENT):
        raise neubird_error(
            ValidationFailed,
            "validation",
            "only_uninvestigated means investigation_status NOT_STARTED and session_type INCIDENT; "
            "it cannot be combined with other values of those two.",
            details={"field": "only_uninvestigated"},
            recovery=["Drop only_uninvestigated or the conflicting investigation_status / session_type."],
        )
    return NOT_STARTED, INCIDENT


def session_query(args: Any) -> SessionQuery:
    q = SessionQuery()
    q.status, q.kind = _status_and_type(args)
    if q.status:
        q.add("investigation_status", q.status, "==", "investigation_status")
    if q.kind:
        q.add("session_type", q.kind, "==", "session_type")
    moments: dict[str, datetime] = {}
    for name, op in (("date_from", "gte"), ("date_to", "lte")):
        if raw := getattr(args, name):
            sent, moments[name] = _bound(raw, name)
            q.add("create_time", sent, op, name)
    if len(moments) == 2 and moments["date_from"] > moments["date_to"]:
        raise neubird_error(
            ValidationFailed,
            "validation",
            f"date_from ({q.applied['date_from']}) is after date_to ({q.applied['date_to']}).",
            details={"field": "date_from"},
            recovery=["Swap date_from and date_to."],
        )
    q.term = (args.search_term or "").strip()
    if q.term:
        q.add("incident_info.title", q.term, "in", "search_term")
    if args.only_uninvestigated:
        q.applied["only_uninvestigated"] = True
    if args.hide_grouped_incidents:
        q.applied["hide_grouped_incidents"] = True
    return q


async def list_sessions(conn: Connection, deps: Deps, args: Any) -> SessionList:
    q = session_query(args)  # bad filters are refused before any call
    project = await projects.choose(conn, deps, args.project_uuid)
    org = args.organization_uuid or await conn.organization()
    # One row more than asked answers "is there another page?" without a total (v1 returns none).
    raw = await conn.client.list_sessions(
        project, org, start=(args.page - 1) * args.limit, limit=args.limit + 1, filters=q.filters
    )
    has_more = len(raw) > args.limit
    # Pages are NeuBird's (offset `limit` rows each); of a page's rows, those another workspace created here are
    # not shown, only counted, so pages never shift and the caller knows why a page is short.
    page = [s for s in raw[: args.limit] if isinstance(s, dict) and isinstance(s.get("session_uuid"), str)]
    visible = await conn.visible([s["session_uuid"] for s in page])
    hidden = sum(1 for s in page if s["session_uuid"] not in visible)
    rows = [s for s in page if s["session_uuid"] in visible and q.matches(s)]
    rows = newest_first(rows)  # by instant: RFC 3339 text with offsets does not sort as time
    if args.hide_grouped_incidents:
        rows = [s for s in rows if not _grouped(s)]
    full = [_row(s) for s in rows]
    compact = args.compact if args.compact is not None else len(full) > COMPACT_ABOVE
    out = SessionList(
        sessions=[_compact(r) for r in full] if compact else full,
        page=args.page,
        limit=args.limit,
        count=len(full),
        hidden_count=hidden,
        project_uuid=project,
        compact_mode=compact,
        has_more=has_more,
        filters_applied=q.applied,
    )
    if compact:
        out.compact_hint = (
            f"Compact mode ({len(full)} results): each row has only the id, name, time, status and incident. "
            "Call again with compact=false for full rows, or neubird_inspect_session for one session."
        )
    if has_more:
        out.pagination_hint = f"More sessions match: call again with page={args.page + 1} (limit {args.limit})."
    if q.status == NOT_STARTED and full:
        example = next((r for r in full if (r.get("incident_info") or {}).get("id")), None)
        alert = (example or {}).get("incident_info", {}).get("id")
        out.investigation_hint = (
            "These incidents have not been investigated yet. Start one with neubird_investigate_alert "
            + (f"(alert_id {alert!r})." if alert else "and the row's incident id.")
        )
    return out


def _cache_key(project: str, session_uuid: str) -> str:
    return f"{project}/{session_uuid}"


async def forget_completed(conn: Connection, session_uuid: str, project: str) -> None:
    """Drop the session's cached completed inspect: a prompt was just sent to it, so it no longer holds."""
    await conn.store.drop_completed(conn.principal.workspace_id, conn.base_url, _cache_key(project, session_uuid))


async def inspect_raw(
    conn: Connection,
    deps: Deps,
    session_uuid: str,
    project: str,
    org: str,
    *,
    fresh: bool = False,
    read: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The inspect response; a completed one is reused from the cache for completed_cache_seconds.

    `fresh` skips the cached copy (and replaces it when the answer is complete): after a prompt of ours ended.
    `read`: an inspect answer this call already has (it is used, and cached when complete).
    """
    key = _cache_key(project, session_uuid)
    if not fresh and read is None:
        cached = await conn.store.completed(conn.principal.workspace_id, conn.base_url, key, deps.clock())
        if cached is not None:
            return cached
    found = read if read is not None else await conn.client.inspect(session_uuid, project, org)
    if is_completed(found):
        await conn.store.put_completed(
            conn.principal.workspace_id,
            conn.base_url,
            key,
            {"session_info": found.get("session_info") or {}, "prompt_cycle": found.get("prompt_cycle") or []},
            deps.clock(),
            conn.settings.completed_cache_seconds,
        )
    return found


def cycles(found: dict[str, Any]) -> list[dict[str, Any]]:
    raw = found.get("prompt_cycle")
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def is_completed(found: dict[str, Any]) -> bool:
    info = as_object(found.get("session_info"))
    listed = cycles(found)
    last = listed[-1] if listed else {}
    if last.get("status") == "PROMPT_STATUS_ERROR":
        return False
    if listed and last.get("status") != "PROMPT_STATUS_COMPLETED":
        return False
    return bool(listed) and info.get("investigation_status") != "INVESTIGATION_STATUS_IN_PROGRESS"


async def inspect(conn: Connection, deps: Deps, args: Any) -> SessionDetails:
    await conn.check_session(args.session_uuid)
    located = await locate.session_project(conn, deps, args.session_uuid, args.project_uuid)
    project = located.project
    org = args.organization_uuid or await conn.organization()
    found = await inspect_raw(conn, deps, args.session_uuid, project, org, read=located.inspected)
    info = as_object(found.get("session_info"))
    out_cycles = []
    for c in cycles(found):
        results = state_from_prompt_cycle(c).results.to_dict()
        out_cycles.append(
            {
                "id": shapes.text(c.get("id")),
                "status": shapes.text(c.get("status")),
                "create_time": shapes.text(c.get("create_time")),
                "request": shapes.prompt_request(c.get("request")),
                **results,
            }
        )
    return SessionDetails(
        session_info={
            "session_uuid": args.session_uuid,
            "name": shapes.text(info.get("name")) or "",
            "create_time": shapes.text(info.get("create_time")) or "",
            "last_update": shapes.text(info.get("last_update")) or "",
            "investigation_status": shapes.text(info.get("investigation_status")),
            "session_type": shapes.text(info.get("session_type")),
        },
        prompt_cycles=out_cycles,
        project_uuid=project,
        session_link=session_link(conn.base_url, project, args.session_uuid),
        next_action=(
            "Ask a follow-up with neubird_continue_investigation (session_uuid), or get scores with "
            "neubird_get_session_summary."
            if out_cycles
            else "No prompt has run in this session yet: start one with neubird_continue_investigation."
        ),
    )


def _linked_session(row: dict[str, Any]) -> str:
    link = str(row.get("session_link") or "")
    tail = link.split("/session/", 1)[1] if "/session/" in link else ""
    return tail.split("?", 1)[0].split("/", 1)[0]


async def reports(conn: Connection, args: Any) -> SessionReports:
    wanted = list(dict.fromkeys(args.session_uuids))
    visible = await conn.visible(wanted)
    asked = [s for s in wanted if s in visible]  # another workspace's sessions are "missing", never asked for
    rows = await conn.client.session_report(asked, args.project_uuid) if asked else []
    out = [
        {
            "create_time": shapes.text(r.get("create_time")) or "",
            "prompt": strip_html(shapes.text(r.get("prompt")) or ""),
            "session_link": shapes.text(r.get("session_link")) or "",
            "summary": strip_html(shapes.text(r.get("summary")) or ""),
            "time_saved": shapes.number(r.get("time_saved")),
        }
        for r in rows
        if isinstance(r, dict)
    ]
    # Only rows of the sessions asked for (and allowed): a row NeuBird adds for another session is dropped.
    allowed = {s.lower() for s in asked}
    out = [r for r in out if _linked_session(r).lower() in allowed]
    seen = {_linked_session(r).lower() for r in out}
    return SessionReports(reports=out, missing=[s for s in wanted if s.lower() not in seen])


async def summary(conn: Connection, deps: Deps, args: Any) -> SessionSummary:
    await conn.check_session(args.session_uuid)
    project = (await locate.session_project(conn, deps, args.session_uuid, args.project_uuid)).project
    found = await conn.client.session_summary(args.session_uuid, project)
    body = found.get("session_summary")
    if not isinstance(body, dict):
        return SessionSummary(
            session_uuid=args.session_uuid,
            available=False,
            not_provided=["analysis_score"],
            message="NeuBird has not written this session's summary yet (it follows the investigation's end); "
            "try again in a minute, or read the answer now with neubird_inspect_session.",
        )
    score = shapes.analysis_score(body.get("analysis_score"))
    items = body.get("action_items")
    gaps = shapes.missing(score, body.get("analysis_score"))
    return SessionSummary(
        session_uuid=args.session_uuid,
        available=True,
        analysis_score=score,
        short_summary=shapes.short_summary(body.get("short_session_summary")),
        analysis=strip_html(shapes.text(body.get("analysis")) or "") or None,
        action_items=[strip_html(i) for i in shapes.texts(items)],
        time_saved=shapes.time_saved(body.get("time_saved")),
        not_provided=gaps,
        raw=body,
        message=_summary_message(score is not None, len(gaps)),
    )


def _summary_message(scored: bool, gaps: int) -> str:
    if not scored:
        return "Summary available; NeuBird has not scored it (analysis_score is null)."
    if gaps:
        return (
            f"Summary available; {gaps} of the spec's score fields are null because NeuBird's summary does not give "
            "them (not_provided names them; raw has NeuBird's object)."
        )
    return "Summary available."
