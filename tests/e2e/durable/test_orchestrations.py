"""Durable orchestrations under the offline host: every feature, through the management HTTP API and the real client."""

from __future__ import annotations

import concurrent.futures
from datetime import datetime

from tests.e2e.durable.conftest import MGMT, DurableHost, key


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_fan_out_fan_in(durable: DurableHost) -> None:
    k = key()
    done = durable.wait(durable.start("fan_out", {"key": k, "n": 10}))
    assert done["runtimeStatus"] == "Completed"
    assert done["output"] == sum(2 * i for i in range(10))
    assert sorted(e["value"] for e in durable.effects(k)) == list(range(10))


def test_retry_with_backoff_succeeds_on_third_attempt(durable: DurableHost) -> None:
    k = key()
    iid = durable.start("retry_flaky", {"key": k, "fail_times": 2, "max_attempts": 4, "first_ms": 200, "backoff": 2.0})
    done = durable.wait(iid, showHistory=True, showHistoryOutput=True)
    assert done["runtimeStatus"] == "Completed"
    assert done["output"]["attempts"] == 3
    assert len(durable.effects(k)) == 3
    events = done["historyEvents"]
    timers = [e for e in events if e["EventType"] == "TimerCreated"]
    delays = [(_ts(t["FireAt"]) - _ts(t["Timestamp"])).total_seconds() for t in timers]
    assert delays == [0.2, 0.4]  # first interval, then doubled by the backoff coefficient
    assert [e["EventType"] for e in events].count("TaskFailed") == 2


def test_retry_interval_is_capped(durable: DurableHost) -> None:
    k = key()
    iid = durable.start(
        "retry_flaky", {"key": k, "fail_times": 2, "max_attempts": 3, "first_ms": 200, "backoff": 10.0, "max_ms": 300}
    )
    done = durable.wait(iid, showHistory=True)
    delays = [
        (_ts(t["FireAt"]) - _ts(t["Timestamp"])).total_seconds()
        for t in done["historyEvents"]
        if t["EventType"] == "TimerCreated"
    ]
    assert done["runtimeStatus"] == "Completed"
    assert delays == [0.2, 0.3]


def test_retries_exhausted_fail_the_orchestration(durable: DurableHost) -> None:
    k = key()
    done = durable.wait(durable.start("retry_flaky", {"key": k, "fail_times": 10, "max_attempts": 3, "first_ms": 100}))
    assert done["runtimeStatus"] == "Failed"
    assert len(durable.effects(k)) == 3
    assert "Orchestrator function 'retry_flaky' failed" in done["output"]
    assert "flaky failure 3" in done["output"]


def test_durable_timer_waits(durable: DurableHost) -> None:
    done = durable.wait(durable.start("timer_then_done", 1.0))
    assert done["runtimeStatus"] == "Completed"
    assert (_ts(done["output"]["resumed"]) - _ts(done["output"]["started"])).total_seconds() >= 1.0


def test_external_event(durable: DurableHost) -> None:
    iid = durable.start("wait_event", {})
    durable.wait_status(iid, lambda s: s["runtimeStatus"] == "Running")
    r = durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/approval", json={"by": "alice"})
    assert r.status_code == 202
    done = durable.wait(iid)
    assert done["output"] == {"outcome": "approved", "data": {"by": "alice"}}
    assert durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/approval", json={}).status_code == 410
    assert durable.mgmt.post(f"{MGMT}/instances/nope-{key()}/raiseEvent/approval", json={}).status_code == 404
    assert (
        durable.mgmt.post(
            f"{MGMT}/instances/{iid}/raiseEvent/approval", content=b"x", headers={"content-type": "text/plain"}
        ).status_code
        == 400
    )


def test_event_raised_before_the_orchestrator_waits_is_kept(durable: DurableHost) -> None:
    iid = durable.start("timer_then_done", 0.5)
    # The timer orchestration never waits for this event; raising it must not disturb it.
    assert durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/unrelated", json=1).status_code == 202
    assert durable.wait(iid)["runtimeStatus"] == "Completed"


def test_event_race_against_timer(durable: DurableHost) -> None:
    done = durable.wait(durable.start("wait_event", {"timeout_s": 0.5}))
    assert done["output"] == {"outcome": "timed out"}
    iid = durable.start("wait_event", {"timeout_s": 30})
    durable.wait_status(iid, lambda s: s["runtimeStatus"] == "Running")
    durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/approval", json="yes")
    assert durable.wait(iid)["output"] == {"outcome": "approved", "data": "yes"}


def test_terminate(durable: DurableHost) -> None:
    iid = durable.start("with_status")
    durable.wait_status(iid, lambda s: s["customStatus"] == {"stage": "waiting"})
    assert (
        durable.mgmt.post(f"{MGMT}/instances/{iid}/terminate", params={"reason": "operator said stop"}).status_code
        == 202
    )
    done = durable.wait(iid)
    assert done["runtimeStatus"] == "Terminated"
    assert done["output"] == "operator said stop"
    assert durable.mgmt.post(f"{MGMT}/instances/{iid}/terminate", params={"reason": "again"}).status_code == 410
    assert durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/go", json=1).status_code == 410


def test_custom_status_follows_the_orchestration(durable: DurableHost) -> None:
    iid = durable.start("with_status")
    waiting = durable.wait_status(iid, lambda s: s["customStatus"] == {"stage": "waiting"})
    assert waiting["runtimeStatus"] == "Running"
    durable.mgmt.post(f"{MGMT}/instances/{iid}/raiseEvent/go", json=True)
    done = durable.wait(iid)
    assert done["customStatus"] == {"stage": "done"}
    assert done["output"] == "ok"


def test_orchestrator_failure_shape(durable: DurableHost) -> None:
    r = durable.status(durable.start("failing"))
    done = durable.wait(r.json()["instanceId"])
    assert done["runtimeStatus"] == "Failed"
    assert done["output"].startswith("Orchestrator function 'failing' failed: orchestrator gave up")
    # As the extension: 200 by default, 500 when the caller asks for it.
    assert durable.status(done["instanceId"]).status_code == 200
    assert durable.status(done["instanceId"], returnInternalServerErrorOnFailure=True).status_code == 500


def test_activity_failure_shape(durable: DurableHost) -> None:
    done = durable.wait(durable.start("activity_failure"), showHistory=True)
    assert done["runtimeStatus"] == "Failed"
    assert "Activity function 'explode' failed: ValueError: activity exploded: disk full" in done["output"]
    failed = next(e for e in done["historyEvents"] if e["EventType"] == "TaskFailed")
    assert failed["Reason"].startswith("Activity function 'explode' failed")
    assert "stackTrace" in failed["Details"]
    caught = durable.wait(durable.start("caught_failure"))
    assert caught["runtimeStatus"] == "Completed"
    assert "activity exploded: handled" in caught["output"]["caught"]


def test_sub_orchestrations(durable: DurableHost) -> None:
    iid = durable.start("parent", [1, 2, 3])
    done = durable.wait(iid)
    assert done["runtimeStatus"] == "Completed"
    assert done["output"] == [2, 4, 6]
    child = durable.wait(f"{iid}:0")
    assert child["name"] == "child"
    assert child["runtimeStatus"] == "Completed"


def test_continue_as_new(durable: DurableHost) -> None:
    k = key()
    done = durable.wait(durable.start("countdown", {"key": k, "n": 3}))
    assert done["runtimeStatus"] == "Completed"
    assert done["output"] == "liftoff"
    assert [e["value"] for e in durable.effects(k)] == [3, 2, 1, 0]
    assert done["input"] == {"key": k, "n": 0}  # the last generation's input


def test_history_only_on_request(durable: DurableHost) -> None:
    iid = durable.start("fan_out", {"key": key(), "n": 2})
    plain = durable.wait(iid)
    assert "historyEvents" not in plain
    full = durable.wait(iid, showHistory=True, showHistoryOutput=True)
    kinds = [e["EventType"] for e in full["historyEvents"]]
    assert kinds[0] == "ExecutionStarted"
    assert kinds[-1] == "ExecutionCompleted"
    assert kinds.count("TaskScheduled") == 2
    completed = [e for e in full["historyEvents"] if e["EventType"] == "TaskCompleted"]
    assert all("Result" in e for e in completed)
    assert all("Result" not in e for e in durable.wait(iid, showHistory=True)["historyEvents"])


def test_status_shape_and_codes(durable: DurableHost) -> None:
    iid = durable.start("with_status", instance_id=f"named-{key()}")
    running = durable.wait_status(iid, lambda s: s["runtimeStatus"] == "Running")
    r = durable.status(iid)
    assert r.status_code == 202
    assert r.headers["Location"]
    assert r.headers["Retry-After"] == "5"
    assert set(running) == {
        "name",
        "instanceId",
        "runtimeStatus",
        "input",
        "customStatus",
        "output",
        "createdTime",
        "lastUpdatedTime",
    }
    assert running["createdTime"].endswith("Z")
    assert len(running["createdTime"]) == 20
    assert durable.status(f"missing-{key()}").status_code == 404
    durable.mgmt.post(f"{MGMT}/instances/{iid}/terminate", params={"reason": "done"})


def test_unknown_orchestrator_and_bad_input(durable: DurableHost) -> None:
    r = durable.mgmt.post(f"{MGMT}/orchestrators/no_such_orchestrator", json={})
    assert r.status_code == 400
    assert "no_such_orchestrator" in r.json()["ExceptionMessage"]
    r = durable.mgmt.post(
        f"{MGMT}/orchestrators/fan_out", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400


def test_purge_and_query(durable: DurableHost) -> None:
    iid = durable.start("fan_out", {"key": key(), "n": 1})
    durable.wait(iid)
    listed = durable.mgmt.get(f"{MGMT}/instances", params={"runtimeStatus": "Completed"}).json()
    assert iid in [i["instanceId"] for i in listed]
    assert all(i["runtimeStatus"] == "Completed" for i in listed)
    r = durable.mgmt.delete(f"{MGMT}/instances/{iid}")
    assert r.status_code == 200
    assert r.json() == {"instancesDeleted": 1}
    assert durable.status(iid).status_code == 404
    assert durable.mgmt.delete(f"{MGMT}/instances/{iid}").status_code == 404


def test_twenty_concurrent_instances(durable: DurableHost) -> None:
    keys = [key() for _ in range(20)]
    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        ids = list(pool.map(lambda k: durable.start("fan_out", {"key": k, "n": 5}), keys))
    results = [durable.wait(i, timeout=120) for i in ids]
    assert all(r["runtimeStatus"] == "Completed" and r["output"] == 20 for r in results)
    assert all(len(durable.effects(k)) == 5 for k in keys)
    assert durable.mgmt.get(f"{MGMT}/instances", timeout=10).status_code == 200  # the server stayed responsive


def test_real_client_operations(durable: DurableHost) -> None:
    started = durable.client("start_new", name="with_status", input={"who": "client"})
    assert started.status_code == 202
    links = started.json()
    assert {"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri", "purgeHistoryDeleteUri"} <= set(links)
    iid = links["id"]
    assert links["statusQueryGetUri"].startswith(durable.url)  # the request's origin, as the client rewrites it
    durable.wait_status(iid, lambda s: s["customStatus"] == {"stage": "waiting"})
    status = durable.client("get_status", instance_id=iid).json()["result"]
    assert status["runtimeStatus"] == "Running"
    assert status["input"] == {"who": "client"}
    assert iid in durable.client("get_status_by", statuses=["Running"]).json()["result"]
    assert durable.client("raise_event", instance_id=iid, event="go", data={"x": 1}).status_code == 200
    assert durable.wait(iid)["output"] == "ok"
    assert durable.client("purge", instance_id=iid).json()["result"] == 1
    assert durable.status(iid).status_code == 404
    other = durable.client("start_new", name="with_status").json()["id"]
    durable.wait_status(other, lambda s: s["runtimeStatus"] == "Running")
    assert durable.client("terminate", instance_id=other, reason="client stop").status_code == 200
    assert durable.wait(other)["runtimeStatus"] == "Terminated"
