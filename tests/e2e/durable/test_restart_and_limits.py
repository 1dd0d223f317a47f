"""Host restarts mid-orchestration, the activity concurrency limit, and replay determinism."""

from __future__ import annotations

import asyncio
import uuid

from devhost.durable.determinism import nondeterminism
from devhost.durable.instances import Instance, InstanceStore
from devhost.index import index_functions, load_app
from tests.e2e.durable.conftest import FIXTURE_APP, DurableHost, key, start_fixture_host


def test_restart_mid_orchestration_resumes_without_rerunning_completed_work(start_host, durable_env) -> None:
    env = {**durable_env, "FIREBREAK_TASK_HUB": f"restart{uuid.uuid4().hex[:6]}"}
    first = start_fixture_host(start_host, env)
    k = key()
    iid = first.start("slow_chain", {"key": k, "pause_s": 2.0})
    first.wait_status(iid, lambda s: s["runtimeStatus"] == "Running" and len(first.effects(k)) == 1)
    first.host.stop()  # mid-timer: step one done, steps two and three not started

    second = start_fixture_host(start_host, env)
    done = second.wait(iid)
    assert done["runtimeStatus"] == "Completed"
    assert done["output"] == "chain done"
    assert [e["step"] for e in second.effects(k)] == ["first", "second", "third"]  # each exactly once


def _timer_created(status: dict) -> bool:
    return any(e.get("EventType") == "TimerCreated" for e in status.get("historyEvents") or [])


def test_restart_resumes_many_instances(start_host, durable_env) -> None:
    env = {**durable_env, "FIREBREAK_TASK_HUB": f"many{uuid.uuid4().hex[:6]}"}
    first = start_fixture_host(start_host, env)
    keys = [key() for _ in range(5)]
    # A pause long enough that every instance is inside its timer when the host stops, even on a loaded
    # machine: an activity still running at the stop would run again (at-least-once), which is not this test.
    ids = [first.start("slow_chain", {"key": k, "pause_s": 6}) for k in keys]
    # Inside its timer means the timer is in the history: the first activity's result is then persisted,
    # not merely its effect written (an effect whose completion was not yet recorded would run again).
    for iid in ids:
        first.wait_status(iid, _timer_created, timeout=60, showHistory=True)
    assert all(len(first.effects(k)) == 1 for k in keys)
    first.host.stop()
    second = start_fixture_host(start_host, env)
    assert all(second.wait(i)["runtimeStatus"] == "Completed" for i in ids)
    assert all([e["step"] for e in second.effects(k)] == ["first", "second", "third"] for k in keys)


def test_activities_of_one_fan_out_respect_the_concurrency_setting(start_host, durable_env) -> None:
    env = {**durable_env, "FIREBREAK_TASK_HUB": f"limit{uuid.uuid4().hex[:6]}", "DEVHOST_DURABLE_MAX_ACTIVITIES": "3"}
    limited = start_fixture_host(start_host, env)
    k = key()
    assert limited.wait(limited.start("parallel_slow", {"key": k, "n": 9}))["output"] == 9
    spans = [(e["start"], e["end"]) for e in limited.effects(k)]
    peak = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert peak == 3


def _finished_instance(durable: DurableHost, durable_env: dict, name: str, payload) -> tuple[object, Instance]:
    iid = durable.start(name, payload)
    assert durable.wait(iid)["runtimeStatus"] == "Completed"
    store = InstanceStore(durable_env["AzureWebJobsStorage"], durable_env["FIREBREAK_TASK_HUB"])

    async def load():
        try:
            return await store.load(iid)
        finally:
            await store.close()

    functions = {
        f.name: f.user_function for f in index_functions(load_app(FIXTURE_APP, module_name="durable_fixture_app"))
    }
    inst = asyncio.run(load())
    assert inst is not None
    return functions[name], inst


def test_replay_is_deterministic_for_well_behaved_orchestrators(durable: DurableHost, durable_env) -> None:
    for name, payload in (
        ("fan_out", {"key": key(), "n": 4}),
        ("uses_context_id", None),
        ("retry_flaky", {"key": key(), "fail_times": 1, "max_attempts": 3, "first_ms": 50}),
    ):
        handle, inst = _finished_instance(durable, durable_env, name, payload)
        assert nondeterminism(handle, inst) == [], name


def test_wall_clock_and_random_ids_in_an_orchestrator_are_caught(durable: DurableHost, durable_env) -> None:
    for name in ("uses_wall_clock", "uses_random_id"):
        handle, inst = _finished_instance(durable, durable_env, name, None)
        problems = nondeterminism(handle, inst)
        assert problems, name
        assert any("never scheduled" in p for p in problems), name
