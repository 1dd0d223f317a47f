"""Smoke: each neubird tool answers over MCP against the fake NeuBird (the fuller suite lives beside it; the
shared host and fake come from conftest)."""

from __future__ import annotations

from typing import Any

from devhost.processes import HostProcess
from tests.e2e.neubird import conftest
from tests.support.fake_neubird import FakeNeubird


async def call(host: HostProcess, name: str, args: dict[str, Any], ws: str = "ws-nb-smoke") -> dict[str, Any]:
    return await conftest.call(host, name, args, ws)


async def test_every_tool_answers(nb_host: HostProcess, fake: FakeNeubird) -> None:
    projects = await call(nb_host, "neubird_list_projects", {})
    assert projects["projects"], projects
    listed = await call(nb_host, "neubird_list_sessions", {"only_uninvestigated": True, "limit": 20})
    assert listed["filters_applied"]["only_uninvestigated"] is True, listed
    alert = next(s["incident_id"] for s in listed["sessions"] if s.get("incident_id"))
    started = await call(nb_host, "neubird_investigate_alert", {"alert_id": alert, "wait_for_completion": True})
    assert started["status"] == "completed", started
    sid = started["session_uuid"]
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": sid})
    assert status["status"] == "completed", status
    created = await call(
        nb_host,
        "neubird_create_investigation",
        {"prompt": "Analyze my EKS cluster for security issues", "timeframe": "last 2 hours"},
    )
    assert created["timeframe_parsed"]["description"], created
    follow = await call(
        nb_host, "neubird_continue_investigation", {"session_uuid": sid, "follow_up_prompt": "Dig deeper please"}
    )
    assert follow["session_uuid"] == sid, follow
    inspected = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid})
    assert inspected["prompt_cycles"], inspected
    summary = await call(nb_host, "neubird_get_session_summary", {"session_uuid": sid})
    assert "available" in summary, summary
    report = await call(
        nb_host, "neubird_get_session_report", {"session_uuids": [sid], "project_uuid": started["project_uuid"]}
    )
    assert "reports" in report, report
    incident = await call(nb_host, "neubird_get_incident_report", {})
    assert incident["total_incidents"], incident
    defaults = await call(nb_host, "neubird_configure_defaults", {"default_timeframe": "last 3 hours"})
    assert defaults["current_defaults"]["timeframe"] == "last 3 hours", defaults
    refused = await call(nb_host, "neubird_switch_instance", {"base_url": "http://169.254.169.254"})
    assert refused["error"]["code"] == "VALIDATION_ERROR", refused
    switched = await call(nb_host, "neubird_switch_instance", {"base_url": "prod"})
    assert switched["new_url"] == "https://prod.app.neubird.ai/api", switched
