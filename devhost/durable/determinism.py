"""Catch orchestrators that are not replay-safe (wall clock, random ids, I/O in the orchestrator).

Two checks on a finished instance: replaying its history twice must give the same actions, and the
activities and sub-orchestrations a replay schedules must be the ones the original run scheduled.
`datetime.now()` or `uuid4()` flowing into an action fails both.
"""

from __future__ import annotations

import json
import time
from typing import Any

from devhost.durable import history as h
from devhost.durable.engine import _flatten_actions, _replay
from devhost.durable.instances import Instance

_SCHEDULING = {0, 1, 2, 3}


def replay_actions(handle: Any, inst: Instance) -> list[dict[str, Any]]:
    body = json.dumps(
        {
            "history": inst.history,
            "instanceId": inst.instance_id,
            "isReplaying": True,
            "parentInstanceId": None,
            "input": inst.input,
            "upperSchemaVersion": 1,
        }
    )
    state, _, _ = _replay(handle, body)
    return [a for a in _flatten_actions((state or {}).get("actions")) if "compoundActions" not in a]


def _payload(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def nondeterminism(handle: Any, inst: Instance) -> list[str]:
    """Problems found (empty when the orchestrator replays deterministically)."""
    first = replay_actions(handle, inst)
    time.sleep(0.002)  # let a wall clock move between the two replays
    second = replay_actions(handle, inst)
    problems = []
    if first != second:
        problems.append(f"two replays of one history produced different actions: {first} != {second}")
    recorded = [
        (e["Name"], _payload(e.get("Input")))
        for e in inst.history
        if e["EventType"] in (h.TASK_SCHEDULED, h.SUB_ORCHESTRATION_CREATED)
    ]
    for action in first:
        if action.get("actionType") in _SCHEDULING:
            key = (action["functionName"], _payload(action.get("input")))
            if key not in recorded:
                problems.append(f"replay scheduled {key}, which the original run never scheduled")
    return problems
