"""Defects an outside review found after the first hardening pass, each reproduced over HTTP (and MCP where it differs).

- ids were put into Cosmos resource paths unchecked: `x/../inc_…` read an incident, `../../etc/passwd` gave a 500;
- a continuation token with CR/LF gave a 500 (it travels in a request header);
- a lone UTF-16 surrogate escape in a JSON body gave a 500 where it was encoded;
- collect.run recorded `;jsessionid=` path parameters and sent a caller-chosen `Host` header;
- a cancel reason with control characters was stored and echoed as sent (see also tests/integration/test_run_store.py).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support.target_site import target_site

ENV = {"os": "linux", "language": "python 3.11"}


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-review-{uuid.uuid4().hex[:8]}"}


def call(host: HostProcess, tool: str, body: dict, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=60)


def test_path_like_memory_ids_address_nothing(host: HostProcess) -> None:
    headers = ws()
    added = call(
        host,
        "add_incident",
        {"title": "disk full on db host", "steps": ["rotate logs"], "env": ENV, "worked": True},
        headers,
    )
    assert added.status_code == 200, added.text
    incident_id = added.json()["incident_id"]
    for bad in (f"x/../{incident_id}", f"../../memory/docs/{incident_id}", "../../etc/passwd", "a?b", "a#b", "a\\b"):
        # Refused as malformed (ids with path characters, issue #27) or not found: never another document.
        r = call(host, "get_incident", {"incident_id": bad}, headers)
        assert r.status_code in (400, 404), (bad, r.text)
        assert r.json()["error"]["code"] in ("NOT_FOUND", "VALIDATION_ERROR"), (bad, r.text)
        r = call(host, "add_solution", {"incident_id": bad, "steps": ["traversal"], "env": ENV}, headers)
        assert r.status_code in (400, 404), (bad, r.text)
        r = call(
            host, "record_outcome", {"solution_id": "sol_x", "worked": True, "env": ENV, "lookup_id": bad}, headers
        )
        assert r.status_code in (400, 404), (bad, r.text)
        assert r.json()["error"]["code"] in ("NOT_FOUND", "VALIDATION_ERROR"), (bad, r.text)
    # Nothing was added to the real incident through a path-like id.
    shown = call(host, "get_incident", {"incident_id": incident_id}, headers).json()
    assert len(shown["solutions"]) == 1


@pytest.mark.parametrize("token", ["a\r\nX-Injected: 1", "a\x00b", "ü" * 10, "x" * 20_000])
def test_a_continuation_that_no_server_issued_is_a_validation_error(host: HostProcess, token: str) -> None:
    for tool in ("runs.list", "list_incidents"):
        r = call(host, tool, {"continuation": token}, ws())
        assert r.status_code == 400, (tool, r.text)
        assert r.json()["error"]["code"] == "VALIDATION_ERROR", (tool, r.text)


def test_a_lone_surrogate_in_a_json_body_is_an_invalid_request(host: HostProcess) -> None:
    headers = {**ws(), "content-type": "application/json"}
    body = b'{"incident_id": "inc_1", "steps": ["\\ud800"], "env": {}}'
    r = httpx.post(f"{host.base_url}/api/tools/add_solution", content=body, headers=headers, timeout=30)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "INVALID_REQUEST", r.text
    # A proper surrogate pair is text and passes the edge (the incident does not exist: 404).
    ok = b'{"incident_id": "inc_1", "steps": ["\\ud83d\\ude00"], "env": {}}'
    assert (
        httpx.post(f"{host.base_url}/api/tools/add_solution", content=ok, headers=headers, timeout=30).status_code
        == 404
    )


@pytest.fixture(scope="module")
def probe_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"})


def test_collect_records_no_path_parameters_or_fragments(probe_host: HostProcess) -> None:
    headers = ws()
    with target_site() as (site, _):
        body = {
            "base_url": site.url,
            "url_paths": ["/health;jsessionid=COOKIE9", "/a;v=1/health?x=SECRET7#frag", "/health%3Bjsessionid=COOKIE9"],
            "sample_count": 1,
            "warmup_count": 0,
        }
        r = call(probe_host, "collect.run", body, headers)
        assert r.status_code == 200, r.text
        sent = [q["path"] for q in site.requests]
    assert (
        "/health;jsessionid=COOKIE9" in sent
    )  # the probe sends the path as given; only the record drops the parameters
    out = r.json()
    bundle = f"bundles/{out['bundle_id']}"
    validated = call(probe_host, "artifacts.validate", {"artifacts": out["ingest_artifacts"]}, headers).json()
    assert validated["counts"]["failed"] == 0
    import asyncio

    from shared.core.settings import Settings
    from shared.perf.artifacts import artifact_blob
    from shared.storage.blob import BlobStore

    async def read(name: str) -> str:
        blobs = BlobStore(Settings.from_env(probe_host.env))
        try:
            data = await blobs.get(artifact_blob(headers["x-dev-workspace"], name))
            assert data is not None, name
            return data.decode()
        finally:
            await blobs.close()

    recorded = asyncio.run(read(f"{bundle}/manifest.json")) + asyncio.run(read(f"{bundle}/timings.json"))
    assert "COOKIE9" not in recorded
    assert "SECRET7" not in recorded
    assert "frag" not in recorded
    assert json.loads(asyncio.run(read(f"{bundle}/manifest.json")))["url_paths"] == ["/health", "/a/health", "/health"]


@pytest.mark.parametrize("name", ["host", "Host", "content-length", "transfer-encoding", "connection"])
def test_collect_refuses_headers_the_probe_controls(host: HostProcess, name: str) -> None:
    body = {
        "base_url": "https://example.com",
        "url_paths": ["/"],
        "headers_allowlist": [name],
        "headers": {name: "evil.example"},
    }
    r = call(host, "collect.run", body, ws())
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "VALIDATION_ERROR", r.text
    assert "headers" in [e["field"] for e in r.json()["error"]["details"]["errors"]]


def test_a_cancel_reason_with_control_characters_is_a_validation_error(host: HostProcess) -> None:
    r = call(host, "cancel_run", {"run_id": uuid.uuid4().hex, "reason": "stop\r\nX-Injected: 1"}, ws())
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in r.json()["error"]["details"]["errors"]] == ["reason"]
