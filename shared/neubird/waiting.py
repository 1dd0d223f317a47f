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
import json
import time
from dataclasses import dataclass, field
from typing import Any

from shared.core.errors import AppError, NotFound, RateLimited, UpstreamError
from shared.neubird import sessions
from shared.neubird.client import as_object
from shared.neubird.connection import Connection, unknown_session
from shared.neubird.errors import neubird_error
from shared.neubird.models import SessionStatus
from shared.neubird.stream import Aggregator, TurnState, state_from_inspect
from shared.neubird.vocabulary import NOT_STARTED
from shared.tools.deps import Deps
from shared.tools.invoke import ProgressFn

# With no wait asked for, the stream is read only until NeuBird shows it took the prompt.
ACK_SECONDS = 10.0
PROGRESS_EVERY = 0.5
# A Durable output and its run record: DESIGN keeps payloads near 32 KB.
COMPACT_RESULTS_BYTES = 30_000
# Left of a call's deadline for writing the answer (and starting a background wait) after the budget.
WAIT_MARGIN_SECONDS = 10.0


@dataclass
class Waited:
    """Where a prompt got to within this request."""

    finished: bool = False
    failed: str | None = None
    results: dict[str, Any] | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0


@dataclass
class _Teller:
    """Progress notifications while a stream is read: at most one per PROGRESS_EVERY seconds, and only when the
    step or status text changed. Building the state costs O(steps + answer), so it is not done per event."""

    progress: ProgressFn
    told: str = ""
    next_at: float = 0.0

    async def maybe(self, agg: Aggregator) -> None:
        now = time.monotonic()
        if now < self.next_at:
            return
        self.next_at = now + PROGRESS_EVERY
        state = agg.state()
        key = f"{state.completed_steps}/{state.total_steps} {state.current_step or ''} {state.progress_text or ''}"
        if key != self.told:
            self.told = key
            message = state.current_step or state.progress_text or "NeuBird is investigating"
            await self.progress(float(state.completed_steps), None, message[:200])


def poll_plan(wait_seconds: float, interval_ms: int, max_attempts: int) -> tuple[float, int]:
    """(seconds between polls, polls) covering `wait_seconds` within both limits."""
    interval = max(interval_ms / 1000.0, wait_seconds / max_attempts)
    return interval, max(1, min(max_attempts, int(wait_seconds // interval) or 1))


def progress_of(state: TurnState) -> dict[str, Any]:
    """What a caller sees of a running turn: step counts, the current step, the latest status text, sources."""
    # Small on purpose: it goes into Durable custom status (16 KB at most) and every poll's history entry.
    return {
        "total_steps": state.total_steps,
        "completed_steps": state.completed_steps,
        "current_step": _cut(state.current_step, 200),
        "status_text": _cut(state.progress_text, 200),
        # Worst case JSON-escaped (12 bytes a character for emoji): 2 x 2.4 KB + 8 x 0.7 KB, under 16 KB.
        "unique_sources": [_cut(s, 60) for s in sorted({x for step in state.steps for x in step.sources_involved})][:8],
    }


def _cut(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


def compact_results(results: dict[str, Any] | None) -> dict[str, Any] | None:
    """Results small enough for a Durable output and its run record (DESIGN: ~32 KB): the answer cut at 12,000
    characters, steps and sources shortened; `truncated` says so; neubird_get_investigation_status has them whole."""
    if results is None:
        return None
    answer = str(results.get("final_answer") or "")
    steps = [s for s in results.get("chain_of_thoughts") or [] if isinstance(s, dict)]
    sources = [s for s in results.get("sources") or [] if isinstance(s, dict)]
    follow = [str(f) for f in results.get("follow_up_suggestions") or []]
    out: dict[str, Any] = {
        "final_answer": _cut(answer, 12_000),
        "chain_of_thoughts": [
            {
                "description": _cut(str(s.get("description") or ""), 200),
                "investigation": _cut(str(s.get("investigation") or ""), 300),
                **({"category": _cut(str(s["category"]), 80)} if s.get("category") else {}),
                **({"status": _cut(str(s["status"]), 80)} if s.get("status") else {}),
            }
            for s in steps[:20]
        ],
        "sources": [
            {k: _cut(str(v), 120) for k, v in s.items() if k in ("id", "title", "category")} for s in sources[:20]
        ],
        "follow_up_suggestions": [_cut(f, 200) for f in follow[:10]],
    }
    # Escaped JSON is what is stored: non-ASCII text takes up to 12 bytes a character, so cut until it fits.
    while len(json.dumps(out)) > COMPACT_RESULTS_BYTES and (out["final_answer"] or out["chain_of_thoughts"]):
        if len(out["final_answer"] or "") > 500:
            out["final_answer"] = _cut(out["final_answer"], len(out["final_answer"]) // 2)
        elif out["chain_of_thoughts"]:
            out["chain_of_thoughts"] = out["chain_of_thoughts"][: len(out["chain_of_thoughts"]) // 2]
        else:
            out["final_answer"], out["sources"], out["follow_up_suggestions"] = _cut(out["final_answer"], 100), [], []
    out["truncated"] = (
        out["final_answer"] != answer
        or len(out["chain_of_thoughts"]) < len(steps)
        or len(out["sources"]) < len(sources)
        or len(out["follow_up_suggestions"]) < len(follow)
        or any(len(str(s.get("investigation") or "")) > 300 for s in steps[:20])
    )
    return out


def snapshot(found: dict[str, Any]) -> tuple[SessionStatus, dict[str, Any] | None, dict[str, Any]]:
    """(status, results when finished, progress) from an inspect response: the last prompt cycle decides."""
    state = state_from_inspect(found)
    if state is None:
        info = as_object(found.get("session_info"))
        started = info.get("investigation_status") not in (None, NOT_STARTED)
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
    # Within this request: the asked wait, the sync budget, and what the call's deadline leaves for the answer.
    ceiling = min(conn.settings.sync_wait_seconds, conn.seconds_left() - WAIT_MARGIN_SECONDS)
    budget = max(0.05, min(wait_seconds, ceiling) if wait_seconds > 0 else min(ACK_SECONDS, ceiling))
    out = Waited()
    agg = Aggregator()
    teller = _Teller(progress) if progress is not None else None
    # Opening the stream has its own timeouts and retries (client.py); the budget bounds the reading.
    async with conn.client.prompt(session_uuid, project, text) as stream:
        # NeuBird took the prompt: a completed inspect cached before it is stale from now on.
        await sessions.forget_completed(conn, session_uuid, project)
        try:
            async with asyncio.timeout(max(0.05, budget - (time.monotonic() - started))):
                async for event in stream:
                    agg.feed(event)
                    if teller is not None:
                        await teller.maybe(agg)
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
            await poll_until(conn, deps, session_uuid, project, left, out)
    out.elapsed = time.monotonic() - started
    if out.finished and out.results is not None:
        await _remember(conn, deps, session_uuid, project)
    return out


async def poll_until(
    conn: Connection, deps: Deps, session_uuid: str, project: str, seconds: float, out: Waited
) -> None:
    """Poll inspect for `seconds`. A poll that cannot finish in time, or NeuBird throttling or failing, ends the
    wait quietly: the session exists and runs, so the caller gets it `in_progress`, never a timeout error."""
    interval, attempts = poll_plan(seconds, conn.settings.poll_interval_ms, conn.settings.max_poll_attempts)
    deadline = time.monotonic() + seconds
    for _ in range(attempts):
        try:
            async with asyncio.timeout(max(0.05, deadline - time.monotonic())):
                found = await conn.client.inspect(session_uuid, project, await conn.organization())
        except (TimeoutError, UpstreamError, RateLimited):
            return
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
        async with asyncio.timeout(max(0.05, min(5.0, conn.seconds_left() - WAIT_MARGIN_SECONDS / 2))):
            await sessions.inspect_raw(conn, deps, session_uuid, project, await conn.organization(), fresh=True)
    except Exception:  # a cache warm-up (bounded in time) never turns a finished answer into an error
        return


def failure(session_uuid: str, reason: str, project: str | None = None) -> AppError:
    """The error for a prompt NeuBird refused or failed. [INF] As for envelope errors (client.py), a reason
    saying this session or project "does not exist" / is "not found" (the prompt call named an unknown one)
    is NOT_FOUND (an unknown session worded exactly as another workspace's session is); any other reason is the
    investigation's own failure."""
    lowered = reason.lower()
    missing = "not found" in lowered or "does not exist" in lowered
    unknown_project = missing and bool(project) and str(project).lower() in lowered
    if missing and unknown_project:
        return neubird_error(
            NotFound,
            "api",
            f"NeuBird could not take the prompt for session {session_uuid}: {reason}",
            details={"session_uuid": session_uuid},
            recovery=["List the projects with neubird_list_projects and pass an existing project_uuid."],
        )
    if missing and session_uuid.lower() in lowered:
        return unknown_session(session_uuid)
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
