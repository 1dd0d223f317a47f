"""Every route checks Host and Origin before any work, JSON routes require a JSON content type, and bad
correlation ids or handshake params are refused in the envelope (never a 500, never a pydantic dump)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support.mcp_http import rpc_reply

TIMEOUT = httpx.Timeout(30.0)
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INCIDENT = {"title": "cross-site planted incident", "steps": ["do what the page says"], "env": {}, "worked": True}

# (method, path, body, content type) for one request per kind of route the app serves.
ROUTES = [
    ("GET", "/api/health", None, None),
    ("GET", "/api/tools", None, None),
    ("POST", "/api/tools/health.check", b"{}", "application/json"),
    ("POST", "/api/tools/no.such.tool", b"{}", "application/json"),
    (
        "POST",
        "/api/mcp",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
        "application/json",
    ),
    ("POST", "/api/artifacts?name=x.log", b"# Time: 2026-01-01T00:00:00Z\n", "application/octet-stream"),
    ("GET", "/api/perf/reports/report_x.md", None, None),
    ("GET", f"/api/perf/snapshots/{'0' * 64}/profile_1.speedscope.json", None, None),
    ("POST", "/api/diagnostics", None, None),
]


def _send(
    host: HostProcess, method: str, path: str, body: bytes | None, content_type: str | None, extra: dict[str, str]
) -> httpx.Response:
    headers = {
        **({"content-type": content_type} if content_type else {}),
        "accept": "application/json, text/event-stream",
        **extra,
    }
    return httpx.request(method, f"{host.base_url}{path}", content=body, headers=headers, timeout=TIMEOUT)


@pytest.mark.parametrize(("method", "path", "body", "content_type"), ROUTES, ids=[r[1] for r in ROUTES])
def test_foreign_host_is_refused_on_every_route(
    host: HostProcess, method: str, path: str, body: bytes | None, content_type: str | None
) -> None:
    r = _send(host, method, path, body, content_type, {"host": "rebound.attacker.example:7071"})
    assert r.status_code == 421, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "FORBIDDEN"
    assert "rebound.attacker.example" in error["message"]
    assert error["correlation_id"]


@pytest.mark.parametrize(("method", "path", "body", "content_type"), ROUTES, ids=[r[1] for r in ROUTES])
def test_foreign_origin_is_refused_on_every_route(
    host: HostProcess, method: str, path: str, body: bytes | None, content_type: str | None
) -> None:
    r = _send(host, method, path, body, content_type, {"origin": "https://evil.example"})
    assert r.status_code == 403, r.text[:300]
    assert r.json()["error"]["code"] == "FORBIDDEN"


def test_loopback_origin_is_allowed_locally(host: HostProcess) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        json={},
        headers={"origin": f"http://127.0.0.1:{host.port}"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200


def _incident_titles(host: HostProcess, ws: str) -> list[str]:
    r = httpx.post(
        f"{host.base_url}/api/tools/list_incidents", json={}, headers={"x-dev-workspace": ws}, timeout=TIMEOUT
    )
    assert r.status_code == 200, r.text
    return [i["title"] for i in r.json()["incidents"]]


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]
)
def test_simple_cross_site_post_cannot_add_an_incident(host: HostProcess, content_type: str | None) -> None:
    """What a web page can send without a preflight: refused 415 before any work, nothing written."""
    ws = f"ws-csrf-{uuid.uuid4().hex[:8]}"
    headers = {"x-dev-workspace": ws, **({"content-type": content_type} if content_type else {})}
    r = httpx.post(
        f"{host.base_url}/api/tools/add_incident",
        content=json.dumps(INCIDENT).encode(),
        headers=headers,
        timeout=TIMEOUT,
    )
    assert r.status_code == 415, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "INVALID_REQUEST"
    assert "application/json" in error["message"]
    assert _incident_titles(host, ws) == []
    # The same call declared as JSON works (the check is the content type, not the body).
    ok = httpx.post(
        f"{host.base_url}/api/tools/add_incident", json=INCIDENT, headers={"x-dev-workspace": ws}, timeout=TIMEOUT
    )
    assert ok.status_code == 200
    assert _incident_titles(host, ws) == [INCIDENT["title"]]


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON"]
)
def test_json_content_types_are_accepted(host: HostProcess, content_type: str) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        content=b"{}",
        headers={"content-type": content_type},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text[:300]


@pytest.mark.parametrize(
    "bad",
    ["abc\r\nSet-Cookie: x=1", "caf\u00e9", "a" * 129, "", "abc\n", 42],
    ids=["crlf", "non-ascii", "too-long", "empty", "trailing-newline", "number"],
)
def test_bad_correlation_id_argument_is_refused_before_the_tool_runs(host: HostProcess, bad) -> None:
    ws = f"ws-corr-{uuid.uuid4().hex[:8]}"
    r = httpx.post(
        f"{host.base_url}/api/tools/add_incident",
        json={**INCIDENT, "correlation_id": bad},
        headers={"x-dev-workspace": ws},
        timeout=TIMEOUT,
    )
    assert r.status_code == 400, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["errors"][0]["field"] == "correlation_id"
    assert _incident_titles(host, ws) == []


def test_good_correlation_id_argument_is_echoed(host: HostProcess) -> None:
    r = httpx.post(f"{host.base_url}/api/tools/health.check", json={"correlation_id": "run-42:step.1"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.headers["x-correlation-id"] == "run-42:step.1"


@pytest.mark.parametrize("header", ["abc\u00e9", "a" * 200, "abc def"])
def test_bad_correlation_header_is_replaced(host: HostProcess, header: str) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        json={},
        headers={"x-correlation-id": header.encode("utf-8")},  # type: ignore[arg-type]  # raw UTF-8 bytes on purpose
        timeout=TIMEOUT,
    )
    assert r.status_code == 200
    assert r.headers["x-correlation-id"] != header
    assert len(r.headers["x-correlation-id"]) == 32


def test_bad_correlation_id_over_mcp_is_an_error_result(host: HostProcess) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "health.check", "arguments": {"correlation_id": "a\r\nb"}},
    }
    r = httpx.post(
        f"{host.base_url}/api/mcp",
        json=message,
        headers={**ACCEPT, "mcp-protocol-version": "2025-06-18"},
        timeout=TIMEOUT,
    )
    result = rpc_reply(r)["result"]
    assert r.status_code == 200
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("version", [None, "2025-03-26", "2025-06-18", "2025-11-25"])
@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "str"}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": 5}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": 5, "params": {}}, -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": {}}, -32600),
        ({"id": 1, "method": "initialize", "params": {}}, -32600),
    ],
    ids=["params-string", "params-array", "params-number", "method-number", "jsonrpc-1.0", "jsonrpc-missing"],
)
def test_malformed_handshake_params_get_a_clear_jsonrpc_error(
    host: HostProcess, version: str | None, message: dict, code: int
) -> None:
    headers = {**ACCEPT, **({"mcp-protocol-version": version} if version else {})}
    r = httpx.post(f"{host.base_url}/api/mcp", json=message, headers=headers, timeout=TIMEOUT)
    assert 400 <= r.status_code < 500, r.text[:300]
    reply = r.json()
    assert reply["error"]["code"] == code
    assert reply["id"] == 1
    assert "validation error" not in r.text.lower()
    assert "pydantic" not in r.text.lower()
    assert "input_value" not in r.text


async def test_anonymous_health_polls_make_one_store_round_trip(start_host) -> None:
    """Count the probe writes in the real emulators: many polls, one Cosmos document write and one blob write."""
    from concurrent.futures import ThreadPoolExecutor

    from shared.app.wiring import build_deps, load_settings

    name = f"health{uuid.uuid4().hex[:10]}"
    overrides = {
        "FIREBREAK_COSMOS_DATABASE": name,
        "FIREBREAK_BLOB_CONTAINER": name,
        "FIREBREAK_HEALTH_CACHE_SECONDS": "3600",
    }
    polled = start_host(overrides)  # ready: it has answered 200 once, so the cache holds a ready answer
    deps = build_deps(load_settings({**polled.env, **overrides}))
    try:

        async def probe_state() -> tuple[list[str], list[bytes | None]]:
            # One host process: one probe blob `_probes/<probe id>.txt` and one probe document `<probe id>`.
            [blob] = [n async for n in deps.blobs.list("_probes/")]
            probe_id = blob.rsplit("/", 1)[1].removesuffix(".txt")
            doc = await (await deps.cosmos.container("probes")).read(probe_id, probe_id)
            assert doc is not None
            return [doc["_etag"], doc["nonce"]], [await deps.blobs.get(blob)]

        before = await probe_state()
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            for _ in range(20):
                assert (await http.get(f"{polled.base_url}/api/health")).status_code == 200
        with ThreadPoolExecutor(8) as pool:
            statuses = list(
                pool.map(lambda _: httpx.get(f"{polled.base_url}/api/health", timeout=TIMEOUT).status_code, range(40))
            )
        assert statuses == [200] * 40
        assert await probe_state() == before  # same etag and nonce: no write since the first ready answer
        # The authenticated health.check tool still probes for real (a diagnosis must be fresh).
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            assert (await http.post(f"{polled.base_url}/api/tools/health.check", json={})).status_code == 200
        assert await probe_state() != before
    finally:
        await deps.aclose()
