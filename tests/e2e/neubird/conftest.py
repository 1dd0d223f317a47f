"""Shared hosts and fakes of the NeuBird end-to-end tests (package scope: started once for every module here).

- `fake` + `nb_host`: the main pair. The fake's clock is compressed: `time_scale` 0.01 real seconds per nominal
  second, so its default 60 s investigation takes 0.6 s and a planned 600 s one ~6 s. The host waits at most
  FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS=2 inside one request (the production budget is 200 s), so a long
  wait goes to the Durable run after 2 s; it polls every 200 ms (NEUBIRD_POLL_INTERVAL_MS) with enough attempts
  (NEUBIRD_MAX_POLL_ATTEMPTS) that the interval is not stretched.
- `fault_fake` + `fault_host`: faults (429 storms, 500s, slow answers, expiring tokens, broken streams) on their
  own fake so they never disturb the others; small retry waits, 3 attempts, a 1 s request timeout, a stream
  silent for 0.3 s is dropped (the fault fake sends keepalives every 0.1 s).
- `strict_fake` + `strict_host`: a stricter NeuBird (RFC 3339 offsets, HTTP 400 for undocumented filter keys,
  fields the contract does not name) and no default project.
- `bare_host`: no NEUBIRD_* at all (NOT_CONFIGURED).

Every body, header set, MCP result and progress message the tests read goes through `SEEN`, so the secrets
test can assert that the password and the issued tokens appear nowhere.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from mcp import Client

from devhost.processes import HostProcess
from tests.support.fake_neubird import FakeNeubird

PASSWORD = f"nb-pw-{uuid.uuid4().hex[:16]}"
EMAIL = "sre-bot@firebreak.test"
OUTBOUND = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1"}

SEEN: list[str] = []  # everything read from a host: bodies, headers, MCP results and progress messages


def keep(text: str) -> None:
    SEEN.append(text)


def ws(tag: str) -> str:
    return f"ws-nb-{tag}-{uuid.uuid4().hex[:8]}"


def dev(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"X-Dev-Workspace": workspace, "X-Dev-User": user}


@pytest.fixture(scope="package")
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(
        sessions=300,
        seed=3,
        investigation_seconds=60,
        time_scale=0.01,
        keepalive_seconds=0.2,
        email=EMAIL,
        password=PASSWORD,
    ) as nb:
        yield nb


@pytest.fixture(scope="package")
def nb_host(start_host: Callable[..., HostProcess], fake: FakeNeubird) -> HostProcess:
    return start_host(
        {
            **fake.env(),
            **OUTBOUND,
            "FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS": "2",
            # .invalid never resolves (RFC 2606): an allowed instance no call can reach, whatever the network.
            "FIREBREAK_NEUBIRD_ALLOWED_HOSTS": "*.app.neubird.ai,*.neubird.invalid",
            "NEUBIRD_POLL_INTERVAL_MS": "200",
            "NEUBIRD_MAX_POLL_ATTEMPTS": "2000",
        }
    )


@pytest.fixture(scope="package")
def fault_fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(
        sessions=60,
        seed=11,
        investigation_seconds=60,
        time_scale=0.01,
        keepalive_seconds=0.1,
        email=EMAIL,
        password=PASSWORD,
    ) as nb:
        yield nb


@pytest.fixture(scope="package")
def fault_host(start_host: Callable[..., HostProcess], fault_fake: FakeNeubird) -> HostProcess:
    return start_host(
        {
            **fault_fake.env(),
            **OUTBOUND,
            "FIREBREAK_NEUBIRD_MAX_ATTEMPTS": "3",
            "FIREBREAK_NEUBIRD_MAX_RETRY_WAIT_SECONDS": "0.5",
            "FIREBREAK_NEUBIRD_REQUEST_TIMEOUT_SECONDS": "1",
            "FIREBREAK_NEUBIRD_STREAM_IDLE_SECONDS": "0.3",
            "FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS": "10",
            "NEUBIRD_POLL_INTERVAL_MS": "100",
            "NEUBIRD_MAX_POLL_ATTEMPTS": "2000",
        }
    )


@pytest.fixture(scope="package")
def strict_fake() -> Iterator[FakeNeubird]:
    """A NeuBird stricter than the fake's defaults: RFC 3339 times with offsets, HTTP 400 for an undocumented filter
    key, and fields the contract does not name."""
    with FakeNeubird(
        sessions=120,
        seed=17,
        investigation_seconds=60,
        time_scale=0.01,
        keepalive_seconds=0.2,
        email=EMAIL,
        password=PASSWORD,
        strict=True,
        extra_fields=True,
    ) as nb:
        yield nb


@pytest.fixture(scope="package")
def strict_host(start_host: Callable[..., HostProcess], strict_fake: FakeNeubird) -> HostProcess:
    """A host on `strict_fake` with no default project: two ready projects to choose from."""
    env = {k: v for k, v in strict_fake.env().items() if k != "NEUBIRD_DEFAULT_PROJECT_UUID"}
    return start_host(
        {
            **env,
            **OUTBOUND,
            "FIREBREAK_NEUBIRD_SYNC_WAIT_SECONDS": "5",
            "NEUBIRD_POLL_INTERVAL_MS": "200",
            "NEUBIRD_MAX_POLL_ATTEMPTS": "2000",
        }
    )


@pytest.fixture(scope="package")
def bare_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({**OUTBOUND})


@asynccontextmanager
async def mcp(host: HostProcess, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The real mcp client over the host's Streamable HTTP endpoint; every response header set is kept."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def on_response(response: Any) -> None:
        keep(json.dumps(dict(response.headers)))

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [on_response]}) as http,
        Client(streamable_http_client(f"{host.base_url}/api/mcp", http_client=http)) as client,
    ):
        yield client


async def call(
    host: HostProcess, name: str, args: dict[str, Any], workspace: str, user: str = "alice"
) -> dict[str, Any]:
    """One tool call over MCP: its structured content (an error answers {"error": {...}})."""
    told: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        told.append(f"{progress} {total} {message}")

    async with mcp(host, dev(workspace, user)) as client:
        result = await client.call_tool(name, args, progress_callback=on_progress)
    keep(result.model_dump_json())
    keep("\n".join(told))
    assert result.structured_content is not None, result
    out = dict(result.structured_content)
    assert result.is_error == isinstance(out.get("error"), dict), result  # an error result is the envelope
    out["_progress"] = told
    return out


def post(host: HostProcess, name: str, args: Any, workspace: str, *, timeout: float = 60) -> httpx.Response:
    """One tool call over its own HTTP function, `POST /api/tools/{name}`."""
    r = httpx.post(f"{host.base_url}/api/tools/{name}", json=args, headers=dev(workspace), timeout=timeout)
    keep(r.text + "\n" + json.dumps(dict(r.headers)))
    return r


def tools_document(host: HostProcess) -> dict[str, dict[str, Any]]:
    """GET /api/tools: the registry's declarations by name."""
    return {t["name"]: t for t in httpx.get(f"{host.base_url}/api/tools", timeout=30).json()["tools"]}


def error_of(out: dict[str, Any]) -> dict[str, Any]:
    assert "error" in out, out
    err = out["error"]
    assert isinstance(err, dict)
    return err


async def run_done(host: HostProcess, run_id: str, workspace: str) -> dict[str, Any]:
    """get_run_status until the run is no longer pending or running (a background wait)."""
    deadline = time.monotonic() + 120  # a guard against hanging, not an assertion on speed
    while True:
        run = await call(host, "get_run_status", {"run_id": run_id}, workspace)
        if run.get("state") not in ("pending", "running") or time.monotonic() > deadline:
            return run
        await asyncio.sleep(0.5)
