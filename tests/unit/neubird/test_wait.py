"""The long-wait path without I/O: the poll schedule, inspect snapshots, and the wait orchestration replayed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.neubird.orchestration import POLL, POLL_RETRY, orchestrate
from shared.neubird.wait_models import PollSnapshot, WaitOutput, WaitPlan
from shared.neubird.waiting import poll_plan, snapshot
from shared.tools.capability import RetryPolicy

START = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)


@pytest.mark.parametrize(
    ("wait", "interval_ms", "attempts", "expected"),
    [
        (300, 2000, 30, (10.0, 30)),  # defaults: 30 polls spread over 5 minutes, not 60 s of 2 s polls
        (60, 2000, 30, (2.0, 30)),
        (10, 2000, 30, (2.0, 5)),
        (1, 2000, 30, (2.0, 1)),  # always one poll
        (600, 500, 10_000, (0.5, 1200)),
        (3600, 2000, 30, (120.0, 30)),
    ],
)
def test_poll_plan_honours_the_interval_and_the_attempts(
    wait: float, interval_ms: int, attempts: int, expected: tuple[float, int]
) -> None:
    interval, polls = poll_plan(wait, interval_ms, attempts)
    assert (interval, polls) == expected
    assert interval >= interval_ms / 1000
    assert polls <= attempts


def _cycle(status: str, *, answer: str = "", steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "session_info": {"session_uuid": "s1", "investigation_status": "INVESTIGATION_STATUS_IN_PROGRESS"},
        "prompt_cycle": [
            {"id": "pc-0", "status": "PROMPT_STATUS_COMPLETED", "final_answer": "old"},
            {"id": "pc-1", "status": status, "final_answer": answer, "chain_of_thoughts": steps or []},
        ],
    }


def test_snapshot_reads_the_last_prompt_cycle() -> None:
    steps: list[dict[str, Any]] = [
        {
            "id": "c1",
            "description": "Which pods?",
            "status": "CHAIN_OF_THOUGHT_STATUS_COMPLETED",
            "sources_involved": ["logs"],
        },
        {"id": "c2", "description": "Which deploy?", "status": "CHAIN_OF_THOUGHT_STATUS_IN_PROGRESS"},
    ]
    status, results, progress = snapshot(_cycle("PROMPT_STATUS_IN_PROGRESS", steps=steps))
    assert status == "in_progress"
    assert results is None
    assert progress["total_steps"] == 2
    assert progress["completed_steps"] == 1
    assert progress["current_step"] == "Which deploy?"
    assert progress["unique_sources"] == ["logs"]

    status, results, _ = snapshot(_cycle("PROMPT_STATUS_COMPLETED", answer="**Root cause:** pool<br>"))
    assert status == "completed"
    assert results is not None
    assert results["final_answer"].startswith("**Root cause:** pool")
    assert "<br>" not in results["final_answer"]

    status, _, _ = snapshot(_cycle("PROMPT_STATUS_ERROR"))
    assert status == "failed"


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ({"session_info": {"investigation_status": "INVESTIGATION_STATUS_NOT_STARTED"}}, "not_started"),
        ({"session_info": {}}, "not_started"),
        ({"session_info": {"investigation_status": "INVESTIGATION_STATUS_COMPLETED"}, "prompt_cycle": []}, "unknown"),
        ({"session_info": None, "prompt_cycle": "not a list"}, "not_started"),
    ],
)
def test_snapshot_without_cycles(found: dict[str, Any], expected: str) -> None:
    assert snapshot(found)[0] == expected


class Ctx:
    """RunContext double: the orchestration clock moves only when a timer fires."""

    def __init__(self) -> None:
        self.now = START
        self.statuses: list[Any] = []

    @property
    def run_id(self) -> str:
        return "run-1"

    @property
    def correlation_id(self) -> str | None:
        return None

    @property
    def current_utc_datetime(self) -> datetime:
        return self.now

    def call_activity(self, name: str, args: Any = None, *, retry: RetryPolicy | None = None) -> Any:
        return {"activity": name, "retry": retry}

    def task_all(self, tasks: list[Any]) -> Any:
        return {"all": tasks}

    def create_timer(self, fire_at: datetime) -> Any:
        return {"timer": fire_at}

    def set_custom_status(self, status: Any) -> None:
        self.statuses.append(status)


def drive(ctx: Ctx, plan: dict[str, Any], answer: Callable[[int], dict[str, Any]]) -> tuple[WaitOutput, list[Any]]:
    """Run the generator as the engine would (the frame hands results back as models); timers move the clock."""
    gen = orchestrate(ctx, WaitPlan.model_validate(plan))
    tasks: list[Any] = []
    polls = 0
    value: Any = None
    try:
        while True:
            task = gen.send(value)
            tasks.append(task)
            if "timer" in task:
                ctx.now = task["timer"]
                value = None
            else:
                assert task == {"activity": POLL, "retry": POLL_RETRY}
                polls += 1
                value = PollSnapshot.model_validate(answer(polls))
    except StopIteration as stop:
        return stop.value, tasks


PLAN = {
    "session_uuid": "s1",
    "project_uuid": "p1",
    "organization_uuid": None,
    "base_url": "https://prod.app.neubird.ai/api",
    "wait_seconds": 600.0,
    "poll_interval_seconds": 20.0,
    "poll_attempts": 30,
}


def test_the_wait_ends_when_the_investigation_completes() -> None:
    results = {"final_answer": "done", "chain_of_thoughts": [], "sources": [], "follow_up_suggestions": []}

    def answer(n: int) -> dict[str, Any]:
        if n < 4:
            return {"status": "in_progress", "progress": {"completed_steps": n}}
        return {"status": "completed", "progress": {"completed_steps": 4}, "investigation_results": results}

    ctx = Ctx()
    output, tasks = drive(ctx, PLAN, answer)
    assert output.status == "completed"
    assert output.investigation_results == results
    timers = [t["timer"] for t in tasks if "timer" in t]
    assert timers == [START + timedelta(seconds=20 * i) for i in (1, 2, 3)]
    assert [s["poll"] for s in ctx.statuses] == [1, 2, 3, 4]
    # Replays decide the same: a second run over the same answers yields the same tasks.
    assert drive(Ctx(), PLAN, answer)[1] == tasks


def test_the_wait_stops_at_its_deadline_and_says_how_to_poll() -> None:
    ctx = Ctx()
    output, tasks = drive(ctx, {**PLAN, "wait_seconds": 100.0}, lambda _n: {"status": "in_progress", "progress": {}})
    polls = [t for t in tasks if "activity" in t]
    assert len(polls) == 6  # at 0, 20, ..., 100 s; the next timer would pass the deadline
    assert ctx.now == START + timedelta(seconds=100)
    assert output.status == "in_progress"
    assert "neubird_get_investigation_status" in output.message
    assert "s1" in output.message


def test_the_wait_never_polls_more_than_its_attempts() -> None:
    _, tasks = drive(Ctx(), {**PLAN, "poll_attempts": 3}, lambda _n: {"status": "in_progress"})
    assert len([t for t in tasks if "activity" in t]) == 3


def test_a_failed_investigation_ends_the_wait() -> None:
    output, tasks = drive(Ctx(), PLAN, lambda _n: {"status": "failed", "investigation_results": {"final_answer": ""}})
    assert output.status == "failed"
    assert len(tasks) == 1


class _Deps:
    """Only what validate_plan reads: the settings."""

    def __init__(self, env: dict[str, str]) -> None:
        from shared.app.wiring import load_settings

        self.settings = load_settings(env)


NEUBIRD_ENV = {
    "NEUBIRD_BASE_URL": "https://acme.app.neubird.ai/api",
    "NEUBIRD_EMAIL": "sre@example.com",
    "NEUBIRD_PASSWORD": "pw",
}


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"base_url": "https://evil.example.com/api"}, "instance is not allowed"),
        ({"base_url": "https://169.254.169.254/api"}, "instance is not allowed"),
        ({"base_url": 7}, "instance is not allowed"),
        ({"session_uuid": "../../v1/user"}, "session_uuid is not an id"),
        ({"project_uuid": ""}, "project_uuid is not an id"),
        ({"organization_uuid": "a/b"}, "organization_uuid is not an id"),
        ({"wait_seconds": 10**9}, "wait_seconds out of range"),
        ({"wait_seconds": -1}, "wait_seconds out of range"),
        ({"wait_seconds": "600"}, "wait_seconds out of range"),
    ],
)
def test_a_stored_plan_is_checked_again_when_the_run_is_claimed(edit: dict[str, Any], problem: str) -> None:
    from shared.core.errors import ValidationFailed
    from shared.neubird.orchestration import WAIT

    deps = _Deps(NEUBIRD_ENV)
    with pytest.raises(ValidationFailed, match=problem):
        WAIT.validate_plan({**PLAN, **edit}, deps)  # type: ignore[arg-type]


def test_a_valid_plan_gets_its_poll_schedule_from_the_settings() -> None:
    from shared.neubird.orchestration import WAIT

    deps = _Deps({**NEUBIRD_ENV, "NEUBIRD_POLL_INTERVAL_MS": "5000", "NEUBIRD_MAX_POLL_ATTEMPTS": "12"})
    plan = WAIT.validate_plan(
        {**PLAN, "base_url": "https://other.app.neubird.ai/api", "poll_attempts": 10**6},
        deps,  # type: ignore[arg-type]
    )
    assert plan.poll_interval_seconds == 50.0  # 600 s over 12 attempts, slower than the 5 s floor
    assert plan.poll_attempts == 12


class _RunOf:
    """An ActiveRun whose stored plan someone edited after the claim."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.run_id, self.workspace_id, self.user_id = "run-1", "ws-1", "u-1"


async def test_the_poll_checks_the_stored_plan_again_before_any_login() -> None:
    from shared.core.errors import ValidationFailed
    from shared.neubird.activity import poll_once

    deps = _Deps(NEUBIRD_ENV)
    deps.state = {}  # type: ignore[attr-defined]
    edited = {**PLAN, "base_url": "https://attacker.example/api"}
    with pytest.raises(ValidationFailed, match="instance is not allowed"):
        await poll_once(_RunOf(edited), deps)  # type: ignore[arg-type]
    assert deps.state == {}  # type: ignore[attr-defined]  # no client, no pool, no login was made


def test_results_for_a_durable_output_are_cut_and_say_so() -> None:
    from shared.neubird.waiting import compact_results

    big = {
        "final_answer": "a" * 100_000,
        "chain_of_thoughts": [{"description": "d" * 1000, "investigation": "i" * 5000, "status": "DONE"}] * 50,
        "sources": [{"id": str(n), "title": "t" * 500, "raw": "x" * 10_000} for n in range(100)],
        "follow_up_suggestions": ["f" * 1000] * 30,
    }
    out = compact_results(big)
    assert out is not None
    assert out["truncated"] is True
    assert len(json.dumps(out)) < 32_000
    assert len(out["chain_of_thoughts"]) == 20
    assert "raw" not in out["sources"][0]
    small = {"final_answer": "DB pool exhausted.", "chain_of_thoughts": [], "sources": [], "follow_up_suggestions": []}
    assert compact_results(small) == {**small, "truncated": False}
    assert compact_results(None) is None


def test_non_ascii_results_are_cut_by_their_stored_size() -> None:
    from shared.neubird.waiting import COMPACT_RESULTS_BYTES, compact_results

    emoji = {
        "final_answer": "🔥 " * 20_000,
        "chain_of_thoughts": [{"description": "é" * 200, "investigation": "ü" * 300}] * 20,
        "sources": [{"id": str(n), "title": "ß" * 120} for n in range(20)],
        "follow_up_suggestions": ["ñ" * 200] * 10,
    }
    out = compact_results(emoji)
    assert out is not None
    assert len(json.dumps(out)) <= COMPACT_RESULTS_BYTES
    assert out["truncated"] is True
    assert out["final_answer"].startswith("🔥")
