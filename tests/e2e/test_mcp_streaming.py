"""tools/call over SSE with the real mcp client: progress notifications for a long tool, JSON for clients
without SSE, the server's name and version, correlation_id in the schemas, and a progress token that is
not this request's reaches nothing (stateless)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest
from mcp import Client
from mcp_types import LoggingLevel, LoggingMessageNotificationParams

from devhost.processes import HostProcess
from shared.app.capabilities import catalogue
from shared.app.wiring import load_settings
from tests.support.target_site import target_site

MODES = ["legacy", "2026-07-28"]
LOCAL_PROBES = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
PATHS = [f"/slow?ms=700&n={i}" for i in range(4)]


@pytest.fixture(scope="module")
def site():
    with target_site() as (s, _):
        yield s


@pytest.fixture(scope="module")
def probe_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host(LOCAL_PROBES)


def collect_args(site_url: str) -> dict:
    return {"base_url": site_url, "url_paths": PATHS, "sample_count": 1, "warmup_count": 0, "timeout_ms": 3000}


@pytest.mark.parametrize("mode", MODES)
async def test_long_tool_streams_progress_then_the_result(probe_host: HostProcess, site, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(f"{probe_host.base_url}/api/mcp", mode=mode) as client:
        result = await client.call_tool("collect.run", collect_args(site.url), progress_callback=on_progress)
    assert result.is_error is False, result.content
    assert result.structured_content["state"] == "completed"
    assert len(seen) >= 2
    assert [p for p, _, _ in seen] == sorted({p for p, _, _ in seen})  # strictly increasing
    assert all(total == len(PATHS) for _, total, _ in seen)
    assert all(message for _, _, message in seen)


async def test_a_silent_wait_still_reports_with_heartbeats(probe_host: HostProcess, site) -> None:
    """One probe that takes 2.5 s reports nothing of its own while it runs: heartbeats say the call still
    waits (the latest message with the seconds waited), between step 0 and step 1."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    args = {**collect_args(site.url), "url_paths": ["/slow?ms=2500"]}
    async with Client(f"{probe_host.base_url}/api/mcp", mode="legacy") as client:
        result = await client.call_tool("collect.run", args, progress_callback=on_progress)
    assert result.is_error is False, result.content
    beats = [(p, m) for p, _, m in seen if m is not None and m.endswith(" s)")]
    assert beats
    assert all(0 < p < 1 for p, _ in beats)
    assert all(m.startswith("probing /slow (") for _, m in beats)


async def test_progress_reaches_the_client_while_the_tool_still_waits(probe_host: HostProcess, site) -> None:
    """The edge streams: the probe's target answers only once the client has seen 8 heartbeats, so a buffered
    reply (notifications only with the result) would never release it. No clock in the test: the order proves it.
    The heartbeats carry the server's seconds waited, one a second at least (unit: test_steady_progress)."""
    beats: list[str] = []
    released_by_progress = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if message is not None and message.endswith(" s)"):
            beats.append(message)
        if len(beats) >= 8 and not site.gate.is_set():
            released_by_progress.set()
            site.gate.set()

    site.gate.clear()
    args = {**collect_args(site.url), "url_paths": ["/gate"], "timeout_ms": 15000}
    try:
        async with Client(f"{probe_host.base_url}/api/mcp", mode="legacy") as client:
            result = await client.call_tool("collect.run", args, progress_callback=on_progress)
    finally:
        site.gate.set()  # never leave the target's thread waiting for another test
    assert released_by_progress.is_set(), "no heartbeat reached the client before the tool ended"
    assert result.is_error is False, result.content
    assert result.structured_content["state"] == "completed"
    waited = [int(m.rsplit("(", 1)[1].split()[0]) for m in beats]
    assert waited == sorted(set(waited))  # each heartbeat a later second of the same wait


@pytest.mark.parametrize(
    ("mode", "log_level", "expected"),
    [("legacy", None, True), ("2026-07-28", None, False), ("2026-07-28", "info", True), ("2026-07-28", "error", False)],
)
async def test_log_notifications_follow_the_default_level_or_the_per_call_opt_in(
    probe_host: HostProcess, site, mode: str, log_level: LoggingLevel | None, expected: bool
) -> None:
    """Handshake clients get FIREBREAK_MCP_LOG_LEVEL (info) and above; 2026-07-28 clients only what they opt in to."""
    logged: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logged.append(params)

    args = {**collect_args(site.url), "url_paths": ["/health"]}
    async with Client(
        f"{probe_host.base_url}/api/mcp", mode=mode, logging_callback=on_log, log_level=log_level
    ) as client:
        result = await client.call_tool("collect.run", args)
    assert result.is_error is False, result.content
    collect_logs = [p for p in logged if str(p.data).startswith("collect.run completed")]
    assert bool(collect_logs) is expected
    assert all(p.level == "info" for p in collect_logs)


def post(host: HostProcess, accept: str, message: dict) -> httpx.Response:
    return httpx.post(
        f"{host.base_url}/api/mcp",
        headers={"accept": accept, "content-type": "application/json", "mcp-protocol-version": "2025-06-18"},
        content=json.dumps(message),
        timeout=60,
    )


def call_message(site_url: str, token: object | None) -> dict:
    params: dict = {"name": "collect.run", "arguments": collect_args(site_url)}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


def messages_end_with_result(body: str) -> bool:
    return "result" in sse_messages(body)[-1]


def sse_messages(body: str) -> list[dict]:
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]


def test_sse_client_gets_event_stream_with_progress_for_its_own_token(probe_host: HostProcess, site) -> None:
    r = post(probe_host, "application/json, text/event-stream", call_message(site.url, "mine-1"))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    messages = sse_messages(r.text)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert progress
    assert {m["params"]["progressToken"] for m in progress} == {"mine-1"}
    assert messages[-1]["id"] == 7
    assert messages[-1]["result"]["isError"] is False


def test_json_only_client_gets_one_json_reply_never_406(probe_host: HostProcess, site) -> None:
    r = post(probe_host, "application/json", call_message(site.url, "mine-2"))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["result"]["isError"] is False


async def test_a_progress_token_of_another_request_reaches_nothing(probe_host: HostProcess, site) -> None:
    """Stateless: a call reports only on its own token. Three calls run at once, two naming the token "theirs" and
    one with none: the tokenless call's stream gets no progress at all while the others report (the server
    has no way to aim a notification at another request's token or stream)."""
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    async with httpx.AsyncClient(base_url=probe_host.base_url, headers=headers, timeout=60) as http:
        first, second, silent = await asyncio.gather(
            http.post("/api/mcp", json=call_message(site.url, "theirs")),
            http.post("/api/mcp", json=call_message(site.url, "theirs")),
            http.post("/api/mcp", json=call_message(site.url, None)),
        )
    for reply in (first, second):
        progress = [m for m in sse_messages(reply.text) if m.get("method") == "notifications/progress"]
        assert progress
        assert messages_end_with_result(reply.text)
    assert [m for m in sse_messages(silent.text) if m.get("method") == "notifications/progress"] == []


async def test_server_reports_its_name_and_build_version(host: HostProcess) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode="legacy") as client:
        info = client.server_info
    assert info is not None
    assert info.name == "firebreak"
    assert info.version == load_settings().build_version


async def test_correlation_id_is_in_every_input_schema_it_is_accepted_in(host: HostProcess) -> None:
    async with Client(f"{host.base_url}/api/mcp", mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    for name, tool in listed.items():
        prop = tool.input_schema["properties"].get("correlation_id")
        assert prop is not None, name
        assert prop.get("maxLength") == 128 or "anyOf" in prop, name
    assert len(listed) == len(catalogue().registry)
