"""Issue #14's three measurements: Cosmos round trips per chat message (LLM excluded), the p95 of
get_tasks_by_date for one owner with 5,000 tasks vs 50, and 50 concurrent chat sessions on a local host.

`python -m benchmarks tasks_chat` runs all three (the third on a host it starts):

1. `chat_message_round_trips(send, containers)`: `send()` is one ChatService.send (store the user message,
   read the history, answer, store the answer) with a canned answer in place of the assistant: the LLM and
   the assistant's tool calls are left out, as the issue asks. `containers` are the CosmosContainers the
   flow uses (their `requests` counters). Target: <= 4 round trips per message.
   RU per message is NOT measurable locally: the local Cosmos-API server (@vercel/cosmosdb-server) answers
   `x-ms-request-charge: 1` to every request, so "RU" there only restates the round trips. The result
   says so rather than inventing a figure; measure RU against a real account (or the Azure emulator).
2. `by_date_p95(seed)`: `seed(n)` writes n tasks for a fresh owner (one owner per size), 10 of them due
   in the coming week and the rest months later, and returns the query to time: `get_tasks_by_date` for
   that week through the tasks service (one range query on the owner's partition). Reports p50/p95 at 50
   and 5,000 and the ratio (budget 2.0, as memory_ranking's 10k vs 1k). The local Cosmos-API server has no
   index: it evaluates the query on every document of the partition, so its ratio is a scan's; Cosmos
   serves the range from its index.
3. `concurrent_sessions(base_url)`: fully written against the REST API of the spec (POST /api/chat/session,
   POST /api/chat/message, GET /api/chat/{chat_id}/history): 50 sessions, each its own dev user, send
   their messages at the same time; then every session's history is read and every answered message id
   must be in it (user + assistant, no duplicates). Adjust the field names if the merged routes differ.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from shared.app.wiring import build_deps
from shared.chat.service import chat_service
from shared.chat.store import CHAT_CONTAINER
from shared.core.settings import Settings
from shared.identity.models import Principal

ROUND_TRIP_TARGET = 4
CHAT_MESSAGES = 40
TASK_SIZES = (50, 5_000)
BY_DATE_CALLS = 100
BY_DATE_BUDGET = 2.0
IN_WINDOW = 10  # tasks due in the queried week, at every size
SESSIONS = 50
MESSAGES_PER_SESSION = 4
RU_NOT_MEASURABLE = (
    "not measurable locally: the local Cosmos-API server answers x-ms-request-charge: 1 to every request"
)
# What the sessions ask: intents the rule-based assistant serves without an LLM.
PROMPTS = ("what is due today?", "show my pending tasks", "what is overdue?", "give me a summary of my tasks")


class Counted(Protocol):
    """A CosmosContainer as far as counting goes: its round trips so far."""

    @property
    def requests(self) -> int: ...


ChatMessageHook = Callable[[int], Awaitable[object]]  # send chat message number i through the chat service
ByDateSeed = Callable[[int], Awaitable[Callable[[], Awaitable[object]]]]  # n tasks -> the query to time


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def chat_message_round_trips(
    send: ChatMessageHook, containers: Sequence[Counted], messages: int = CHAT_MESSAGES
) -> dict[str, Any]:
    """Cosmos round trips per chat message, counted on every container the flow touches."""
    await send(-1)  # warm-up: the first message creates containers and caches clients
    per_message: list[int] = []
    for i in range(messages):
        before = sum(c.requests for c in containers)
        await send(i)
        per_message.append(sum(c.requests for c in containers) - before)
    worst = max(per_message)
    return {
        "name": "chat_message_cosmos_round_trips",
        "ratio": round(worst / ROUND_TRIP_TARGET, 3),
        "budget": 1.0,
        "ok": worst <= ROUND_TRIP_TARGET,
        "round_trips_max": worst,
        "round_trips_median": statistics.median(per_message),
        "messages": messages,
        "ru_per_message": RU_NOT_MEASURABLE,
    }


async def by_date_p95(
    seed: ByDateSeed, sizes: tuple[int, int] = TASK_SIZES, calls: int = BY_DATE_CALLS
) -> dict[str, Any]:
    """p95 of the by-date query for one owner with sizes[1] tasks vs sizes[0] (each owner seeded fresh)."""
    measured: dict[int, dict[str, float]] = {}
    for size in sizes:
        started = time.perf_counter()
        query = await seed(size)
        seed_s = time.perf_counter() - started
        for _ in range(10):  # warm-up
            await query()
        latencies = []
        for _ in range(calls):
            t0 = time.perf_counter()
            await query()
            latencies.append(time.perf_counter() - t0)
        measured[size] = {
            "p50_ms": round(statistics.median(latencies) * 1000, 2),
            "p95_ms": round(_percentile(latencies, 0.95) * 1000, 2),
            "seed_s": round(seed_s, 1),
        }
    small, large = measured[sizes[0]], measured[sizes[1]]
    ratio = large["p95_ms"] / small["p95_ms"]
    return {
        "name": f"tasks_by_date_p95_{sizes[1]}_vs_{sizes[0]}",
        "ratio": round(ratio, 3),
        "budget": BY_DATE_BUDGET,
        "ok": ratio <= BY_DATE_BUDGET,
        **{f"{k}_{sizes[0]}": v for k, v in small.items()},
        **{f"{k}_{sizes[1]}": v for k, v in large.items()},
    }


async def _session(
    http: httpx.AsyncClient, n: int, workspace: str, messages: int, errors: list[str]
) -> tuple[dict[str, str], str | None, list[str]]:
    headers = {"x-dev-workspace": workspace, "x-dev-user": f"bench-user-{n}"}
    made = await http.post("/api/chat/session", json={"session_name": f"bench {n}"}, headers=headers)
    if made.status_code not in (200, 201):
        errors.append(f"session {n}: {made.status_code} {made.text[:200]}")
        return headers, None, []
    chat_id = str(made.json()["chat_id"])
    ids: list[str] = []
    for i in range(messages):
        r = await http.post(
            "/api/chat/message", json={"chat_id": chat_id, "message": PROMPTS[i % len(PROMPTS)]}, headers=headers
        )
        if r.status_code != 200:
            errors.append(f"session {n} message {i}: {r.status_code} {r.text[:200]}")
            continue
        body = r.json()
        ids += [str(body["user_message_id"]), str(body["assistant_message_id"])]
    return headers, chat_id, ids


async def _concurrent(base_url: str, sessions: int, messages: int) -> dict[str, Any]:
    workspace = f"bench-chat-{uuid.uuid4().hex[:8]}"
    errors: list[str] = []
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as http:
        started = time.perf_counter()
        done = await asyncio.gather(*(_session(http, n, workspace, messages, errors) for n in range(sessions)))
        elapsed = time.perf_counter() - started
        # Count afterwards: every answered message must be stored exactly once in its own session.
        lost = duplicated = 0
        for headers, chat_id, ids in done:
            if chat_id is None:
                continue
            r = await http.get(f"/api/chat/{chat_id}/history", params={"limit": 2 * messages + 10}, headers=headers)
            if r.status_code != 200:
                errors.append(f"history {chat_id}: {r.status_code} {r.text[:200]}")
                lost += len(ids)
                continue
            stored = [str(m["id"]) for m in r.json()["messages"]]
            lost += len(set(ids) - set(stored))
            duplicated += len(stored) - len(set(stored))
    sent = sessions * messages
    answered = sum(len(ids) for _, _, ids in done) // 2
    problems = len(errors) + lost + duplicated
    return {
        "name": f"chat_{sessions}_concurrent_sessions",
        # The share of messages that went wrong (an error, lost or stored twice): reported, must be 0.
        "ratio": round(problems / sent, 3),
        "budget": None,
        "ok": problems == 0 and answered == sent,
        "sessions": sessions,
        "messages_sent": sent,
        "messages_answered": answered,
        "errors": len(errors),
        "lost_messages": lost,
        "duplicated_messages": duplicated,
        "elapsed_s": round(elapsed, 2),
        "messages_per_s": round(answered / elapsed, 1) if elapsed else None,
        "first_errors": errors[:3],
    }


def concurrent_sessions(
    base_url: str, sessions: int = SESSIONS, messages: int = MESSAGES_PER_SESSION
) -> dict[str, Any]:
    """50 sessions (one dev user each) chatting at once on a running host; 0 errors and nothing lost."""
    return asyncio.run(_concurrent(base_url, sessions, messages))


@dataclass(frozen=True)
class _CannedReply:
    """The assistant left out: a fixed answer with no tool call, so only the chat flow's own trips count."""

    text: str = "You have nothing due today."
    tool_calls: tuple[()] = ()
    task_ids: tuple[str, ...] = ()
    mode: str = "benchmark"


async def _canned(history: object, text: str) -> _CannedReply:
    return _CannedReply()


async def _chat_round_trips(settings: Settings, messages: int = CHAT_MESSAGES) -> dict[str, Any]:
    """Measurement 1 with the merged chat service (shared/chat, on main): ChatService.send with the LLM left out."""
    deps = build_deps(settings)
    try:
        service = chat_service(deps)
        container = await deps.cosmos.container(CHAT_CONTAINER.name)
        who = Principal(workspace_id=f"bench-chat-{uuid.uuid4().hex[:6]}", user_id="bench", source="dev")
        before = container.requests
        first = await service.send(who, None, "hello", _canned)  # a new chat: the session comes in the batch
        new_chat = container.requests - before

        async def send(i: int) -> object:
            return await service.send(who, first.chat_id, PROMPTS[i % len(PROMPTS)], _canned)

        result = await chat_message_round_trips(send, [container], messages)
    finally:
        await deps.aclose()
    return {**result, "round_trips_new_chat": new_chat}


async def _seed_tasks(settings: Settings, deps_box: list[Any]) -> ByDateSeed:
    """`seed(n)`: n tasks for a fresh owner, due over the next 10 weeks; returns its this_week query."""
    from datetime import UTC, datetime, timedelta

    from shared.tasks.models import CreateTaskRequest, GetTasksByDateRequest
    from shared.tasks.service import TaskService
    from shared.tasks.store import TaskStore

    deps = build_deps(settings)
    deps_box.append(deps)
    service = TaskService(TaskStore(deps.cosmos), deps.clock)

    async def seed(n: int) -> Callable[[], Awaitable[object]]:
        # The same 10 tasks fall in the queried week at every size; the rest are due months later. So the
        # ratio is what the other tasks cost the query (scan or index), not a 100x bigger answer.
        who = Principal(workspace_id=f"bench-tasks-{uuid.uuid4().hex[:6]}", user_id="bench", source="dev")
        start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        gate = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            hours = 6 + i * 12 if i < IN_WINDOW else 24 * 40 + (i * 1681) % (24 * 300)
            due = (start + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
            async with gate:
                await service.create_task(who, CreateTaskRequest(title=f"task {i}", due_date=due))

        await asyncio.gather(*(one(i) for i in range(n)))
        query = GetTasksByDateRequest(
            date_range="custom",
            custom_start=start.date().isoformat(),
            custom_end=(start + timedelta(days=6)).date().isoformat(),
        )

        async def run_query() -> object:
            found = await service.get_tasks_by_date(who, query)
            assert found.count == IN_WINDOW, found.count
            return found

        return run_query

    return seed


async def _by_date(settings: Settings) -> dict[str, Any]:
    box: list[Any] = []
    try:
        return await by_date_p95(await _seed_tasks(settings, box))
    finally:
        for deps in box:
            await deps.aclose()


def run(settings: Settings, base_url: str | None = None) -> list[dict[str, Any]]:
    """The three measurements: chat round trips (LLM left out), by-date p95 5,000 vs 50 tasks, and with a
    running host (`base_url`) 50 concurrent chat sessions over the REST API (the rule-based assistant)."""
    results = [asyncio.run(_chat_round_trips(settings)), asyncio.run(_by_date(settings))]
    if base_url is not None:
        results.append(concurrent_sessions(base_url))
    return results
