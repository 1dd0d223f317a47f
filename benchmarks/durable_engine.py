"""Durable engine overhead: an orchestration of 100 sequential no-op activities, time per activity round trip.

Each round trip is: persist the scheduled task, run the activity, persist its result, replay the
orchestrator over the grown history, persist again. The baseline is one instance-state write to the
same Azurite in the same run, so the ratio reads as "an activity costs N state writes".
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from devhost.durable.instances import Instance, InstanceStore
from devhost.processes import HostProcess
from devhost.stack import ROOT

FIXTURE_APP = ROOT / "tests" / "fixtures" / "durable_app"
MGMT = "/runtime/webhooks/durabletask"
ACTIVITIES = 100


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _orchestrate(base_url: str, name: str, payload: object, system_key: str) -> dict[str, Any]:
    with httpx.Client(base_url=base_url, timeout=60, headers={"x-functions-key": system_key}) as http:
        iid = http.post(f"{MGMT}/orchestrators/{name}", json=payload).json()["id"]
        while True:
            r = http.get(f"{MGMT}/instances/{iid}", params={"showHistory": "true"})
            if r.status_code != 202:
                status: dict[str, Any] = r.json()
                return status
            time.sleep(0.05)


def _elapsed(status: dict[str, Any]) -> float:
    events = status["historyEvents"]
    return (_ts(events[-1]["Timestamp"]) - _ts(events[0]["Timestamp"])).total_seconds()


async def _baseline_write(connection_string: str, hub: str, history_events: int) -> float:
    store = InstanceStore(connection_string, hub)
    event = {
        "EventType": 5,
        "EventId": -1,
        "IsPlayed": False,
        "Timestamp": "2026-01-01T00:00:00.000000Z",
        "TaskScheduledId": 1,
        "Result": "1",
    }
    inst = Instance("bench", "noop_chain", "Running", "100", "", "", history=[event] * history_events)
    timings = []
    try:
        for _ in range(60):
            started = time.perf_counter()
            await store.save(inst)
            timings.append(time.perf_counter() - started)
    finally:
        await store.close()
    return statistics.median(timings[10:])


def run(env: dict[str, str], workdir: Path) -> list[dict[str, Any]]:
    hub = f"bench{uuid.uuid4().hex[:6]}"
    system_key = uuid.uuid4().hex  # the management API always needs the system key
    host_env = {
        **env,
        "FIREBREAK_TASK_HUB": hub,
        "DURABLE_TEST_DIR": str(workdir),
        "FIREBREAK_LOG_LEVEL": "WARNING",
        "DEVHOST_SYSTEM_KEY": system_key,
    }
    host = HostProcess(host_env, workdir / "durable-host.log", app_dir=FIXTURE_APP)
    try:
        host.wait_listening()
        _orchestrate(host.base_url, "noop_chain", 5, system_key)  # warm-up
        chain = _orchestrate(host.base_url, "noop_chain", ACTIVITIES, system_key)
        fan = _orchestrate(host.base_url, "fan_out", {"key": "bench", "n": ACTIVITIES}, system_key)
    finally:
        host.stop()
    assert chain["runtimeStatus"] == "Completed"
    assert fan["runtimeStatus"] == "Completed"
    # Average history size over the chain is about half its final size.
    baseline = asyncio.run(_baseline_write(env["AzureWebJobsStorage"], hub, len(chain["historyEvents"]) // 2))
    per_sequential = _elapsed(chain) / ACTIVITIES
    per_parallel = _elapsed(fan) / ACTIVITIES
    return [
        {
            "name": "durable_activity_round_trip_sequential",
            "per_activity_ms": round(per_sequential * 1000, 2),
            "baseline_state_write_ms": round(baseline * 1000, 2),
            "ratio": round(per_sequential / baseline, 2),
            "budget": None,
            "ok": True,
            "activities": ACTIVITIES,
        },
        {
            "name": "durable_activity_fan_out_100",
            "per_activity_ms": round(per_parallel * 1000, 2),
            "baseline_state_write_ms": round(baseline * 1000, 2),
            "ratio": round(per_parallel / baseline, 2),
            "budget": None,
            "ok": True,
            "activities": ACTIVITIES,
        },
    ]
