"""Per-tool HTTP functions and the tools document, over HTTP through the offline host."""

from __future__ import annotations

import httpx

from devhost.processes import HostProcess
from shared.app.capabilities import catalogue


def test_health_check_over_its_own_function(host: HostProcess) -> None:
    r = httpx.post(f"{host.base_url}/api/tools/health.check", json={})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok"
    assert {s["name"] for s in body["stores"]} == {
        "cosmos",
        "blob",
        "perf_runs",
        "perf_artifacts",
        "investigations_records",
        "neubird_state",
    }
    assert [i["name"] for i in body["integrations"]] == ["neubird_setup"]
    assert r.headers["x-correlation-id"]


def test_empty_body_means_no_arguments(host: HostProcess) -> None:
    r = httpx.post(f"{host.base_url}/api/tools/health.check", content=b"")
    assert r.status_code == 200
    assert r.json()["versions"]["python"]


def test_invalid_argument_is_400_naming_the_field(host: HostProcess) -> None:
    r = httpx.post(
        f"{host.base_url}/api/tools/health.check",
        json={"include_versions": "perhaps"},
        headers={"x-correlation-id": "corr-e2e-1"},
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["correlation_id"] == "corr-e2e-1"
    assert [e["field"] for e in error["details"]["errors"]] == ["include_versions"]
    assert error["recovery_suggestions"]


def test_tools_document_lists_every_registered_tool_with_schemas(host: HostProcess) -> None:
    doc = httpx.get(f"{host.base_url}/api/tools").json()
    names = [t["name"] for t in doc["tools"]]
    assert names == [t.name for t in catalogue().registry]
    health = next(t for t in doc["tools"] if t["name"] == "health.check")
    assert health["inputSchema"]["type"] == "object"
    assert health["outputSchema"]["properties"]["status"]
    assert health["annotations"]["readOnlyHint"] is True
    assert health["http"]["path"] == "/api/tools/health.check"


def test_every_tool_has_its_http_function(host: HostProcess) -> None:
    for tool in catalogue().registry:
        r = httpx.post(f"{host.base_url}/api/tools/{tool.name}", json={"__probe__": 1})
        assert r.status_code == 400, tool.name
        assert r.json()["error"]["code"] == "VALIDATION_ERROR", tool.name


def test_health_route_is_ready(host: HostProcess) -> None:
    r = httpx.get(f"{host.base_url}/api/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ready"


def test_health_is_503_until_stores_answer(start_host) -> None:
    # A host whose Cosmos endpoint has nothing listening: the app is up, the store is not.
    down = start_host({"COSMOS_ENDPOINT": "https://127.0.0.1:9"}, ready=False)
    r = httpx.get(f"{down.base_url}/api/health", timeout=30)
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "starting"
    assert {s["name"]: s["ok"] for s in body["stores"]} == {
        "cosmos": False,
        "blob": True,
        "perf_runs": False,
        "perf_artifacts": True,
        "investigations_records": False,
        "neubird_state": False,
    }
