"""A deployment without NEUBIRD_*: every neubird tool answers NOT_CONFIGURED naming the settings, nothing else
is affected, and health.check says so under `integrations`."""

from __future__ import annotations

from typing import Any

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, error_of, post, tools_document, ws

WS = ws("bare")
SID = "0123456789abcdef01234567"
PROJECT = "74acc801-3428-4292-8a74-ae16ecb71c24"
VALID_ARGS: dict[str, dict[str, Any]] = {
    "neubird_investigate_alert": {"alert_id": "/aws/alerts/x-1"},
    "neubird_create_investigation": {"prompt": "Analyze my EKS cluster", "timeframe": "last 2 hours"},
    "neubird_get_investigation_status": {"session_uuid": SID},
    "neubird_continue_investigation": {"session_uuid": SID, "follow_up_prompt": "more"},
    "neubird_list_projects": {},
    "neubird_list_sessions": {"only_uninvestigated": True},
    "neubird_inspect_session": {"session_uuid": SID},
    "neubird_get_session_report": {"session_uuids": [SID], "project_uuid": PROJECT},
    "neubird_get_session_summary": {"session_uuid": SID},
    "neubird_get_incident_report": {},
    "neubird_switch_instance": {"base_url": "prod"},
    "neubird_configure_defaults": {"default_timeframe": "last 3 hours"},
}


def test_the_twelve_tools_are_declared_even_when_not_configured(bare_host: HostProcess) -> None:
    declared = sorted(n for n in tools_document(bare_host) if n.startswith("neubird_"))
    assert declared == sorted(VALID_ARGS)


@pytest.mark.parametrize("name", sorted(VALID_ARGS))
async def test_every_neubird_tool_answers_not_configured(bare_host: HostProcess, name: str) -> None:
    err = error_of(await call(bare_host, name, VALID_ARGS[name], WS))
    assert err["code"] == "NOT_CONFIGURED", err
    for setting in ("NEUBIRD_BASE_URL", "NEUBIRD_EMAIL", "NEUBIRD_PASSWORD"):
        assert setting in err["message"]
    assert err["details"]["missing_settings"] == ["NEUBIRD_BASE_URL", "NEUBIRD_EMAIL", "NEUBIRD_PASSWORD"]
    assert err["recovery_suggestions"]
    r = post(bare_host, name, VALID_ARGS[name], WS)
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "NOT_CONFIGURED"


async def test_other_tools_still_work_and_health_says_neubird_is_not_configured(bare_host: HostProcess) -> None:
    who = await call(bare_host, "whoami", {}, WS)
    assert who["workspace_id"] == WS
    r = post(bare_host, "health.check", {}, WS)
    assert r.status_code == 200
    health = r.json()
    assert health["status"] == "ok"
    neubird = next(i for i in health["integrations"] if i["name"] == "neubird_setup")
    assert neubird["detail"].startswith("not configured")
    assert "NEUBIRD_PASSWORD" in neubird["detail"]


async def test_health_names_the_instance_when_configured(nb_host: HostProcess) -> None:
    health = post(nb_host, "health.check", {}, WS).json()
    neubird = next(i for i in health["integrations"] if i["name"] == "neubird_setup")
    assert neubird["detail"].startswith("configured for 127.0.0.1:")
    assert "*.app.neubird.ai" in neubird["detail"]
