"""History events in the JSON shape the Durable extension hands the Python worker (DTFx event types)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

EXECUTION_STARTED, EXECUTION_COMPLETED, EXECUTION_FAILED, EXECUTION_TERMINATED = 0, 1, 2, 3
TASK_SCHEDULED, TASK_COMPLETED, TASK_FAILED = 4, 5, 6
SUB_ORCHESTRATION_CREATED, SUB_ORCHESTRATION_COMPLETED, SUB_ORCHESTRATION_FAILED = 7, 8, 9
TIMER_CREATED, TIMER_FIRED = 10, 11
ORCHESTRATOR_STARTED, ORCHESTRATOR_COMPLETED = 12, 13
EVENT_RAISED, CONTINUE_AS_NEW = 15, 16

NAMES = {
    0: "ExecutionStarted",
    1: "ExecutionCompleted",
    2: "ExecutionFailed",
    3: "ExecutionTerminated",
    4: "TaskScheduled",
    5: "TaskCompleted",
    6: "TaskFailed",
    7: "SubOrchestrationInstanceCreated",
    8: "SubOrchestrationInstanceCompleted",
    9: "SubOrchestrationInstanceFailed",
    10: "TimerCreated",
    11: "TimerFired",
    12: "OrchestratorStarted",
    13: "OrchestratorCompleted",
    15: "EventRaised",
    16: "ContinueAsNew",
}


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event(kind: int, at: datetime, event_id: int = -1, **fields: Any) -> dict[str, Any]:
    return {"EventType": kind, "EventId": event_id, "IsPlayed": False, "Timestamp": iso(at), **fields}


def public(ev: dict[str, Any], *, with_output: bool) -> dict[str, Any]:
    """An event as the management API's `historyEvents` shows it: type by name, payloads only on request."""
    shown = {"EventType": NAMES.get(ev["EventType"], str(ev["EventType"])), "Timestamp": ev["Timestamp"]}
    for key in ("Name", "FunctionName", "TaskScheduledId", "TimerId", "FireAt", "Reason", "Details", "InstanceId"):
        if key in ev:
            shown[key] = ev[key]
    if with_output:
        for key in ("Input", "Result"):
            if key in ev:
                shown[key] = ev[key]
    return shown
