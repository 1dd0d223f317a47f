"""`POST /api/diagnostics`: the product's orchestration, started through the real durable client binding."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from devhost.processes import HostProcess, free_port


def _poll(url: str, timeout: float = 60, headers: dict[str, str] | None = None) -> httpx.Response:
    """GET the app's run status route until the run's state is final."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = httpx.get(url, headers=headers, timeout=30)
        if r.status_code != 200 or r.json()["state"] not in ("pending", "running"):
            return r
        time.sleep(0.1)
    raise AssertionError(f"still running: {r.json()}")


def test_diagnostics_completes_with_a_report(host: HostProcess) -> None:
    r = httpx.post(f"{host.base_url}/api/diagnostics", timeout=30)
    started = r.json()
    assert r.status_code == 202
    assert set(started) == {"run_id", "status_url", "next_action"}
    assert r.headers["Location"] == started["status_url"] == f"/api/runs/{started['run_id']}"
    done = _poll(host.base_url + started["status_url"])
    body = done.json()
    assert done.status_code == 200
    assert body["state"] == "completed"
    assert body["run_id"] == started["run_id"]
    assert body["kind"] == "diagnostics"
    report = body["output"]
    assert report["status"] == "ok"
    assert report["failed"] == []
    assert {c["name"]: c["ok"] for c in report["checks"]} == {
        "cosmos": True,
        "blob": True,
        "perf_runs": True,
        "perf_artifacts": True,
        "investigations_records": True,
        "investigations_setup": True,
        "neubird_setup": True,
        "neubird_state": True,
    }
    assert body["progress"] == {"stage": "done", "checks": 8}


@pytest.fixture(scope="module")
def fake_neubird():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)  # an API that wants credentials is still reachable
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_diagnostics_checks_configured_dependencies(start_host, fake_neubird) -> None:
    configured = start_host(
        {
            "NEUBIRD_BASE_URL": fake_neubird,
            "NEUBIRD_EMAIL": "sre@example.com",
            "NEUBIRD_PASSWORD": "not-used-by-the-reachability-check",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "OPENAI_MODEL": "gpt-test",
        }
    )
    started = httpx.post(f"{configured.base_url}/api/diagnostics", timeout=30).json()
    report = _poll(configured.base_url + started["status_url"]).json()["output"]
    checks = {c["name"]: c for c in report["checks"]}
    assert set(checks) == {
        "cosmos",
        "blob",
        "perf_runs",
        "perf_artifacts",
        "investigations_records",
        "investigations_setup",
        "llm",
        "neubird",
        "neubird_setup",
        "neubird_state",
    }
    host_port = fake_neubird.removeprefix("http://")
    assert checks["neubird_setup"]["detail"].startswith(f"configured for {host_port}")
    assert checks["investigations_setup"]["detail"] == "0 MCP server(s) configured; the LLM path plans the calls"
    assert checks["neubird"]["ok"]
    assert checks["neubird"]["detail"] == "HTTP 401"
    assert not checks["llm"]["ok"]  # nothing listens there
    assert report["status"] == "degraded"
    assert report["failed"] == ["llm"]


def test_diagnostics_needs_a_principal(start_host) -> None:
    locked = start_host({"FIREBREAK_DEV_MODE": "false"})
    r = httpx.post(f"{locked.base_url}/api/diagnostics", timeout=30)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"


def test_management_api_requires_the_system_key_when_keys_are_enforced(start_host) -> None:
    keyed = start_host({"DEVHOST_FUNCTION_KEY": "fk", "DEVHOST_SYSTEM_KEY": "sk"})
    r = httpx.post(f"{keyed.base_url}/api/diagnostics", headers={"x-functions-key": "fk"}, timeout=30)
    assert r.status_code == 202
    assert "sk" not in r.text
    run_id = r.json()["run_id"]
    assert (
        _poll(keyed.base_url + r.json()["status_url"], headers={"x-functions-key": "fk"}).json()["state"] == "completed"
    )
    mgmt = f"{keyed.base_url}/runtime/webhooks/durabletask/instances/{run_id}"
    assert httpx.get(mgmt, params={"code": "sk"}).json()["runtimeStatus"] == "Completed"
    assert httpx.get(mgmt, params={"code": "wrong"}).status_code == 401
    assert httpx.get(mgmt).status_code == 401
