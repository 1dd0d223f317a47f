"""A "10-minute" investigation finished through the Durable path, over MCP.

Time is compressed twice: the fake runs on `time_scale` 0.01 (one nominal second is 10 ms real), so the planned
600 s investigation takes ~6 real seconds; and `nb_host` waits at most 2 s inside one request
(FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS=2 standing in for the production 200 s). So the tool answers in_progress
with a run_id after ~2 s, and the `neubird_wait_orchestrator` run (polling every 200 ms on durable timers)
finishes the wait, exactly as a real 10-minute investigation would behind a 200 s budget.
"""

from __future__ import annotations

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, run_done, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("durable")


async def test_ten_minute_investigation_finishes_in_a_durable_run(nb_host: HostProcess, fake: FakeNeubird) -> None:
    fake.next_prompt(600)  # nominal 10 minutes
    out = await call(
        nb_host,
        "neubird_create_investigation",
        {
            "prompt": "Audit the whole production estate for misconfigurations",
            "timeframe": "last 24 hours",
            "wait_for_completion": True,
            "max_wait_seconds": 900,
        },
        WS,
    )
    assert out["status"] == "in_progress", out
    assert out["run_id"], out
    sid = out["session_uuid"]
    assert out["run_id"] in out["next_action"]
    assert "neubird_get_investigation_status" in out["next_action"]
    assert out["progress"]["total_steps"] >= 1  # steps streamed during the 2 s
    running = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": sid}, WS)
    assert running["status"] == "in_progress", running
    assert 0 <= running["progress_percentage"] < 100

    run = await run_done(nb_host, out["run_id"], WS)
    assert run["state"] == "completed", run
    assert run["output"]["status"] == "completed", run["output"]
    assert run["output"]["session_uuid"] == sid
    assert run["output"]["investigation_results"]["final_answer"]
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": sid}, WS)
    assert status["status"] == "completed"
    assert status["progress_percentage"] == 100
    # Another workspace cannot read the run.
    other = await call(nb_host, "get_run_status", {"run_id": out["run_id"]}, ws("durable-other"))
    assert other["error"]["code"] == "NOT_FOUND", other
    assert status["investigation_results"]["final_answer"] == run["output"]["investigation_results"]["final_answer"]


async def test_without_waiting_no_run_is_started(nb_host: HostProcess, fake: FakeNeubird) -> None:
    fake.next_prompt(600)
    out = await call(nb_host, "neubird_create_investigation", {"prompt": "Audit the staging estate please"}, WS)
    assert out["status"] == "created"
    assert out.get("run_id") is None
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": out["session_uuid"]}, WS)
    assert status["status"] == "in_progress"
