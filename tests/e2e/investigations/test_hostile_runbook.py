"""Over the offline host: a worker turning a hostile runbook page into text still answers /api/health."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from devhost.processes import HostProcess
from tests.fixtures.hostile.outside_content import busy_page
from tests.support import scenarios
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import serve_scenario

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
MAX_BYTES = 8 * 1024 * 1024  # the runbook cap's upper bound
# Not a measurement: html.parser held the event loop for minutes on this page (61 s for 128 KiB of `<a x`), so
# health never answered within this; now the page is converted in a worker thread.
HEALTH_HANG_GUARD_SECONDS = 30


def test_health_answers_while_the_hostile_runbook_is_processed(start_host: Callable[..., HostProcess]) -> None:
    scenario = scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as runbooks:
        url = runbooks.page("/hostile.html", busy_page(MAX_BYTES), "text/html")
        host = start_host(
            {
                **LOCAL,
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_INVESTIGATIONS_RUNBOOK_MAX_BYTES": str(MAX_BYTES),
            }
        )
        alert: dict[str, Any] = dict(scenario["alert"])
        alert["annotations"] = {**alert["annotations"], "runbook_url": url}
        headers = {"x-dev-workspace": f"ws-hostile-rb-{uuid.uuid4().hex[:8]}"}
        r = httpx.post(f"{host.base_url}/api/investigations", json=alert, headers=headers, timeout=60)
        assert r.status_code == 202, r.text
        inv_id = r.json()["started"][0]["investigation_id"]
        deadline = time.monotonic() + 120  # a hang guard for the page's request, not a measurement
        while "/hostile.html" not in runbooks.requests:
            assert time.monotonic() < deadline, host.log()[-3000:]
            time.sleep(0.02)
        # From the moment the page was served until the investigation records the runbook, health answers.
        answered: list[int] = []
        while True:
            health = httpx.get(f"{host.base_url}/api/health", timeout=HEALTH_HANG_GUARD_SECONDS)
            view = httpx.get(
                f"{host.base_url}/api/investigations/{inv_id}", headers=headers, timeout=HEALTH_HANG_GUARD_SECONDS
            ).json()
            if view["runbook"]["status"] != "none" or view["status"] in ("completed", "failed", "cancelled"):
                break
            answered.append(health.status_code)
        httpx.post(f"{host.base_url}/api/investigations/{inv_id}/cancel", headers=headers, timeout=30)
    assert view["runbook"]["status"] == "fetched", view["runbook"]
    assert view["runbook"]["truncated"] is False
    assert len(answered) >= 3, answered
    assert set(answered) == {200}, answered
