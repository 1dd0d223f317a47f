"""One scenario through the whole orchestration on the offline host (rule path)."""

from __future__ import annotations

import json
import time
import uuid

import httpx

from tests.support import scenarios
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import serve_scenario


def test_one_scenario_end_to_end(start_host) -> None:
    scenario = scenarios.load(scenarios.scenario_files()[10])
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as rb:
        host = start_host(
            {
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
                "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32",
            }
        )
        alert = dict(scenario["alert"])
        if rb.runbook_url:
            alert["annotations"] = {**alert.get("annotations", {}), "runbook_url": rb.runbook_url}
        headers = {"x-dev-workspace": f"ws-inv-{uuid.uuid4().hex[:8]}"}
        r = httpx.post(f"{host.base_url}/api/investigations", json=alert, headers=headers, timeout=60)
        assert r.status_code == 202, r.text
        inv = r.json()["started"][0]["investigation_id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            body = httpx.get(f"{host.base_url}/api/investigations/{inv}", headers=headers, timeout=30).json()
            if body["status"] in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.5)
        print(json.dumps(body, indent=1)[:6000])
        print(host.log()[-5000:])
        assert body["status"] == "completed", body
        print(scenarios.score(body["report"]["analysis"], scenario))
