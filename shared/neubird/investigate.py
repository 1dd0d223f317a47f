"""Investigations: by alert id, custom with a timeframe, follow-ups, and status."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from shared.neubird import alerts, locate, projects, sessions, shapes, vocabulary
from shared.neubird.client import as_object
from shared.neubird.connection import Connection
from shared.neubird.models import InvestigationOutcome, OutcomeStatus, SessionStatus, StatusOutcome
from shared.neubird.orchestration import WAIT
from shared.neubird.timeframe import enhance_prompt, parse_timeframe
from shared.neubird.wait_plan import MAX_WAIT_SECONDS
from shared.neubird.waiting import (
    WAIT_MARGIN_SECONDS,
    Waited,
    failure,
    poll_until,
    send_and_wait,
    snapshot,
)
from shared.tools.deps import Deps
from shared.tools.invoke import Orchestrations, ProgressFn

log = logging.getLogger("firebreak.neubird")


_STATUS_MESSAGES: dict[SessionStatus, str] = {
    "completed": "NeuBird finished the investigation.",
    "in_progress": "NeuBird is investigating.",
    "failed": "NeuBird's last prompt in this session failed.",
    "not_started": "NeuBird has not started investigating this session (no prompt has been sent to it yet).",
    "unknown": "NeuBird says the session started but shows no prompt in it; its state cannot be told.",
}


def _status_tool(session_uuid: str) -> str:
    return f"neubird_get_investigation_status with session_uuid {session_uuid!r}"


@dataclass
class Investigation:
    """One investigation tool call: its connection, where a long wait goes (a Durable run), how progress is
    told, and how long the caller asked to wait."""

    conn: Connection
    deps: Deps
    orchestrations: Orchestrations | None
    progress: ProgressFn | None
    correlation_id: str | None
    wait: bool
    max_wait: float
    streaming: bool | None = None  # the call's stream_updates; None: the caller's default

    def tells_progress(self) -> ProgressFn | None:
        chosen = self.streaming
        if chosen is None:
            chosen = self.conn.state.defaults.streaming_enabled
        if chosen is None:
            chosen = self.conn.settings.enable_streaming
        return self.progress if chosen else None

    async def send(self, session_uuid: str, project: str, text: str) -> Waited:
        return await send_and_wait(
            self.conn,
            self.deps,
            session_uuid,
            project,
            text,
            wait_seconds=float(self.max_wait) if self.wait else 0.0,
            progress=self.tells_progress(),
        )

    async def finish(
        self,
        session_uuid: str,
        project: str,
        waited: Waited,
        started_status: OutcomeStatus,
        lead: str = "",
        **extra: Any,
    ) -> InvestigationOutcome:
        """The tool's answer; `lead` opens its message (what was looked at before starting)."""
        out = await _finish(self, session_uuid, project, waited, started_status, **extra)
        if lead:
            out.message = f"{lead} {out.message}"
        return out


async def _finish(
    inv: Investigation, session_uuid: str, project: str, waited: Waited, started_status: OutcomeStatus, **extra: Any
) -> InvestigationOutcome:
    conn, orchestrations, wait = inv.conn, inv.orchestrations, inv.wait
    link = sessions.session_link(conn.base_url, project, session_uuid)
    if waited.failed:
        raise failure(session_uuid, waited.failed, project)
    if waited.finished:
        return InvestigationOutcome(
            status="completed",
            session_uuid=session_uuid,
            project_uuid=project,
            investigation_results=waited.results,
            progress=waited.progress or None,
            session_link=link,
            message=f"NeuBird finished the investigation in {waited.elapsed:.0f} s.",
            next_action="Read investigation_results.final_answer; dig deeper with neubird_continue_investigation "
            "(one of follow_up_suggestions makes a good prompt).",
            **extra,
        )
    run_id = None
    left = inv.max_wait - waited.elapsed
    if wait and left > 1 and orchestrations is not None:
        try:
            started = await orchestrations.start(
                WAIT.name,
                conn.principal,
                {
                    "session_uuid": session_uuid,
                    "project_uuid": project,
                    "organization_uuid": await conn.organization(),
                    "base_url": conn.base_url,
                    "wait_seconds": min(left, MAX_WAIT_SECONDS),
                },
                correlation_id=inv.correlation_id,
            )
            run_id = str(getattr(started, "run_id", "") or "") or None
        except Exception:  # the investigation runs at NeuBird all the same: its session id must reach the caller
            log.warning("neubird: the background wait for a session could not start", exc_info=True)
    if run_id:
        message = (
            f"Still running after {waited.elapsed:.0f} s (one request waits at most "
            f"{conn.settings.sync_wait_seconds:.0f} s); a background run keeps waiting up to {left:.0f} s more."
        )
        action = f"Poll {_status_tool(session_uuid)} every 10-15 s, or get_run_status with run_id {run_id!r}."
    else:
        message = "NeuBird is investigating; it usually takes 30-90 s (the first one on a new project longer)."
        action = f"Poll {_status_tool(session_uuid)} every 10-15 s until status is completed."
    return InvestigationOutcome(
        status=started_status if not wait else "in_progress",
        session_uuid=session_uuid,
        project_uuid=project,
        progress=waited.progress or None,
        run_id=run_id,
        session_link=link,
        message=message,
        next_action=action,
        **extra,
    )


async def investigate_alert(inv: Investigation, args: Any) -> InvestigationOutcome:
    conn, deps = inv.conn, inv.deps
    org = await conn.organization()
    search = await alerts.find(conn, deps, args.alert_id, args.project_uuid)
    project, found = search.project, search.rows
    latest = found[0] if found else None
    if latest is not None:
        await locate.remember(conn, deps, str(latest["session_uuid"]), project)
    state = (latest or {}).get("investigation_status")
    status: str = "not_started"
    if latest is not None and state != vocabulary.NOT_STARTED:
        session_uuid = str(latest["session_uuid"])
        raw = await sessions.inspect_raw(conn, deps, session_uuid, project, org)
        status, results, progress_now = snapshot(raw)
        if status == "completed":
            return InvestigationOutcome(
                status="found_existing",
                session_uuid=session_uuid,
                project_uuid=project,
                investigation_results=results,
                session_link=sessions.session_link(conn.base_url, project, session_uuid),
                message=f"NeuBird already investigated this alert (session {session_uuid}, "
                f"{len(found)} session(s) for it); this is the latest RCA.",
                next_action="Read investigation_results.final_answer; ask a follow-up with "
                "neubird_continue_investigation, or pass the alert to neubird_create_investigation for a fresh look.",
            )
        if status == "in_progress":
            waited = Waited(progress=progress_now)
            if inv.wait:
                waited = await _poll_only(conn, deps, session_uuid, project, inv.max_wait)
            return await inv.finish(session_uuid, project, waited, "in_progress")
    if latest is not None:
        # Its latest session: one nobody investigated yet, or one whose investigation failed (asked again there).
        session_uuid = str(latest["session_uuid"])
        looked = (
            f"NeuBird's last investigation of this alert (session {session_uuid}) failed; asked again in it."
            if status == "failed"
            else f"NeuBird had a session for this alert with no investigation in it ({session_uuid}); started one."
        )
    else:
        session_uuid = await conn.client.session_from_alert(project, org, args.alert_id)
        await conn.claim_session(session_uuid, deps.clock())
        await locate.remember(conn, deps, session_uuid, project)
        looked = (
            f"No earlier session of this alert among the {search.searched} most recent incident sessions searched "
            f"(in {len(search.projects_searched)} project(s); NeuBird has no documented filter by alert id, so "
            "older sessions are not looked at): started a new one."
        )
    waited = await inv.send(session_uuid, project, f"Investigate alert {args.alert_id}")
    return await inv.finish(session_uuid, project, waited, "new_investigation", lead=looked)


async def _poll_only(conn: Connection, deps: Deps, session_uuid: str, project: str, max_wait: float) -> Waited:
    """Wait on an investigation someone else started (no stream of ours to read)."""
    out = Waited()
    budget = min(max_wait, conn.settings.sync_wait_seconds, conn.seconds_left() - WAIT_MARGIN_SECONDS)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await poll_until(conn, deps, session_uuid, project, budget, out)
    out.elapsed = loop.time() - started
    return out


async def create_investigation(inv: Investigation, args: Any) -> InvestigationOutcome:
    conn, deps = inv.conn, inv.deps
    default = conn.state.defaults.timeframe or conn.settings.default_timeframe
    frame = parse_timeframe(
        args.timeframe, now=deps.clock(), start_time=args.start_time, end_time=args.end_time, default=default
    )
    enhanced = enhance_prompt(args.prompt, frame)
    project = await projects.choose(conn, deps, args.project_uuid)
    session_uuid = await conn.client.new_session(project, await conn.organization())
    await conn.claim_session(session_uuid, deps.clock())
    await locate.remember(conn, deps, session_uuid, project)
    waited = await inv.send(session_uuid, project, enhanced)
    return await inv.finish(
        session_uuid, project, waited, "created", enhanced_prompt=enhanced, timeframe_parsed=frame.as_dict()
    )


async def continue_investigation(inv: Investigation, args: Any) -> InvestigationOutcome:
    await inv.conn.check_session(args.session_uuid)
    project = (await locate.session_project(inv.conn, inv.deps, args.session_uuid, args.project_uuid)).project
    waited = await inv.send(args.session_uuid, project, args.follow_up_prompt)
    return await inv.finish(args.session_uuid, project, waited, "in_progress", enhanced_prompt=args.follow_up_prompt)


async def status(conn: Connection, deps: Deps, args: Any) -> StatusOutcome:
    await conn.check_session(args.session_uuid)
    located = await locate.session_project(conn, deps, args.session_uuid, args.project_uuid)
    project = located.project
    # Never cached: an agent polls this to see change (an answer read while locating is fresh too).
    found = located.inspected or await conn.client.inspect(args.session_uuid, project, await conn.organization())
    state, results, prog = snapshot(found)
    info = as_object(found.get("session_info"))
    total, done = prog.get("total_steps", 0), prog.get("completed_steps", 0)
    if state == "completed":
        percent: int | None = 100
        action = "Read investigation_results.final_answer; neubird_get_session_summary has scores and action items."
    elif state == "in_progress":
        # NeuBird publishes no percentage: completed steps over steps seen, capped below 100 until the end.
        percent = min(95, int(100 * done / total)) if total else 0
        action = f"Still running: poll {_status_tool(args.session_uuid)} again in 10-15 s."
    elif state == "failed":
        percent = None
        action = (
            "The last prompt failed: read it with neubird_inspect_session, then retry with "
            "neubird_continue_investigation."
        )
    else:
        percent = None
        action = (
            "Nothing has been investigated in this session yet: start with neubird_investigate_alert or "
            "neubird_continue_investigation."
        )
    neubird_status = shapes.text(info.get("investigation_status"))
    return StatusOutcome(
        session_uuid=args.session_uuid,
        project_uuid=project,
        # not_started is outside the spec's set: "unknown", with NeuBird's own status and the message saying so.
        status="unknown" if state == "not_started" else state,
        investigation_status=neubird_status,
        message=_STATUS_MESSAGES[state],
        progress_percentage=percent,
        current_step=prog.get("current_step"),
        investigation_summary={
            "total_steps": total,
            "completed_steps": done,
            "total_sources_consulted": len(prog.get("unique_sources", [])),
            "unique_sources": prog.get("unique_sources", []),
        }
        if prog
        else None,
        investigation_results=results if args.include_full_details else None,
        created_at=shapes.text(info.get("create_time")) or "",
        updated_at=shapes.text(info.get("last_update")) or "",
        session_link=sessions.session_link(conn.base_url, project, args.session_uuid),
        next_action=action,
    )
