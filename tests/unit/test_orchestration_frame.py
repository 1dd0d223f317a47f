"""The orchestration frame (functions/orchestration.py) over a stand-in of the Durable context.

Durable carries JSON: every activity input the frame schedules and every result it hands back goes through
json.dumps/loads here, as through the task hub. The capability's code sees models; a payload that does not
fit fails with the field named; a replay answered from the recorded JSON decides the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from functions.orchestration import BoundContext, _activity, _orchestrator, drive
from functions.run_frame import CLAIM_ACTIVITY, FINISH_ACTIVITY
from shared.health.diagnostics import CHECK_ACTIVITY
from shared.health.diagnostics import ORCHESTRATOR as DIAGNOSTICS
from shared.investigations.activities.payloads import CALL, PLAN, PREPARE, REPORT
from shared.investigations.activities.payloads import FAILED as MARK_FAILED
from shared.investigations.models import ORCHESTRATOR as INVESTIGATE
from shared.investigations.orchestration import INVESTIGATE as INVESTIGATION
from shared.tools.capability import ActivityPayloadInvalid
from shared.tools.checks import CheckResult

START = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)


@dataclass
class Task:
    """What the Durable SDK's context hands back for a scheduled activity (or a fan-out of them)."""

    name: str = ""
    job: Any = None
    all: list[Task] | None = None


@dataclass
class DurableContext:
    """df.DurableOrchestrationContext as far as the frame uses it; records each job as the task hub would carry it."""

    instance_id: str = "run-1"
    current_utc_datetime: datetime = START
    statuses: list[Any] = field(default_factory=list)

    def call_activity(self, name: str, job: Any) -> Task:
        return Task(name, json.loads(json.dumps(job)))  # only JSON crosses the task hub

    def call_activity_with_retry(self, name: str, _options: Any, job: Any) -> Task:
        return self.call_activity(name, job)

    def task_all(self, tasks: list[Task]) -> Task:
        return Task(all=tasks)

    def create_timer(self, fire_at: datetime) -> Task:
        return Task("timer", fire_at.isoformat())

    def set_custom_status(self, status: Any) -> None:
        self.statuses.append(status)


def run(
    gen: Generator[Any, Any, Any], answer: Callable[[Task], Any], recorded: list[Any] | None = None
) -> tuple[list[Task], list[Any], Any]:
    """Drive an orchestrator function as the SDK does: (tasks yielded, JSON results sent back, output).

    With `recorded`, the results come from that history instead of `answer` (a replay).
    """
    tasks: list[Task] = []
    results: list[Any] = []
    history = iter(recorded) if recorded is not None else None
    value: Any = None
    try:
        while True:
            task = gen.send(value)
            tasks.append(task)
            if history is not None:
                value = next(history)
            else:
                value = [answer(t) for t in task.all] if task.all is not None else answer(task)
                value = json.loads(json.dumps(value))  # results are recorded as JSON
            results.append(value)
    except StopIteration as stop:
        return tasks, results, stop.value


def diagnostics_world(task: Task) -> Any:
    if task.name == CLAIM_ACTIVITY:
        return {"plan": {"checks": ["cosmos", "blob"]}, "correlation_id": "corr-1"}
    if task.name == CHECK_ACTIVITY:
        name = task.job["args"]["name"]
        return CheckResult(name=name, ok=name == "cosmos", detail="probe").model_dump(mode="json")
    if task.name == FINISH_ACTIVITY:
        return None
    raise AssertionError(task.name)


def test_the_frame_claims_runs_the_code_on_models_and_records_the_output_as_json() -> None:
    tasks, results, output = run(_orchestrator(DIAGNOSTICS)(DurableContext()), diagnostics_world)
    assert [t.name for t in tasks] == [CLAIM_ACTIVITY, "", FINISH_ACTIVITY]
    assert tasks[0].job == {"run_id": "run-1", "orchestrator": DIAGNOSTICS}
    fan_out = tasks[1].all or []
    assert [t.job for t in fan_out] == [
        {"run_id": "run-1", "args": {"name": "cosmos"}},
        {"run_id": "run-1", "args": {"name": "blob"}},
    ]
    assert output["status"] == "degraded"
    assert output["failed"] == ["blob"]
    assert tasks[2].job == {"run_id": "run-1", "output": output, "failed": False}
    # A replay answered from the recorded JSON yields the same tasks and output.
    again, _, output_again = run(_orchestrator(DIAGNOSTICS)(DurableContext()), diagnostics_world, results)
    assert again == tasks
    assert output_again == output


def test_a_recorded_result_that_does_not_fit_fails_the_run_naming_the_field() -> None:
    def broken(task: Task) -> Any:
        if task.name == CHECK_ACTIVITY:
            return {"name": task.job["args"]["name"], "latency_ms": 3}  # no `ok`
        return diagnostics_world(task)

    gen = _orchestrator(DIAGNOSTICS)(DurableContext())
    with pytest.raises(ActivityPayloadInvalid, match=r"diagnostics_check's result does not fit CheckResult: ok: Field"):
        run(gen, broken)


def test_the_run_is_recorded_failed_when_the_code_fails() -> None:
    finished: list[Any] = []

    def broken(task: Task) -> Any:
        if task.name == FINISH_ACTIVITY:
            finished.append(task.job)
        if task.name == CHECK_ACTIVITY:
            return {"name": "x"}
        return diagnostics_world(task)

    with pytest.raises(ActivityPayloadInvalid):
        run(_orchestrator(DIAGNOSTICS)(DurableContext()), broken)
    assert finished == [{"run_id": "run-1", "output": None, "failed": True}]


def investigation_world(task: Task) -> Any:
    args: Any = task.job.get("args") if isinstance(task.job, dict) else None
    if task.name == CLAIM_ACTIVITY:
        plan = {
            "alert": {"name": "KubePodCrashLooping", "title": "t", "source": "test", "starts_at": START.isoformat()},
            "limits": {"max_iterations": 2},
            "started_by": {"user_id": "alice", "source": "dev"},
        }
        return {"plan": plan, "correlation_id": "corr-1"}
    if task.name == PREPARE:
        return {"path": "rule", "runbook": "none", "tool_count": 1, "servers_failed": 0, "memory": False}
    if task.name == PLAN:
        n = args["n"]
        call = {"key": f"i{n}-c1", "tool": "pods_get", "args": {"name": f"p{n}"}, "reason": "look"}
        return {"calls": [call], "done": False, "path": "rule", "stop": None, "notes": []}
    if task.name == CALL:
        return {"key": args["key"], "tool": args["tool"], "ok": True, "error_kind": None, "bytes": 3, "data": True}
    if task.name == REPORT:
        return {
            "investigation_id": "run-1",
            "status": "completed",
            "path": "rule",
            "root_cause": "",
            "confidence": 0.85,  # the rules' score (the model's path says low, medium or high)
            "analysis": "a",
            "iterations": args["iterations"],
            "tool_calls": args["calls"],
            "stopped_because": args["stop"],
            "status_url": "/api/investigations/run-1",
            "next_action": "read it",
        }
    if task.name in (FINISH_ACTIVITY, MARK_FAILED):
        return None
    raise AssertionError(task.name)


def test_the_investigation_round_trips_its_payloads_through_json() -> None:
    tasks, results, output = run(_orchestrator(INVESTIGATE)(DurableContext()), investigation_world)
    scheduled = [t for task in tasks for t in (task.all or [task])]
    assert [t.name for t in scheduled] == [CLAIM_ACTIVITY, PREPARE, PLAN, CALL, PLAN, CALL, REPORT, FINISH_ACTIVITY]
    assert scheduled[2].job["args"] == {"n": 1, "calls_left": 15, "per_iteration": 6}
    assert scheduled[3].job["args"] == {
        "key": "i1-c1",
        "tool": "pods_get",
        "args": {"name": "p1"},
        "reason": "look",
        "n": 1,
    }
    assert scheduled[6].job["args"] == {"stop": "iteration limit (2)", "iterations": 2, "calls": 2, "data_points": 2}
    assert output["stopped_because"] == "iteration limit (2)"
    assert output["correlation_id"] == "corr-1"
    again, _, output_again = run(_orchestrator(INVESTIGATE)(DurableContext()), investigation_world, results)
    assert again == tasks
    assert output_again == output


def test_a_plan_result_of_the_wrong_shape_marks_the_investigation_failed_naming_the_field() -> None:
    def old_shape(task: Task) -> Any:
        if task.name == PLAN:
            return {"calls": [{"tool": "pods_get"}], "done": False, "path": "rule"}  # no key
        return investigation_world(task)

    tasks: list[Task] = []
    with pytest.raises(
        ActivityPayloadInvalid, match=r"investigation_plan's result does not fit PlanChoice: calls\.0\.key"
    ):
        run(_orchestrator(INVESTIGATE)(_Recording(tasks)), old_shape)
    assert [t.name for t in tasks][-2:] == [MARK_FAILED, FINISH_ACTIVITY]


class _Recording(DurableContext):
    def __init__(self, into: list[Task]) -> None:
        super().__init__()
        self._into = into

    def call_activity(self, name: str, job: Any) -> Task:
        task = super().call_activity(name, job)
        self._into.append(task)
        return task


def test_an_orchestrator_may_call_only_its_own_activities() -> None:
    ctx = BoundContext(DurableContext(), None, INVESTIGATION.activities)
    with pytest.raises(ValueError, match="'diagnostics_check' is not an activity of this orchestration"):
        ctx.call_activity(CHECK_ACTIVITY)


def test_a_task_of_no_activity_is_handed_back_as_is() -> None:
    def code(ctx: BoundContext) -> Generator[Any, Any, Any]:
        fired = yield ctx.create_timer(START)
        return fired

    ctx = BoundContext(DurableContext(), None, {})
    gen = drive(code(ctx), ctx)
    assert gen.send(None) == Task("timer", START.isoformat())
    with pytest.raises(StopIteration) as done:
        gen.send("whatever the engine sends")
    assert done.value.value == "whatever the engine sends"


async def test_the_activity_function_refuses_a_malformed_input_before_any_read() -> None:
    activity = _activity(PLAN, INVESTIGATE)
    with pytest.raises(
        ActivityPayloadInvalid, match=r"investigation_plan's input does not fit PlanRequest: calls_left"
    ):
        await activity({"run_id": "run-1", "args": {"n": 1, "per_iteration": 2}})
