"""Waiting, as an agent meets it: progress notifications while streaming, an alert someone else is already
investigating, a failed investigation in the background run, inspect of a running session never cached."""

from __future__ import annotations

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, run_done, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("waits")


async def test_a_waited_answer_carries_the_steps_seen(nb_host: HostProcess) -> None:
    """What the stream showed comes back in `progress` (steps, sources), streaming on or off; with
    stream_updates the steps also arrive as MCP progress notifications (the endpoint answers tools/call as
    an SSE stream), each with a message, their values strictly increasing; without it none are sent."""
    args = {"prompt": "Why are the checkout pods restarting?", "wait_for_completion": True}
    for streaming in (True, False):
        out = await call(nb_host, "neubird_create_investigation", {**args, "stream_updates": streaming}, WS)
        assert out["status"] == "completed"
        assert out["progress"]["total_steps"] == out["progress"]["completed_steps"] > 0
        assert out["progress"]["unique_sources"]
        told = [line.split(" ", 2) for line in out["_progress"]]
        if streaming:
            assert told
            values = [float(value) for value, _, _ in told]
            assert values == sorted(set(values))
            assert all(message.strip() for _, _, message in told)
        else:
            assert told == []


async def test_an_alert_already_under_investigation_is_followed_not_restarted(
    nb_host: HostProcess, fake: FakeNeubird
) -> None:
    alert = "/aws/alerts/queue-depth-7781"
    sid = fake.add_session(alert_id=alert, title="Queue depth high on orders", status="in_progress")
    created = fake.calls("POST /v1/inference/session:create")
    prompts = fake.calls("POST /v1/inference/session")
    out = await call(
        nb_host,
        "neubird_investigate_alert",
        {"alert_id": alert, "wait_for_completion": True, "max_wait_seconds": 1},
        WS,
    )
    assert out["status"] == "in_progress", out
    assert out["session_uuid"] == sid
    assert fake.calls("POST /v1/inference/session:create") == created  # no second session for the alert
    assert fake.calls("POST /v1/inference/session") == prompts  # and no second prompt
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": sid}, WS)
    assert status["status"] == "in_progress"


async def test_a_failed_investigation_in_the_background_run(nb_host: HostProcess, fake: FakeNeubird) -> None:
    fake.next_prompt(600, fail=True)  # the fake fails it at 80 % of 600 nominal seconds: ~4.8 s real, past the 2 s
    out = await call(
        nb_host,
        "neubird_create_investigation",
        {"prompt": "Audit everything and fail halfway", "wait_for_completion": True, "max_wait_seconds": 600},
        WS,
    )
    assert out["status"] == "in_progress", out
    run = await run_done(nb_host, out["run_id"], WS)
    assert run["state"] == "completed", run
    assert run["output"]["status"] == "failed", run["output"]
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": out["session_uuid"]}, WS)
    assert status["status"] == "failed"
    assert "neubird_inspect_session" in status["next_action"]


async def test_inspect_of_a_running_session_is_never_cached(nb_host: HostProcess, fake: FakeNeubird) -> None:
    fake.next_prompt(300)  # ~3 real seconds
    out = await call(nb_host, "neubird_create_investigation", {"prompt": "Look at the nightly batch please"}, WS)
    sid = out["session_uuid"]
    running = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, WS)
    assert running["prompt_cycles"][-1]["status"] != "PROMPT_STATUS_COMPLETED"
    assert fake.wait_finished(sid, timeout=60)
    done = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, WS)
    assert done["prompt_cycles"][-1]["status"] == "PROMPT_STATUS_COMPLETED"
    assert done["prompt_cycles"][-1]["final_answer"]
