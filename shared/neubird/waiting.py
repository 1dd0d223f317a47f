"""Sending a prompt and waiting for NeuBird's answer inside one request, or handing the wait to a Durable run.

The answer arrives on the prompt's SSE stream. This reads it (progress to the caller as steps arrive)
until the end of the turn or the request's safe budget (`sync_wait_seconds`, 200 s: Functions ends an
HTTP response at 230 s). A stream that breaks mid-turn is not a failure: the investigation goes on at
NeuBird [INF: contract 13], so the wait continues by polling inspect. When the caller asked to wait
longer than the budget, the rest of the wait becomes the `neubird_wait` orchestration and the answer is
`in_progress` with the session id and how to poll, never a timeout error.

Polling honours NEUBIRD_POLL_INTERVAL_MS and NEUBIRD_MAX_POLL_ATTEMPTS: never faster than the interval,
never more than the attempts, spread so the attempts cover the whole wait (poll_plan).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from shared.core.errors import AppError, NotFound, UpstreamError
from shared.neubird import sessions
from shared.neubird.connection import Connection
from shared.neubird.errors import neubird_error
from shared.neubird.models import SessionStatus
from shared.neubird.stream import Aggregator, TurnState, state_from_inspect
from shared.tools.deps import Deps

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
# With no wait asked for, the stream is read only until NeuBird shows it took the prompt.
ACK_SECONDS = 10.0


@dataclass
class Waited:
    """Where a prompt got to within this request."""

    finished: bool = False
    failed: str | None = None
    results: dict[str, Any] | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0


async def _tell(agg: Aggregator, told: str, progress: ProgressFn) -> str:
    """Notify the caller when the step or status text changed (keepalives and deltas alone are not news)."""
    state = agg.state()
    now_told = f"{state.completed_steps}/{state.total_steps} {state.current_step or ''} {state.progress_text or ''}"
    if now_told != told:
        message = state.current_step or state.progress_text or "NeuBird is investigating"
        await progress(float(state.completed_steps), None, message[:200])
    return now_told


def poll_plan(wait_seconds: float, interval_ms: int, max_attempts: int) -> tuple[float, int]:
    """(seconds between polls, polls) covering `wait_seconds` within both limits."""
    interval = max(interval_ms / 1000.0, wait_seconds / max_attempts)
    return interval, max(1, min(max_attempts, int(wait_seconds // interval) or 1))


def progress_of(state: TurnState) -> dict[str, Any]:
    """What a caller sees of a running turn: step counts, the current step, the latest status text, sources."""
    return {
        "total_steps": state.total_steps,
        "completed_steps": state.completed_steps,
        "current_step": state.current_step,
        "status_text": state.progress_text,
        "unique_sources": sorted({x for step in state.steps for x in step.sources_involved})[:100],
    }


def snapshot(found: dict[str, Any]) -> tuple[SessionStatus, dict[str, Any] | None, dict[str, Any]]:
    """(status, results when finished, progress) from an inspect response: the last prompt cycle decides."""
    state = state_from_inspect(found)
    if state is None:
        info = sessions.obj(found.get("session_info"))
        started = info.get("investigation_status") not in (None, sessions.NOT_STARTED)
        return ("unknown" if started else "not_started"), None, {}
    progress = progress_of(state)
    if state.prompt_status == "PROMPT_STATUS_ERROR":
        return "failed", state.results.to_dict(), progress
    if state.prompt_status == "PROMPT_STATUS_COMPLETED":
        return "completed", state.results.to_dict(), progress
    return "in_progress", None, progress


async def send_and_wait(
    conn: Connection,
    deps: Deps,
    session_uuid: str,
    project: str,
    text: str,
    *,
    wait_seconds: float,
    progress: ProgressFn | None,
) -> Waited:
    """Send `text` to the session and wait up to `wait_seconds` (0: until NeuBird took it)."""
    started = time.monotonic()
    budget = min(wait_seconds, conn.settings.sync_wait_seconds) if wait_seconds > 0 else ACK_SECONDS
    out = Waited()
    agg = Aggregator()
    told = ""
    # A follow-up makes a cached completed inspect of this session stale (it would hide the new cycle).
    await sessions.forget(conn, session_uuid, project)
    # Opening the stream has its own timeouts and retries (client.py); the budget bounds the reading.
    async with conn.client.prompt(session_uuid, project, text) as stream:
        try:
            async with asyncio.timeout(max(0.05, budget - (time.monotonic() - started))):
                async for event in stream:
                    agg.feed(event)
                    if progress is not None:
                        told = await _tell(agg, told, progress)
                    if agg.ended or wait_seconds <= 0:
                        break
        except TimeoutError:
            pass  # the budget ended the read; the investigation goes on at NeuBird
        complete = stream.complete or agg.ended
    state = agg.state()
    out.progress = progress_of(state)
    if state.errors and not state.results.final_answer:
        out.failed = state.errors[-1]
    elif complete:
        out.finished, out.results = True, state.results.to_dict()
    elif wait_seconds > 0:
        # The stream broke or the budget ran out: poll inspect for what is left of the budget.
        left = budget - (time.monotonic() - started)
        if left > 0.05:
            await _poll(conn, deps, session_uuid, project, left, out)
    out.elapsed = time.monotonic() - started
    if out.finished and out.results is not None:
        await _remember(conn, deps, session_uuid, project)
    return out


async def _poll(conn: Connection, deps: Deps, session_uuid: str, project: str, seconds: float, out: Waited) -> None:
    interval, attempts = poll_plan(seconds, conn.settings.poll_interval_ms, conn.settings.max_poll_attempts)
    deadline = time.monotonic() + seconds
    org = await conn.organization()
    for _ in range(attempts):
        found = await conn.client.inspect(session_uuid, project, org)
        state, results, out.progress = snapshot(found)
        if state == "completed":
            out.finished, out.results = True, results
            return
        if state == "failed":
            out.failed = _cycle_error(found)
            return
        if time.monotonic() + interval > deadline:
            return
        await asyncio.sleep(interval)


def _cycle_error(found: dict[str, Any]) -> str:
    listed = sessions.cycles(found)
    last = listed[-1] if listed else {}
    return str(last.get("error") or last.get("final_answer") or "the prompt cycle ended with PROMPT_STATUS_ERROR")[:500]


async def _remember(conn: Connection, deps: Deps, session_uuid: str, project: str) -> None:
    """Warm the completed-investigation cache so inspect and the alert lookup reuse the finished answer."""
    try:
        await sessions.inspect_raw(conn, deps, session_uuid, project, await conn.organization())
    except Exception:
        return


def failure(session_uuid: str, reason: str, project: str | None = None) -> AppError:
    """The error for a prompt NeuBird refused or failed. [INF] As for envelope errors (client.py), a reason
    saying this session or project "does not exist" / is "not found" (the prompt call named an unknown one)
    is NOT_FOUND; any other reason is the investigation's own failure."""
    lowered = reason.lower()
    missing = "not found" in lowered or "does not exist" in lowered
    unknown_project = missing and bool(project) and str(project).lower() in lowered
    if missing and (unknown_project or session_uuid.lower() in lowered):
        return neubird_error(
            NotFound,
            "api" if unknown_project else "investigation",
            f"NeuBird could not take the prompt for session {session_uuid}: {reason}",
            details={"session_uuid": session_uuid},
            recovery=[
                "List the projects with neubird_list_projects and pass an existing project_uuid."
                if unknown_project
                else "Check the session_uuid (neubird_list_sessions lists them) and its project_uuid."
            ],
        )
    return neubird_error(
        UpstreamError,
        "investigation",
        f"NeuBird reported an error in session {session_uuid}: {reason}",
        details={"session_uuid": session_uuid},
        recovery=[
            "Read the session with neubird_inspect_session to see how far it got.",
            "Ask again with neubird_continue_investigation (same session), or start a new one.",
        ],
    )
