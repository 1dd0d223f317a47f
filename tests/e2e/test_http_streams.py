"""Streamed answers through the offline host with a real HTTP client: the app's edge (`Call.stream`) on the
worker's HTTP-stream types, served as ASGI into aiohttp (tests/fixtures/stream_app).

No timing is asserted: order is (the first chunk arrives while the producer is still held before its
second), and so are bounds (a client that never reads holds the producer back)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from devhost.processes import HostProcess

APP = Path(__file__).resolve().parent.parent / "fixtures" / "stream_app"
BLOCK = 64 * 1024
# Kernel socket buffers on both ends plus aiohttp's write buffer hold a few MiB; the producer may run that
# far ahead of a client that does not read, and no further.
HELD_BACK_BYTES = 32 * 1024 * 1024


@pytest.fixture(scope="module")
def stream_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host(app_dir=APP, ready=False)  # no /api/health in this app: listening is ready


def state(host: HostProcess, stream_id: str) -> dict:
    return httpx.get(f"{host.base_url}/api/test_stream/{stream_id}/state", timeout=30).json()


def wait_for(probe: Callable[[], dict], done: Callable[[dict], bool], what: str) -> dict:
    """Poll until `done(probe())` (a failsafe deadline only: what is asserted is the state reached)."""
    deadline = time.monotonic() + 60
    while True:
        seen = probe()
        if done(seen) or time.monotonic() > deadline:
            assert done(seen), f"{what}: {seen}"
            return seen
        time.sleep(0.1)


def test_a_chunk_arrives_before_the_producer_makes_the_next(stream_host: HostProcess) -> None:
    sid = uuid.uuid4().hex
    with httpx.Client(timeout=60) as client, client.stream("GET", f"{stream_host.base_url}/api/test_stream/{sid}") as r:
        assert r.status_code == 200
        assert r.headers["cache-control"] == "no-store"
        assert "content-length" not in r.headers
        lines = r.iter_lines()
        # The producer waits for the release before its second chunk: reading the first proves it was sent
        # while the rest did not exist yet.
        assert next(lines) == "first"
        assert state(stream_host, sid)["produced"] == 1
        httpx.post(f"{stream_host.base_url}/api/test_stream/{sid}/release", timeout=30)
        assert list(lines) == ["second"]
    assert wait_for(lambda: state(stream_host, sid), lambda s: s["outcome"] != "producing", "end")["outcome"] == (
        "complete"
    )


def test_a_client_that_goes_away_cancels_the_producer(stream_host: HostProcess) -> None:
    sid = uuid.uuid4().hex
    with httpx.Client(timeout=60) as client, client.stream("GET", f"{stream_host.base_url}/api/test_stream/{sid}") as r:
        assert next(r.iter_lines()) == "first"
    # The client closed the connection with the producer waiting (never released): it must be stopped.
    seen = wait_for(lambda: state(stream_host, sid), lambda s: s["outcome"] != "producing", "producer stopped")
    assert seen["outcome"] == "cancelled"
    assert seen["disconnected"] is True
    assert seen["produced"] == 1


def test_a_client_that_does_not_read_holds_the_producer_back(stream_host: HostProcess) -> None:
    sid = uuid.uuid4().hex
    url = f"{stream_host.base_url}/api/test_stream/{sid}?mode=endless"
    with httpx.Client(timeout=60) as client, client.stream("GET", url) as r:
        assert r.status_code == 200
        # Not reading: wait until the producer stops advancing (the writes wait on the full socket).
        last: list[int] = [-1]

        def settled(s: dict) -> bool:
            still, last[0] = s["produced"] == last[0], s["produced"]
            return still

        def state_a_moment_later() -> dict:
            time.sleep(0.5)
            return state(stream_host, sid)

        held = wait_for(state_a_moment_later, settled, "producer held back")
        assert held["outcome"] == "producing"
        assert held["produced"] * BLOCK < HELD_BACK_BYTES
        # Reading lets it go on: read well past what it had made when it was held.
        read = 0
        for chunk in r.iter_raw():
            read += len(chunk)
            if read > (held["produced"] + 64) * BLOCK:
                break
        assert state(stream_host, sid)["produced"] > held["produced"]
    stopped = wait_for(lambda: state(stream_host, sid), lambda s: s["outcome"] != "producing", "producer stopped")
    assert stopped["outcome"] in ("cancelled", "closed")
    assert stopped["disconnected"] is True
