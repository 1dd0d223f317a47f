"""Debug memory in an investigation: asked as the starter, shown in the report, offered as next actions only."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support import scenarios
from tests.support.investigations import investigate
from tests.support.runbook_server import serve_runbook
from tests.support.scenario_mcp_server import serve_scenario

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


@pytest.fixture(scope="module")
def setup(start_host) -> Iterator[tuple[HostProcess, dict[str, Any], dict[str, Any]]]:
    scenario = scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))
    with serve_scenario(scenario) as mcp, serve_runbook(scenario) as rb:
        host = start_host(
            {**LOCAL, "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}])}
        )
        alert = dict(scenario["alert"])
        alert["annotations"] = {**alert["annotations"], "runbook_url": rb.runbook_url}
        yield host, alert, scenario


def tool(host: HostProcess, name: str, args: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    r = httpx.post(f"{host.base_url}/api/tools/{name}", json=args, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_a_known_fix_is_shown_and_offered_never_recorded(setup) -> None:
    host, alert, scenario = setup
    mine = {"x-dev-workspace": f"ws-mem-{uuid.uuid4().hex[:8]}"}
    known = tool(
        host,
        "add_incident",
        {
            "title": "KubePodCrashLooping: payment-processing-worker in CrashLoopBackOff",
            "error_signature": "Pod default/payment-processing-worker (payment-processing-container) is in"
            ' waiting state (reason: "CrashLoopBackOff")',
            "summary": "DEPLOY_ENV missing from the deployment",
            "steps": ["Set DEPLOY_ENV in the deployment's env", "Roll out"],
            "worked": True,
            "tags": ["kubernetes"],
            "env": {"runtime": "kubernetes", "namespace": "default", "source": "prometheus"},
        },
        mine,
    )
    body = investigate(host, alert, mine)
    assert body["status"] == "completed", body
    memory = body["debug_memory"]
    assert memory["solution_id"] == known["solution_id"]
    assert memory["lookup_id"].startswith("lkp_")
    assert "Set DEPLOY_ENV" in memory["solution_summary"]
    report = body["report"]
    assert f"**Debug memory:** {known['solution_id']}" in report["analysis"]
    assert len(report["analysis"]) <= 2000
    assert scenarios.score(report["analysis"], scenario) == pytest.approx(1.0)
    outcome, incident = report["next_actions"]
    assert outcome["tool"] == "record_outcome"
    assert outcome["arguments"]["solution_id"] == known["solution_id"]
    assert outcome["arguments"]["lookup_id"] == memory["lookup_id"]
    assert incident["tool"] == "add_incident"
    assert incident["arguments"]["title"] == alert["title"]
    assert incident["arguments"]["steps"][0].startswith("Set ")  # the report's remediation, prefilled
    # Offered, not done: the solution's outcome counts are as add_incident left them.
    stats = tool(host, "get_incident", {"incident_id": known["incident_id"]}, mine)
    assert [(s["stats"]["worked_count"], s["stats"]["failed_count"]) for s in stats["solutions"]] == [(1, 0)]


def test_another_workspace_gets_no_hint_from_this_one(setup) -> None:
    host, alert, _ = setup
    other = {"x-dev-workspace": f"ws-mem-other-{uuid.uuid4().hex[:8]}"}
    body = investigate(host, alert, other)
    assert body["status"] == "completed"
    assert "solution_id" not in (body["debug_memory"] or {})
    assert [a["tool"] for a in body["report"]["next_actions"]] == ["add_incident"]
