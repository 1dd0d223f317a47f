"""The investigation orchestrator replays: the same recorded activity results give the same actions.

The generator is driven the way the Durable SDK replays it: every yielded task is answered from the results
the first run recorded, in order. The context is a plain double of RunContext (no SDK): the point is the
orchestrator's own code, which must decide from activity results and the orchestration clock only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.investigations.activities import payloads as act
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits, Planned
from shared.investigations.orchestration import RETRY, orchestrate
from shared.tools.capability import RetryPolicy

START = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)  # far from the wall clock: a wall-clock read would show


@dataclass
class Ctx:
    """RunContext as the orchestrator sees it; tasks are plain dicts, the clock is the test's. Results are handed back
    as the frame hands them: the activities' output models (tests/unit/functions/test_frame.py covers the JSON)."""

    clock: Callable[[], datetime]
    statuses: list[Any] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return "inv-1"

    @property
    def correlation_id(self) -> str | None:
        return "corr-1"

    @property
    def current_utc_datetime(self) -> datetime:
        return self.clock()

    def call_activity(self, name: str, args: Any = None, *, retry: RetryPolicy | None = None) -> Any:
        return {"activity": name, "args": args, "retry": retry}

    def task_all(self, tasks: list[Any]) -> Any:
        return {"all": tasks}

    def set_custom_status(self, status: Any) -> None:
        self.statuses.append(status)

    def create_timer(self, fire_at: datetime) -> Any:
        return {"timer": fire_at}


def world(calls_per_plan: int = 2, rounds: int = 9) -> Callable[[dict[str, Any]], Any]:
    """Activity results of a run whose planner keeps asking for new calls for `rounds` plans."""

    def answer(task: dict[str, Any]) -> Any:
        name, args = task["activity"], task["args"]
        if name == act.PREPARE:
            return act.Prepared(path="rule", runbook="none", tool_count=3, servers_failed=0, memory=False)
        if name == act.PLAN:
            n = args.n
            calls = (
                []
                if n > rounds
                else [
                    Planned(key=f"i{n}-c{j}", tool="pods_get", args={"name": f"p{n}-{j}"}, reason="look")
                    for j in range(1, calls_per_plan + 1)
                ]
            )
            return act.PlanChoice(calls=calls, path="rule")
        if name == act.CALL:
            return act.CallDone(key=args.key, tool=args.tool, ok=True, bytes=10, data=False)
        if name == act.REPORT:
            return act.ReportSummary(
                investigation_id="inv-1",
                status="completed",
                path="rule",
                root_cause="",
                analysis=f"{args.iterations} iterations, {args.calls} calls",
                iterations=args.iterations,
                tool_calls=args.calls,
                stopped_because=args.stop,
                status_url="/api/investigations/inv-1",
                next_action="read it",
            )
        raise AssertionError(f"unexpected activity {name}")

    return answer


def drive(
    gen: Generator[Any, Any, Any], answer: Callable[[dict[str, Any]], Any], on_yield: Callable[[], None] = lambda: None
) -> tuple[list[Any], list[Any], Any]:
    """Run the orchestrator to its end: (yielded actions, results handed back, output)."""
    actions: list[Any] = []
    results: list[Any] = []
    value: Any = None
    try:
        while True:
            task = gen.send(value)
            actions.append(task)
            on_yield()
            value = [answer(t) for t in task["all"]] if "all" in task else answer(task)
            results.append(value)
    except StopIteration as stop:
        return actions, results, stop.value


def plan(**limits: int) -> act.StoredPlan:
    alert = Alert(name="KubePodCrashLooping", title="KubePodCrashLooping", source="test", starts_at=START)
    return act.StoredPlan(alert=alert, limits=Limits(**limits), started_by=act.StartedBy(user_id="alice", source="dev"))


def replay(recorded: list[Any], limits: dict[str, int]) -> tuple[list[Any], Any, Ctx]:
    """A second run of the generator answered from `recorded` (as the SDK replays a history)."""
    ctx = Ctx(clock=lambda: START)
    gen = orchestrate(ctx, plan(**limits))
    answers = iter(recorded)
    actions: list[Any] = []
    value: Any = None
    try:
        while True:
            actions.append(gen.send(value))
            value = next(answers)
    except StopIteration as stop:
        return actions, stop.value, ctx


@pytest.mark.parametrize(
    ("limits", "calls_per_plan", "rounds", "stop"),
    [
        ({}, 2, 9, "iteration limit (5)"),
        ({}, 4, 9, "tool call limit (15)"),
        ({"max_iterations": 3}, 1, 1, "the planner found nothing more to call"),
    ],
)
def test_a_replay_with_the_recorded_results_yields_the_same_actions(
    limits: dict[str, int], calls_per_plan: int, rounds: int, stop: str
) -> None:
    ctx = Ctx(clock=lambda: START)
    actions, results, output = drive(orchestrate(ctx, plan(**limits)), world(calls_per_plan, rounds))
    time.sleep(0.002)  # a wall clock would move between the run and its replay
    again, output_again, ctx_again = replay(results, limits)
    assert again == actions
    assert output_again == output
    assert ctx_again.statuses == ctx.statuses
    assert output.stopped_because == stop
    assert output.correlation_id == "corr-1"
    # Every activity is scheduled with the retry policy (three attempts).
    scheduled = [t for a in actions for t in (a.get("all", [a]))]
    assert {t["retry"] for t in scheduled} == {RETRY}
    assert RETRY.max_attempts == 3


def test_the_time_budget_is_measured_on_the_orchestration_clock() -> None:
    # The clock moves 400 s per yielded task although no wall time passes: a 600 s budget is used up
    # after the first iteration's calls, which only the orchestration clock can tell.
    now = [START]

    def tick() -> None:
        now[0] += timedelta(seconds=400)

    ctx = Ctx(clock=lambda: now[0])
    actions, _, output = drive(orchestrate(ctx, plan()), world(1, 9), tick)
    assert output.stopped_because == "time budget (600 s) used up"
    plans = [a for a in actions if a.get("activity") == act.PLAN]
    assert len(plans) == 1  # PREPARE at t0, PLAN at +400 s, CALLs at +800 s: the deadline is t0 + 600 s

    # A clock frozen in 2001 never reaches its deadline, whatever the wall clock says.
    frozen = Ctx(clock=lambda: START)
    _, _, output = drive(orchestrate(frozen, plan()), world(1, 9))
    assert output.stopped_because == "iteration limit (5)"


def test_a_failing_activity_marks_the_record_failed_and_the_error_reaches_the_frame() -> None:
    ctx = Ctx(clock=lambda: START)
    gen = orchestrate(ctx, plan())
    first = gen.send(None)
    assert first["activity"] == act.PREPARE
    failed = gen.throw(RuntimeError("activity failed after 3 attempts"))
    assert failed["activity"] == act.FAILED
    with pytest.raises(RuntimeError, match="after 3 attempts"):
        gen.send(None)
