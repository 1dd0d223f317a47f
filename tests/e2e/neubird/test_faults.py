"""NeuBird misbehaving, over MCP: expiring tokens, 429 storms, 500s, slow answers, a stream that breaks mid-turn.

All on `fault_host` + `fault_fake` (conftest): 3 attempts per call, retry waits capped at 0.5 s, a 1 s request
timeout. The fake counts every request per route, so each test says how many calls NeuBird saw.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import OUTBOUND, call, error_of, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("faults")
LIST = "POST /v1/inference/session/list"
INSPECT = "POST /v1/inference/session/inspect"
PROMPT = "POST /v1/inference/session"


async def warm(host: HostProcess) -> None:
    """One upstream call, so the host holds a fresh token before the fault starts."""
    await call(host, "neubird_list_sessions", {"limit": 1}, WS)


@pytest.fixture(autouse=True)
def calm(fault_fake: FakeNeubird) -> Iterator[None]:
    """Every test starts and ends with a well-behaved fake (tokens limited by an earlier test are dropped)."""
    fault_fake.expire_tokens()
    fault_fake.rate_limit(0)
    fault_fake.fail(0)
    fault_fake.slow(0)
    fault_fake.token_policy(lifetime_seconds=86_400, max_calls=None)
    yield
    fault_fake.rate_limit(0)
    fault_fake.fail(0)
    fault_fake.slow(0)
    fault_fake.token_policy(lifetime_seconds=86_400, max_calls=None)


async def test_expired_token_is_renewed_and_the_call_succeeds(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await call(fault_host, "neubird_list_projects", {}, WS)  # logged in
    logins = fault_fake.stats()["logins"]
    fault_fake.expire_tokens()
    out = await call(fault_host, "neubird_list_sessions", {"limit": 5}, WS)
    assert out["count"] == 5
    assert fault_fake.stats()["logins"] == logins + 1
    assert fault_fake.stats()["statuses"].get(401, 0) >= 1


async def test_tokens_expiring_mid_investigation(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    """Tokens die after 2 calls each, and the stream breaks so the wait goes on by polling: several re-logins
    happen inside one tool call, which still answers the completed investigation."""
    fault_fake.token_policy(max_calls=2)
    fault_fake.expire_tokens()
    fault_fake.break_stream_after(2)
    fault_fake.next_prompt(200)  # 2 s of compressed time: several polls
    logins = fault_fake.stats()["logins"]
    out = await call(
        fault_host,
        "neubird_create_investigation",
        {"prompt": "Why is checkout latency high?", "wait_for_completion": True},
        WS,
    )
    assert out["status"] == "completed", out
    assert out["investigation_results"]["final_answer"]
    assert fault_fake.stats()["logins"] >= logins + 3


async def test_concurrent_calls_after_an_expiry_log_in_once(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await warm(fault_host)
    fault_fake.expire_tokens()  # the host's cached token is now refused (401) by NeuBird
    logins = fault_fake.stats()["logins"]
    outs = await asyncio.gather(*(call(fault_host, "neubird_list_sessions", {"limit": 1}, WS) for _ in range(8)))
    assert [o["count"] for o in outs] == [1] * 8
    assert fault_fake.stats()["logins"] == logins + 1  # one login shared, not one per call


async def test_a_429_storm_that_ends_honours_retry_after(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await warm(fault_host)
    before = fault_fake.calls(LIST)
    fault_fake.rate_limit(2, retry_after_s=0.4)
    started = time.monotonic()
    out = await call(fault_host, "neubird_list_sessions", {"limit": 3}, WS)
    waited = time.monotonic() - started
    assert out["count"] == 3
    assert fault_fake.calls(LIST) == before + 3  # two 429s, then the answer
    # Retry-After was waited out before each retry (a lower bound only: never flaky).
    assert waited >= 0.8


async def test_a_429_storm_that_never_ends_is_rate_limited(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await warm(fault_host)
    before = fault_fake.calls(LIST)
    fault_fake.rate_limit(1000, retry_after_s=0.2)
    out = await call(fault_host, "neubird_list_sessions", {"limit": 3}, WS)
    err = error_of(out)
    assert err["code"] == "RATE_LIMITED", err
    assert err["details"]["type"] == "api"
    assert err["details"]["retry_after_seconds"] >= 1
    assert err["recovery_suggestions"]
    assert fault_fake.calls(LIST) == before + 3  # bounded: FIREBREAK_NEUBIRD_MAX_ATTEMPTS=3


async def test_500s_then_success(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await warm(fault_host)
    before = fault_fake.calls(LIST)
    fault_fake.fail(2, 500)
    out = await call(fault_host, "neubird_list_sessions", {"limit": 4}, WS)
    assert out["count"] == 4
    assert fault_fake.calls(LIST) == before + 3
    fault_fake.fail(1000, 503)
    down = await call(fault_host, "neubird_list_sessions", {"limit": 4}, WS)
    err = error_of(down)
    assert err["code"] == "UPSTREAM_ERROR", err
    assert err["details"]["type"] == "api"
    assert err["details"]["status"] == 503


async def test_slow_answers(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    await warm(fault_host)
    fault_fake.slow(0.5)  # under the 1 s request timeout: just slow
    out = await call(fault_host, "neubird_get_incident_report", {}, WS)
    assert out["total_incidents"] > 0
    fault_fake.slow(1.5)  # over it: every attempt times out
    before = fault_fake.calls("GET /v1/inference/incident_report")
    late = await call(fault_host, "neubird_get_incident_report", {}, WS)
    err = error_of(late)
    assert err["code"] == "UPSTREAM_ERROR", err
    assert err["details"]["type"] == "api"
    assert "in time" in err["message"]
    assert fault_fake.calls("GET /v1/inference/incident_report") == before + 3


async def test_a_prompt_that_may_have_been_taken_is_not_sent_twice(
    fault_host: HostProcess, fault_fake: FakeNeubird
) -> None:
    """The prompt call gets no answer in time (NeuBird takes it late): retrying would start a second
    investigation in the session, so the call fails once and says how to check."""
    await warm(fault_host)
    fault_fake.slow(1.5, route=PROMPT)  # past the host's limits for the stream's first bytes
    before = fault_fake.calls(PROMPT)
    out = await call(fault_host, "neubird_create_investigation", {"prompt": "Why is the billing export late?"}, WS)
    err = error_of(out)
    assert err["code"] == "UPSTREAM_ERROR", err
    assert "not started twice" in err["message"]
    assert any("neubird_get_investigation_status" in s for s in err["recovery_suggestions"])
    assert fault_fake.calls(PROMPT) == before + 1


async def test_a_stream_broken_mid_turn_still_answers_by_polling(
    fault_host: HostProcess, fault_fake: FakeNeubird
) -> None:
    fault_fake.break_stream_after(3)
    before = fault_fake.calls(INSPECT)
    out = await call(
        fault_host,
        "neubird_create_investigation",
        {"prompt": "Analyze my EKS cluster for security issues", "wait_for_completion": True},
        WS,
    )
    # .get: an error envelope (the fixture's 1 s request timeout on a machine loaded by other work) shows itself.
    assert out.get("status") == "completed", out
    assert out["investigation_results"]["final_answer"]
    assert out["investigation_results"]["chain_of_thoughts"]
    # The rest came from polling inspect (at least once), plus the one read that warms the completed cache.
    assert fault_fake.calls(INSPECT) >= before + 2
    assert fault_fake.session_view(out["session_uuid"])["prompt_cycle"][-1]["status"] == "PROMPT_STATUS_COMPLETED"


async def test_a_silent_stream_is_dropped_and_the_answer_still_comes(
    fault_host: HostProcess, fault_fake: FakeNeubird
) -> None:
    """No keepalives and gaps between events longer than the host's 0.3 s idle limit: the stream is dropped,
    the investigation goes on at NeuBird, and the call finishes by polling."""
    fault_fake.configure(keepalive_seconds=30)
    fault_fake.next_prompt(600)  # ~6 s real; its longest gaps between events are over 0.5 s
    before = fault_fake.calls(INSPECT)
    try:
        out = await call(
            fault_host,
            "neubird_create_investigation",
            {"prompt": "Why is the search index stale?", "wait_for_completion": True},
            WS,
        )
    finally:
        fault_fake.configure(keepalive_seconds=0.1)
    assert out["status"] == "completed", out
    assert out["investigation_results"]["final_answer"]
    assert fault_fake.calls(INSPECT) >= before + 2  # polled (then the read that warms the completed cache)


async def test_a_failed_prompt_is_an_investigation_error(fault_host: HostProcess, fault_fake: FakeNeubird) -> None:
    fault_fake.next_prompt(fail=True)
    out = await call(
        fault_host,
        "neubird_create_investigation",
        {"prompt": "Why did the nightly job fail?", "wait_for_completion": True},
        WS,
    )
    err = error_of(out)
    assert err["code"] == "UPSTREAM_ERROR", err
    assert err["details"]["type"] == "investigation"
    assert err["details"]["session_uuid"]
    status = await call(
        fault_host, "neubird_get_investigation_status", {"session_uuid": err["details"]["session_uuid"]}, WS
    )
    assert status["status"] == "failed"


async def test_login_refused_is_an_authentication_error(
    start_host: Callable[..., HostProcess], fault_fake: FakeNeubird
) -> None:
    wrong = start_host({**fault_fake.env(), **OUTBOUND, "NEUBIRD_PASSWORD": "not-the-password"})
    out = await call(wrong, "neubird_list_projects", {}, ws("wrong-pw"))  # a workspace with no cached projects
    err = error_of(out)
    assert err["code"] == "UPSTREAM_ERROR", err
    assert err["details"]["type"] == "authentication"
    assert any("NEUBIRD_PASSWORD" in s for s in err["recovery_suggestions"])


async def test_a_slow_project_refresh_does_not_undo_a_concurrent_defaults_change(
    fault_host: HostProcess, fault_fake: FakeNeubird
) -> None:
    """The project list is refreshed (slowly) while the same caller sets a default: both must stick."""
    mine = ws("race")
    fault_fake.slow(0.4)  # each NeuBird answer takes 0.4 s: the refresh below holds its state for ~0.8 s
    listing = asyncio.create_task(call(fault_host, "neubird_list_projects", {}, mine))
    await asyncio.sleep(0.3)  # ordering only: the refresh has read the caller's state and is waiting on NeuBird
    changed = await call(fault_host, "neubird_configure_defaults", {"default_timeframe": "last 5 hours"}, mine)
    assert changed["current_defaults"]["timeframe"] == "last 5 hours"
    listed = await listing
    assert listed["cached"] is False
    fault_fake.slow(0)
    shown = await call(fault_host, "neubird_configure_defaults", {}, mine)
    assert shown["current_defaults"]["timeframe"] == "last 5 hours"  # not overwritten by the refresh
    assert (await call(fault_host, "neubird_list_projects", {}, mine))["cached"] is True  # nor the other way
