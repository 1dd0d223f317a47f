"""The NeuBird client against the fake NeuBird server (a real HTTP server on 127.0.0.1, tests/support/fake_neubird).

Backoff waits go through an injected `sleep` that records them (no real waiting, no timed asserts); the only real
waits are the short timeouts of the slow-server and idle-stream cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr

from shared.core.errors import AppError, NotFound, RateLimited, UpstreamError, ValidationFailed
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.neubird.client import ClientLimits, NeubirdClient
from shared.neubird.prompt_stream import PromptStream
from shared.neubird.settings import NeubirdSettings
from shared.neubird.stream import Aggregator, TurnState, state_from_inspect
from shared.neubird.tokens import CachedToken, Credentials, TokenCache, token_expiry
from tests.support.fake_neubird import FakeNeubird

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1"}
PASSWORD = "s3cret-Pa55word"
FAST = ClientLimits(timeout_s=5, max_attempts=3, max_retry_wait_s=10, stream_idle_s=5)


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=30, seed=11, password=PASSWORD, investigation_seconds=20, time_scale=0.01) as nb:
        yield nb


@pytest.fixture(scope="module")
def guard() -> OutboundGuard:
    return OutboundGuard(Settings.from_env(LOCAL))


@dataclass
class Harness:
    """A client factory over one fake, one token cache, and recorders of backoff waits and upstream calls."""

    fake: FakeNeubird
    guard: OutboundGuard
    tokens: TokenCache = field(default_factory=TokenCache)
    waits: list[float] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    jitter: float = 0.5

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def client(
        self, *, password: str = PASSWORD, limits: ClientLimits = FAST, guard: OutboundGuard | None = None
    ) -> NeubirdClient:
        return NeubirdClient(
            self.fake.base_url,
            Credentials(self.fake.email, SecretStr(password)),
            guard=guard or self.guard,
            tokens=self.tokens,
            limits=limits,
            sleep=self.sleep,
            rng=lambda: self.jitter,
            on_call=self.calls.append,
        )


@pytest.fixture
def h(fake: FakeNeubird, guard: OutboundGuard) -> Harness:
    return Harness(fake, guard)


async def run_prompt(client: NeubirdClient, session: str, project: str, text: str) -> tuple[PromptStream, TurnState]:
    aggregator = Aggregator()
    async with client.prompt(session, project, text) as stream:
        async for event in stream:
            aggregator.feed(event)
    return stream, aggregator.state()


# --- auth --------------------------------------------------------------------------------------------------------


async def test_one_login_serves_many_calls_and_clients_sharing_the_cache(h: Harness) -> None:
    nb = h.fake
    async with h.client() as client:
        assert await client.organization_uuid() == nb.org_uuid
        projects = await client.list_projects()
        sessions = await client.list_sessions(nb.project_uuid, nb.org_uuid, start=0, limit=5, filters=[])
        inspected = await client.inspect(sessions[0]["session_uuid"], nb.project_uuid, nb.org_uuid)
    async with h.client() as second:
        assert await second.incident_report()
        assert await second.organization_uuid() == nb.org_uuid
    assert nb.stats()["logins"] == 1
    assert projects[0]["uuid"] == nb.project_uuid
    assert len(sessions) == 5
    assert inspected["session_info"]["session_uuid"] == sessions[0]["session_uuid"]
    # the org came with the login answer: GET /v1/user was never needed
    assert h.calls == ["login", "projects", "session_list", "inspect", "incident_report"]
    assert nb.stats()["total"] == len(h.calls)


async def test_organization_comes_from_get_user_when_the_login_did_not_give_it(h: Harness) -> None:
    async with h.client() as client:
        token = await client.login()
        h.tokens.put(h.fake.base_url, h.fake.email, CachedToken(token, token_expiry(token, 0) + 10**10))
        assert await client.organization_uuid() == h.fake.org_uuid
        assert await client.organization_uuid() == h.fake.org_uuid
    assert h.calls == ["login", "user"]


async def test_a_token_expiring_mid_run_is_replaced_by_one_new_login(h: Harness) -> None:
    nb = h.fake
    nb.token_policy(max_calls=2)  # the token works for two calls, then answers 401
    async with h.client() as client:
        first = await client.list_projects()
        await client.list_projects()
        third = await client.list_projects()  # 401 -> log in again -> retried once
        await client.list_projects()
    assert first == third
    assert nb.stats()["logins"] == 2
    assert h.calls == ["login", "projects", "projects", "projects", "login", "projects", "projects"]
    assert h.waits == []


async def test_a_token_the_server_forgot_is_replaced_and_the_prompt_still_streams(h: Harness) -> None:
    nb = h.fake
    session = nb.add_session(status="not_started")
    async with h.client() as client:
        await client.login()
        nb.expire_tokens()
        stream, state = await run_prompt(client, session, nb.project_uuid, "Why is checkout slow?")
    assert stream.outcome == "end_turn"
    assert state.ended
    assert h.calls == ["login", "prompt", "login", "prompt"]


async def test_a_second_401_after_a_fresh_login_is_an_authentication_error(h: Harness) -> None:
    nb = h.fake
    nb.token_policy(max_calls=0)  # every token is refused at once
    async with h.client() as client:
        with pytest.raises(UpstreamError) as caught:
            await client.list_projects()
    assert caught.value.details["type"] == "authentication"
    assert nb.stats()["logins"] == 2
    assert h.calls == ["login", "projects", "login", "projects"]


@pytest.mark.parametrize("failure_status", [401, 200], ids=["401", "200-with-error"])
async def test_wrong_credentials_are_an_authentication_error_naming_the_settings(
    h: Harness, failure_status: int, caplog: pytest.LogCaptureFixture
) -> None:
    h.fake.configure(login_failure_status=failure_status)
    caplog.set_level(logging.DEBUG)
    async with h.client(password="wrong-password-123") as client:
        with pytest.raises(UpstreamError) as caught:
            await client.list_projects()
    error = caught.value
    assert error.details["type"] == "authentication"
    assert error.code == "UPSTREAM_ERROR"
    assert any("NEUBIRD_EMAIL" in r and "NEUBIRD_PASSWORD" in r for r in error.recovery_suggestions)
    assert any("NEUBIRD_BASE_URL" in r for r in error.recovery_suggestions)
    assert h.calls == ["login"]  # a refused login is not retried
    assert_no_secret(["wrong-password-123"], error, caplog)


# --- resilience --------------------------------------------------------------------------------------------------


async def test_a_429_storm_is_retried_with_retry_after_then_rate_limited(h: Harness) -> None:
    nb = h.fake
    async with h.client() as client:
        await client.login()
        nb.rate_limit(10, retry_after_s=7)
        with pytest.raises(RateLimited) as caught:
            await client.list_projects()
    assert caught.value.details == {"type": "api", "route": "projects", "attempts": 3, "retry_after_seconds": 7}
    assert h.waits == [7, 7]  # Retry-After honoured instead of the jittered backoff
    assert h.calls == ["login", "projects", "projects", "projects"]


async def test_retry_after_is_capped_and_a_short_storm_passes(h: Harness) -> None:
    nb = h.fake
    limits = ClientLimits(timeout_s=5, max_attempts=4, max_retry_wait_s=2)
    async with h.client(limits=limits) as client:
        await client.login()
        nb.rate_limit(2, retry_after_s=30)
        projects = await client.list_projects()
    assert projects
    assert h.waits == [2, 2]


async def test_500s_then_success_back_off_with_full_jitter(h: Harness) -> None:
    nb = h.fake
    limits = ClientLimits(timeout_s=5, max_attempts=4, max_retry_wait_s=10)
    async with h.client(limits=limits) as client:
        await client.login()
        nb.fail(3, status=503)
        report = await client.incident_report()
    assert report["total_incidents"] > 0
    assert h.waits == [0.5, 1.0, 2.0]  # rng 0.5 x 1 s, 2 s, 4 s
    assert nb.stats()["statuses"].get(503) == 3


async def test_500s_beyond_the_attempts_are_an_api_error(h: Harness) -> None:
    nb = h.fake
    async with h.client() as client:
        await client.login()
        nb.fail(5, status=500)
        with pytest.raises(UpstreamError) as caught:
            await client.incident_report()
    assert caught.value.details == {"type": "api", "route": "incident_report", "attempts": 3, "status": 500}
    assert len(h.waits) == 2


async def test_the_login_itself_is_retried_on_5xx(h: Harness) -> None:
    h.fake.fail(1, status=502)
    async with h.client() as client:
        assert await client.list_projects()
    assert h.calls == ["login", "login", "projects"]


async def test_a_slow_server_times_out_and_is_retried_until_the_attempts_run_out(h: Harness) -> None:
    nb = h.fake
    async with h.client(limits=ClientLimits(timeout_s=0.3, max_attempts=2, max_retry_wait_s=1)) as client:
        await client.login()
        nb.slow(3.0)
        with pytest.raises(UpstreamError) as caught:
            await client.list_projects()
        nb.slow(0)
    assert caught.value.details["type"] == "api"
    assert "no answer in time" in caught.value.message
    assert h.calls == ["login", "projects", "projects"]
    assert len(h.waits) == 1


async def test_the_prompt_post_is_retried_before_its_stream_began(h: Harness) -> None:
    nb = h.fake
    session = nb.add_session(status="not_started")
    async with h.client() as client:
        await client.login()
        nb.fail(1, status=500)
        stream, state = await run_prompt(client, session, nb.project_uuid, "What changed in checkout?")
    assert stream.outcome == "end_turn"
    assert state.results.final_answer
    assert nb.calls("POST /v1/inference/session") == 2


async def test_a_response_over_the_cap_is_an_api_error(h: Harness) -> None:
    nb = h.fake
    limits = ClientLimits(timeout_s=5, max_attempts=3, max_response_bytes=4096)
    async with h.client(limits=limits) as client:
        with pytest.raises(UpstreamError, match="passed 4096 bytes"):
            await client.list_sessions(nb.project_uuid, nb.org_uuid, start=0, limit=30)
    assert h.calls == ["login", "session_list"]  # not retried


# --- routes and envelope errors ----------------------------------------------------------------------------------


async def test_routes_return_the_contract_shapes(h: Harness) -> None:
    nb = h.fake
    done = nb.add_session(alert_id="/aws/alerts/checkout-5xx-4411", status="completed", answer="DB pool<br>exhausted")
    async with h.client() as client:
        org = await client.organization_uuid()
        page = await client.list_sessions(
            nb.project_uuid,
            org,
            start=0,
            limit=10,
            filters=[{"key": "incident_info.title", "value": "", "operator": "in"}],
        )
        summary = await client.session_summary(done, nb.project_uuid)
        report = await client.session_report([done, "000000000000000000000000"], nb.project_uuid)
        inspected = await client.inspect(done, nb.project_uuid, org)
        new = await client.new_session(nb.project_uuid, org)
        from_alert = await client.session_from_alert(nb.project_uuid, org, "/aws/alerts/checkout-5xx-4411")
    assert page[0]["session_uuid"] == done  # newest first
    assert summary["session_info"]["session_uuid"] == done
    assert isinstance(report, list)
    assert len(report) == 1
    state = state_from_inspect(inspected)
    assert state is not None
    assert state.ended
    assert state.results.final_answer.startswith("DB pool\nexhausted")  # <br> became a line break
    assert new != from_alert
    assert (nb.sessions[from_alert].incident_info or {}).get("id") == "/aws/alerts/checkout-5xx-4411"


async def test_unknown_session_and_project_are_not_found(h: Harness) -> None:
    nb = h.fake
    async with h.client() as client:
        with pytest.raises(NotFound) as session_missing:
            await client.inspect("ffffffffffffffffffffffff", nb.project_uuid, nb.org_uuid)
        with pytest.raises(NotFound) as project_missing:
            await client.new_session("00000000-0000-4000-8000-000000000000", nb.org_uuid)
    assert session_missing.value.details["type"] == "investigation"
    assert project_missing.value.details["type"] == "api"
    assert "does not exist" in project_missing.value.message
    assert h.calls == ["login", "inspect", "new_session"]  # envelope errors are not retried


# --- the stream --------------------------------------------------------------------------------------------------


async def test_a_full_stream_agrees_with_inspect_afterwards(h: Harness) -> None:
    nb = h.fake
    session = nb.add_session(status="not_started")
    async with h.client() as client:
        stream, streamed = await run_prompt(client, session, nb.project_uuid, "Why did checkout fail?")
        assert nb.wait_finished(session)
        inspected = state_from_inspect(await client.inspect(session, nb.project_uuid, nb.org_uuid))
    assert stream.outcome == "end_turn"
    assert stream.error is None
    assert streamed.ended
    assert streamed.total_steps > 0
    assert streamed.completed_steps == streamed.total_steps
    assert inspected is not None
    assert streamed.results.final_answer == inspected.results.final_answer
    assert streamed.results.follow_up_suggestions == inspected.results.follow_up_suggestions
    assert [s["description"] for s in streamed.results.chain_of_thoughts] == [
        s["description"] for s in inspected.results.chain_of_thoughts
    ]
    assert {s.get("id") or s.get("title") for s in streamed.results.sources} == {
        s.get("id") or s.get("title") for s in inspected.results.sources
    }


@pytest.mark.parametrize("cot_mode", ["delta", "snapshot"])
async def test_both_chain_of_thought_modes_give_the_same_steps(h: Harness, cot_mode: Any) -> None:
    nb = h.fake
    nb.configure(cot_mode=cot_mode, done_marker=True)
    session = nb.add_session(status="not_started")
    async with h.client() as client:
        stream, state = await run_prompt(client, session, nb.project_uuid, "Investigate the latency alert")
        assert nb.wait_finished(session)
        inspected = state_from_inspect(await client.inspect(session, nb.project_uuid, nb.org_uuid))
    assert stream.outcome == "end_turn"
    assert inspected is not None
    assert state.results.chain_of_thoughts == inspected.results.chain_of_thoughts


async def test_a_broken_stream_keeps_what_was_read_and_says_the_turn_did_not_end(h: Harness) -> None:
    nb = h.fake
    session = nb.add_session(status="not_started")
    async with h.client() as client:
        await client.login()
        nb.break_stream_after(5)
        stream, state = await run_prompt(client, session, nb.project_uuid, "Why is the queue backing up?")
        assert nb.wait_finished(session)  # the investigation went on server-side: the caller falls back to inspect
        inspected = state_from_inspect(await client.inspect(session, nb.project_uuid, nb.org_uuid))
    assert stream.outcome == "broken"  # the fake cuts the chunked body: a protocol error, not a clean EOF
    assert stream.events_read == 5
    assert isinstance(stream.error, UpstreamError)
    assert "before the end of the turn" in stream.error.message
    assert stream.error.details["stream_outcome"] == stream.outcome
    assert not state.ended
    assert state.progress_text or state.session_name or state.total_steps  # partial results survived
    assert inspected is not None
    assert inspected.ended
    assert inspected.results.final_answer


async def test_an_unknown_session_in_the_prompt_is_an_in_stream_error(h: Harness) -> None:
    nb = h.fake
    async with h.client() as client:
        stream, state = await run_prompt(client, "ffffffffffffffffffffffff", nb.project_uuid, "Hello there")
    assert stream.outcome == "eof"
    assert any("does not exist" in e for e in state.errors)


async def test_a_silent_stream_hits_the_idle_timeout_and_keepalives_prevent_it(h: Harness) -> None:
    nb = h.fake
    nb.configure(time_scale=1.0, keepalive_seconds=30)
    silent = nb.add_session(status="not_started")
    nb.next_prompt(600, session_uuid=silent)  # events minutes apart, keepalives every 30 s
    limits = ClientLimits(timeout_s=5, max_attempts=2, stream_idle_s=0.4)
    async with h.client(limits=limits) as client:
        stream, state = await run_prompt(client, silent, nb.project_uuid, "A long one")
    assert stream.outcome == "idle_timeout"
    assert stream.error is not None
    assert "silent for 0.4 s" in stream.error.message
    assert not state.ended

    nb.configure(time_scale=0.002, keepalive_seconds=0.05)
    busy = nb.add_session(status="not_started")
    nb.next_prompt(600, session_uuid=busy)  # 1.2 s real with a keepalive every 50 ms: never idle 0.4 s
    async with h.client(limits=limits) as client:
        stream, state = await run_prompt(client, busy, nb.project_uuid, "A long one")
    assert stream.outcome == "end_turn"
    assert state.ended


# --- the outbound guard and secrets -------------------------------------------------------------------------------


async def test_the_outbound_guard_refuses_a_loopback_base_url_that_is_not_allow_listed(h: Harness) -> None:
    strict = OutboundGuard(Settings.from_env({"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true"}))
    async with h.client(guard=strict) as client:
        with pytest.raises(ValidationFailed) as caught:
            await client.list_projects()
    assert "NEUBIRD_BASE_URL" in caught.value.message
    assert "non-public address" in caught.value.message
    assert h.fake.stats()["total"] == 0
    assert h.calls == ["login"]  # counted, refused before any byte left


def assert_no_secret(secrets: list[str], error: AppError | None, caplog: pytest.LogCaptureFixture) -> None:
    texts = [r.getMessage() for r in caplog.records]
    if error is not None:
        texts += [str(error), error.message, repr(error), repr(error.details), repr(error.recovery_suggestions)]
    for secret in secrets:
        assert all(secret not in t for t in texts), secret


async def test_no_password_or_token_in_errors_logs_or_reprs(h: Harness, caplog: pytest.LogCaptureFixture) -> None:
    nb = h.fake
    caplog.set_level(logging.DEBUG)
    client = h.client()
    async with client:
        token = await client.login()
        nb.token_policy(max_calls=0)
        nb.expire_tokens()
        with pytest.raises(UpstreamError) as caught:
            await client.list_projects()
        second = h.tokens.get(nb.base_url, nb.email, 0)
    secrets = [PASSWORD, token, *([second.token] if second else [])]
    assert_no_secret(secrets, caught.value, caplog)
    reprs = [repr(client), repr(h.tokens), repr(Credentials(nb.email, SecretStr(PASSWORD)))]
    reprs += [repr(CachedToken(token, 0.0)), str(Credentials(nb.email, PASSWORD))]
    for text in reprs:
        assert PASSWORD not in text
        assert token not in text
        assert nb.email not in text or text.startswith("NeubirdClient")
    assert caplog.records  # the relogin was logged (without secrets)


# --- units that need no server ------------------------------------------------------------------------------------


def jwt(claims: str) -> str:
    import base64

    return "e30." + base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=") + ".c2ln"


@pytest.mark.parametrize(
    ("token", "now", "expires"),
    [
        (jwt('{"exp": 10000}'), 1000, 10000 - 300),
        (jwt('{"exp": 1600}'), 1000, 1300),  # under 10 minutes left: half the life
        (jwt('{"exp": 900}'), 1000, 1000),  # already expired
        (jwt('{"sub": "x"}'), 1000, 1000 + 55 * 60),
        (jwt('{"exp": "soon"}'), 1000, 1000 + 55 * 60),
        ("opaque-token", 1000, 1000 + 55 * 60),
        ("a.!!!.c", 1000, 1000 + 55 * 60),
    ],
)
def test_token_expiry(token: str, now: float, expires: float) -> None:
    assert token_expiry(token, now) == expires


def test_token_cache_keys_expiry_drop_and_clear() -> None:
    cache = TokenCache()
    cache.put("https://a.example/api/", "Me@X.io", CachedToken("t1", 100.0))
    cache.put("https://b.example/api", "me@x.io", CachedToken("t2", 100.0))
    assert cache.get("https://a.example/api", "me@x.io", 50.0) is not None
    assert cache.get("https://a.example/api", "me@x.io", 100.0) is None  # expired
    cache.drop("https://a.example/api", "me@x.io", token="other")  # a newer token is kept
    assert cache.get("https://a.example/api", "me@x.io", 50.0) is not None
    cache.clear("https://a.example/api")
    assert cache.get("https://a.example/api", "me@x.io", 50.0) is None
    assert cache.get("https://b.example/api", "me@x.io", 50.0) is not None
    cache.clear()
    assert len(cache) == 0


def test_limits_from_settings() -> None:
    settings = NeubirdSettings.model_validate(
        {"request_timeout_seconds": 12, "max_attempts": 5, "stream_idle_seconds": 90, "max_response_bytes": 65536}
    )
    limits = ClientLimits.from_settings(settings)
    assert (limits.timeout_s, limits.max_attempts, limits.stream_idle_s, limits.max_response_bytes) == (
        12,
        5,
        90,
        65536,
    )
    assert (limits.login_timeout_s, limits.max_line_bytes, limits.max_retry_wait_s) == (30, 1024 * 1024, 20)


# --- a creating POST is not retried once the server answered 2xx ---------------------------------------------------


@dataclass
class StallingServer:
    """A raw HTTP server on 127.0.0.1 that reads each request, then stalls before or after its 2xx headers."""

    after_headers: bool
    requests: int = 0
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
            0,
        )
        await reader.readexactly(length)
        self.requests += 1
        if self.after_headers:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{")
            await writer.drain()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await asyncio.sleep(30)
        writer.close()


@contextlib.asynccontextmanager
async def stalling(after_headers: bool) -> AsyncIterator[StallingServer]:
    server = StallingServer(after_headers)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(listener.wait_closed(), 1)


@pytest.mark.parametrize(
    ("after_headers", "creates", "requests"),
    [(True, True, 1), (True, False, 3), (False, True, 3)],
    ids=["create-after-2xx-not-retried", "read-after-2xx-retried", "create-before-answer-retried"],
)
async def test_a_creating_post_is_never_retried_after_a_2xx(
    guard: OutboundGuard, after_headers: bool, creates: bool, requests: int
) -> None:
    async with stalling(after_headers) as server:
        base = f"http://127.0.0.1:{server.port}/api"
        tokens = TokenCache()
        tokens.put(base, "sre@example.com", CachedToken("cached-token", 10.0**12))  # no login needed
        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        limits = ClientLimits(timeout_s=0.3, max_attempts=3, max_retry_wait_s=1)
        async with NeubirdClient(
            base, Credentials("sre@example.com", PASSWORD), guard=guard, tokens=tokens, limits=limits, sleep=sleep
        ) as client:
            call = (
                client.new_session("p-1", "o-1") if creates else client.list_sessions("p-1", "o-1", start=0, limit=10)
            )
            with pytest.raises(UpstreamError) as caught:
                await call
    assert server.requests == requests
    assert len(waits) == requests - 1
    if requests == 1:
        assert "not retried" in caught.value.message


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        ("0.5", 0.5),
        ("-3", 0.0),
        ("Wed, 21 Oct 2026 07:28:05 GMT", 5.0),  # an HTTP date, 5 s after the injected clock
        ("Wed, 21 Oct 2026 07:27:00 GMT", 0.0),  # in the past
        ("soon", None),
        ("", None),
        (None, None),
        ("nan", None),
    ],
)
def test_retry_after_header_forms(header: str | None, seconds: float | None) -> None:
    from datetime import UTC, datetime

    from shared.neubird.client import _retry_after

    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC).timestamp()
    assert _retry_after(header, lambda: now) == seconds
