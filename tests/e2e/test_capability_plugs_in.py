"""A capability is one folder plus one line: a throwaway capability declared in a test module
(tests/support/throwaway_capability.py) plugs into the app with nothing else changed.

tests/fixtures/plugin_app serves the app's catalogue plus that capability, through the same functions
layer and the same offline host as the app. Its tools are listed over MCP and as per-tool HTTP
functions, its container is created with its partition key, its settings section is read, its
orchestration runs as a run of its caller, and its check is part of diagnostics.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from mcp import Client

from devhost.processes import HostProcess
from devhost.stack import ROOT
from shared.app.capabilities import catalogue
from shared.core.settings import Settings
from shared.storage.cosmos import CosmosDatabase
from tests.support.throwaway_capability import NOTES

PLUGIN_APP = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_app"


@pytest.fixture(scope="module")
def plugin_host(start_host) -> HostProcess:
    return start_host({"FIREBREAK_THROWAWAY_GREETING": "howdy"}, app_dir=PLUGIN_APP)


def _poll(host: HostProcess, status_url: str, timeout: float = 60, headers: dict[str, str] | None = None) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = httpx.get(host.base_url + status_url, headers=headers, timeout=30).json()
        if body.get("state") not in ("pending", "running"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"still running: {body}")


def test_nothing_outside_the_test_names_the_throwaway_capability() -> None:
    assert "throwaway" not in {c.name for c in catalogue().capabilities}
    found = subprocess.run(
        ["git", "grep", "-l", "-i", "throwaway", "--", "shared", "functions", "function_app.py", "devhost"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert found.stdout == "", found.stdout


async def test_its_tools_are_listed_over_mcp_and_http(plugin_host: HostProcess) -> None:
    async with Client(f"{plugin_host.base_url}/api/mcp", mode="2026-07-28") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
    assert {"throwaway_note", "throwaway_count"} <= listed
    assert listed == {t.name for t in catalogue().registry} | {"throwaway_note", "throwaway_count"}
    async with httpx.AsyncClient(timeout=30) as http:
        document = (await http.get(f"{plugin_host.base_url}/api/tools")).json()
    note = next(t for t in document["tools"] if t["name"] == "throwaway_note")
    assert note["capability"] == "throwaway"
    assert note["http"]["path"] == "/api/tools/throwaway_note"


def test_its_tool_reads_its_settings_and_writes_its_container(plugin_host: HostProcess, settings: Settings) -> None:
    r = httpx.post(f"{plugin_host.base_url}/api/tools/throwaway_note", json={"text": "remember me"}, timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["greeting"] == "howdy"
    assert body["stored_text"] == "remember me"
    bad = httpx.post(f"{plugin_host.base_url}/api/tools/throwaway_note", json={"text": ""}, timeout=30)
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "VALIDATION_ERROR"


async def test_its_container_exists_with_its_partition_key(plugin_host: HostProcess, settings: Settings) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        (await http.post(f"{plugin_host.base_url}/api/tools/throwaway_note", json={"text": "x"})).raise_for_status()
    # Read the container's definition without creating anything: only the plugin app's use can have made it.
    reader = CosmosDatabase(settings.model_copy(update={"create_resources": False}), [NOTES])
    try:
        props = await (await reader.container(NOTES.name))._c.read()
    finally:
        await reader.close()
    assert props["id"] == NOTES.name
    assert props["partitionKey"]["paths"] == ["/workspace_id"]


def test_its_orchestration_runs_for_its_caller(plugin_host: HostProcess) -> None:
    r = httpx.post(f"{plugin_host.base_url}/api/tools/throwaway_count", json={"upto": 4}, timeout=30)
    assert r.status_code == 200, r.text
    done = _poll(plugin_host, r.json()["status_url"])
    assert done["state"] == "completed"
    assert done["kind"] == "throwaway_count"
    assert done["output"]["total"] == 10
    assert done["progress"] == {"stage": "adding", "done": 3, "total": 4}


def test_its_check_is_part_of_diagnostics(plugin_host: HostProcess) -> None:
    started = httpx.post(f"{plugin_host.base_url}/api/diagnostics", timeout=30).json()
    report = _poll(plugin_host, started["status_url"])["output"]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["throwaway"]["ok"]
    assert checks["throwaway"]["detail"] == "greeting is 'howdy'"


def test_with_a_stale_manifest_its_plain_tool_runs_and_its_orchestration_says_not_deployed(start_host) -> None:
    stale = start_host({"FIREBREAK_THROWAWAY_GREETING": "stale", "PLUGIN_APP_STALE_MANIFEST": "1"}, app_dir=PLUGIN_APP)
    note = httpx.post(f"{stale.base_url}/api/tools/throwaway_note", json={"text": "still here"}, timeout=30)
    assert note.status_code == 200, note.text
    assert note.json()["greeting"] == "stale"
    count = httpx.post(f"{stale.base_url}/api/tools/throwaway_count", json={"upto": 2}, timeout=30)
    assert count.status_code == 503, count.text
    error = count.json()["error"]
    assert error["code"] == "NOT_CONFIGURED"
    assert "make manifest" in error["recovery_suggestions"][0]
    assert "throwaway_count_orchestrator" in error["message"]


def _dev(workspace: str) -> dict[str, str]:
    return {"x-dev-workspace": workspace, "x-dev-user": "alice"}


def test_its_rest_routes_are_served_validated_and_scoped(plugin_host: HostProcess) -> None:
    base = plugin_host.base_url
    made = httpx.post(f"{base}/api/throwaway/notes", json={"text": "rest note"}, headers=_dev("ws-a"), timeout=30)
    assert made.status_code == 201, made.text
    note_id = made.json()["note_id"]
    assert made.headers["location"] == f"/api/throwaway/notes/{note_id}"
    got = httpx.get(f"{base}/api/throwaway/notes/{note_id}?upper=true", headers=_dev("ws-a"), timeout=30)
    assert got.status_code == 200
    assert got.json() == {"note_id": note_id, "text": "REST NOTE"}
    # Another workspace: the same id is unknown to it.
    other = httpx.get(f"{base}/api/throwaway/notes/{note_id}", headers=_dev("ws-b"), timeout=30)
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "NOT_FOUND"
    # The models validate before the handler: path, query and body, each naming the field.
    cases = [
        ("GET", f"/api/throwaway/notes/{'x' * 32}", None, "note_id"),
        ("GET", f"/api/throwaway/notes/{note_id}?upper=maybe", None, "upper"),
        ("GET", f"/api/throwaway/notes/{note_id}?surprise=1", None, "surprise"),
        ("GET", f"/api/throwaway/notes/{note_id}?note_id={note_id}", None, "note_id"),
        ("POST", "/api/throwaway/notes", {"text": ""}, "text"),
        ("POST", "/api/throwaway/notes", {"text": "ok", "extra": 1}, "extra"),
        ("POST", "/api/throwaway/notes", {}, "text"),
    ]
    for method, path, body, field in cases:
        r = httpx.request(method, base + path, json=body, headers=_dev("ws-a"), timeout=30)
        assert r.status_code == 400, (path, r.text)
        err = r.json()["error"]
        assert err["code"] == "VALIDATION_ERROR"
        assert field in [e["field"] for e in err["details"]["errors"]], (path, err)
    not_json = httpx.post(f"{base}/api/throwaway/notes", json=[1], headers=_dev("ws-a"), timeout=30)
    assert not_json.status_code == 400
    assert not_json.json()["error"]["code"] == "INVALID_REQUEST"


def test_its_raw_body_route_takes_bytes_within_its_own_limit(plugin_host: HostProcess) -> None:
    base, who = plugin_host.base_url, _dev("ws-files")
    data = b"not json {\x00\xff at all"
    put = httpx.post(
        f"{base}/api/throwaway/files/a.txt", content=data, headers={**who, "content-type": "text/plain"}, timeout=30
    )
    assert put.status_code == 201, put.text
    assert put.json() == {
        "name": "a.txt",
        "size_bytes": len(data),
        "content_type": "text/plain",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    assert put.headers["location"] == "/api/throwaway/files/a.txt"
    # FIREBREAK_THROWAWAY_MAX_FILE_BYTES (64 by default): one byte more is 413 in the envelope, nothing stored.
    big = httpx.post(f"{base}/api/throwaway/files/b.txt", content=b"x" * 65, headers=who, timeout=30)
    assert big.status_code == 413, big.text
    assert big.json()["error"]["code"] == "INVALID_REQUEST"
    assert big.json()["error"]["details"]["limit_bytes"] == 64
    assert httpx.get(f"{base}/api/throwaway/files/b.txt", headers=who, timeout=30).status_code == 404
    # The query and path are still validated before the handler.
    bad = httpx.post(f"{base}/api/throwaway/files/a.bin", content=b"x", headers=who, timeout=30)
    assert bad.status_code == 400
    assert [e["field"] for e in bad.json()["error"]["details"]["errors"]] == ["name"]


def test_its_file_route_answers_bytes_with_their_headers(plugin_host: HostProcess) -> None:
    base, who = plugin_host.base_url, _dev("ws-dl")
    httpx.post(f"{base}/api/throwaway/files/d.txt", content=b"line\n", headers=who, timeout=30).raise_for_status()
    got = httpx.get(f"{base}/api/throwaway/files/d.txt", headers={**who, "x-correlation-id": "dl-1"}, timeout=30)
    assert got.status_code == 200, got.text
    assert got.content == b"line\n"
    assert got.headers["content-type"].split(";")[0] == "text/plain"
    assert got.headers["content-disposition"] == 'attachment; filename="d.txt"'
    assert got.headers["x-content-type-options"] == "nosniff"
    assert got.headers["cache-control"] == "no-store"
    assert got.headers["x-correlation-id"] == "dl-1"
    # Another workspace: the envelope, as JSON.
    other = httpx.get(f"{base}/api/throwaway/files/d.txt", headers=_dev("ws-other"), timeout=30)
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "NOT_FOUND"


def test_its_runs_route_starts_a_run_of_the_caller(plugin_host: HostProcess) -> None:
    base, who = plugin_host.base_url, _dev("ws-count")
    r = httpx.post(f"{base}/api/throwaway/counts", json={"upto": 3}, headers=who, timeout=30)
    assert r.status_code == 202, r.text
    assert r.headers["location"] == r.json()["status_url"]
    assert r.headers["retry-after"] == "1"
    done = _poll(plugin_host, r.json()["status_url"], headers=who)
    assert done["state"] == "completed"
    assert done["output"]["total"] == 6


def test_its_raw_and_file_routes_are_documented_as_such(plugin_host: HostProcess) -> None:
    doc = httpx.get(f"{plugin_host.base_url}/api/openapi.json", timeout=30).json()
    put = doc["paths"]["/api/throwaway/files/{name}"]["post"]
    assert set(put["requestBody"]["content"]) == {"text/plain", "application/octet-stream"}
    assert put["requestBody"]["required"] is True
    assert "415" not in put["responses"]  # the body is not JSON: no content type is refused for that
    get = doc["paths"]["/api/throwaway/files/{name}"]["get"]
    assert get["responses"]["200"]["content"] == {"text/plain": {}}


def test_its_routes_and_tools_are_in_the_openapi_document(plugin_host: HostProcess) -> None:
    doc = httpx.get(f"{plugin_host.base_url}/api/openapi.json", timeout=30).json()
    assert doc["openapi"] == "3.1.0"
    post = doc["paths"]["/api/throwaway/notes"]["post"]
    assert post["operationId"] == "throwaway_create_note"
    assert "201" in post["responses"]
    body_ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = doc["components"]["schemas"][body_ref.rsplit("/", 1)[-1]]
    assert body["properties"]["text"]["maxLength"] == 100
    assert body["additionalProperties"] is False
    get = doc["paths"]["/api/throwaway/notes/{note_id}"]["get"]
    assert {(p["name"], p["in"], p["required"]) for p in get["parameters"]} == {
        ("note_id", "path", True),
        ("upper", "query", False),
    }
    assert "404" in get["responses"]
    assert "Error" in doc["components"]["schemas"]
    tool = doc["paths"]["/api/tools/throwaway_note"]["post"]
    assert tool["tags"] == ["tools: throwaway"]
    # Every $ref resolves inside the document.
    text = json.dumps(doc)
    for ref in set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', text)):
        assert ref in doc["components"]["schemas"], ref


def test_the_docs_page_is_self_contained(plugin_host: HostProcess) -> None:
    r = httpx.get(f"{plugin_host.base_url}/api/docs", timeout=30)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "script-src 'sha256-" in csp
    assert "default-src 'none'" in csp
    assert "connect-src 'self'" in csp
    # No external resource: nothing loaded from another origin.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", r.text)
    assert "fetch(specUrl" in r.text
