"""Hostile sizes and shapes for every neubird tool's inputs: each is a VALIDATION_ERROR (HTTP 400) naming what
is wrong, never a 500, and none of them reaches NeuBird with a path built from the input."""

from __future__ import annotations

from typing import Any

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, error_of, post, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("hostile")
SID = "0123456789abcdef01234567"
PROJECT = "74acc801-3428-4292-8a74-ae16ecb71c24"
HUGE = "x" * 100_000
BAD_IDS: list[Any] = ["../../etc/passwd", "a/b", "..", "", "x" * 129, "abc def", "%2e%2e", "a\nb", 123, None, ["a"]]

CASES: list[tuple[str, dict[str, Any]]] = [
    # investigate_alert
    ("neubird_investigate_alert", {}),
    ("neubird_investigate_alert", {"alert_id": ""}),
    ("neubird_investigate_alert", {"alert_id": HUGE}),
    ("neubird_investigate_alert", {"alert_id": "x" * 1025}),
    ("neubird_investigate_alert", {"alert_id": "line\nbreak"}),
    ("neubird_investigate_alert", {"alert_id": "nul\x00byte"}),
    ("neubird_investigate_alert", {"alert_id": 42}),
    ("neubird_investigate_alert", {"alert_id": {"$ne": ""}}),
    ("neubird_investigate_alert", {"alert_id": "a", "max_wait_seconds": 0}),
    ("neubird_investigate_alert", {"alert_id": "a", "max_wait_seconds": 3601}),
    ("neubird_investigate_alert", {"alert_id": "a", "max_wait_seconds": 1e20}),
    ("neubird_investigate_alert", {"alert_id": "a", "wait_for_completion": []}),
    ("neubird_investigate_alert", {"alert_id": "a", "project_uuid": "../x"}),
    ("neubird_investigate_alert", {"alert_id": "a", "unexpected": 1}),
    # create_investigation
    ("neubird_create_investigation", {"prompt": "too short"}),
    ("neubird_create_investigation", {"prompt": HUGE}),
    ("neubird_create_investigation", {"prompt": 12345678901}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "timeframe": HUGE}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "timeframe": "last \x00 hours"}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "timeframe": "last 99999999999999 hours"}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "timeframe": "the day the music died"}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "start_time": "garbage"}),
    (
        "neubird_create_investigation",
        {"prompt": "Check the API latency", "start_time": "2026-11-02", "end_time": "2026-11-01"},
    ),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "end_time": "9999-12-31T23:59:59Z"}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "stream_updates": "sometimes"}),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "project_uuid": "a/b"}),
    # get_investigation_status, continue, inspect, summary: session ids
    *[("neubird_get_investigation_status", {"session_uuid": bad}) for bad in BAD_IDS],
    ("neubird_get_investigation_status", {"session_uuid": SID, "include_full_details": "perhaps"}),
    *[("neubird_continue_investigation", {"session_uuid": bad, "follow_up_prompt": "more"}) for bad in BAD_IDS[:4]],
    ("neubird_continue_investigation", {"session_uuid": SID, "follow_up_prompt": ""}),
    ("neubird_continue_investigation", {"session_uuid": SID, "follow_up_prompt": HUGE}),
    ("neubird_continue_investigation", {"session_uuid": SID}),
    *[("neubird_inspect_session", {"session_uuid": bad}) for bad in BAD_IDS[:4]],
    ("neubird_inspect_session", {"session_uuid": SID, "organization_uuid": "../org"}),
    *[("neubird_get_session_summary", {"session_uuid": bad}) for bad in BAD_IDS[:4]],
    # list_projects, incident report: no free inputs
    ("neubird_list_projects", {"include_inactive": "maybe"}),
    ("neubird_list_projects", {"bogus": True}),
    ("neubird_get_incident_report", {"bogus": True}),
    # list_sessions
    ("neubird_list_sessions", {"limit": 0}),
    ("neubird_list_sessions", {"limit": 101}),
    ("neubird_list_sessions", {"limit": -1}),
    ("neubird_list_sessions", {"limit": "ten"}),
    ("neubird_list_sessions", {"page": 0}),
    ("neubird_list_sessions", {"page": -3}),
    ("neubird_list_sessions", {"page": 10**12}),
    ("neubird_list_sessions", {"page": 1.5}),
    ("neubird_list_sessions", {"date_from": "yesterday"}),
    ("neubird_list_sessions", {"date_from": "2026-13-45"}),
    ("neubird_list_sessions", {"date_from": HUGE}),
    ("neubird_list_sessions", {"date_from": "2026-11-10", "date_to": "2026-11-01"}),
    ("neubird_list_sessions", {"investigation_status": "DROP TABLE sessions"}),
    ("neubird_list_sessions", {"investigation_status": HUGE}),
    ("neubird_list_sessions", {"session_type": "SESSION_TYPE_\u0000"}),
    ("neubird_list_sessions", {"session_type": "meeting"}),
    ("neubird_list_sessions", {"only_uninvestigated": True, "investigation_status": "completed"}),
    ("neubird_list_sessions", {"search_term": "a\x00b"}),
    ("neubird_list_sessions", {"search_term": "x" * 201}),
    ("neubird_list_sessions", {"search_term": ["load avg"]}),
    ("neubird_list_sessions", {"project_uuid": "a/b"}),
    ("neubird_list_sessions", {"organization_uuid": ".."}),
    ("neubird_list_sessions", {"compact": "auto"}),
    # get_session_report
    ("neubird_get_session_report", {"session_uuids": [], "project_uuid": PROJECT}),
    ("neubird_get_session_report", {"session_uuids": [f"s{i:03d}" for i in range(51)], "project_uuid": PROJECT}),
    ("neubird_get_session_report", {"session_uuids": ["../x"], "project_uuid": PROJECT}),
    ("neubird_get_session_report", {"session_uuids": SID, "project_uuid": PROJECT}),
    ("neubird_get_session_report", {"session_uuids": [SID]}),
    ("neubird_get_session_report", {"session_uuids": [SID], "project_uuid": "a b"}),
    ("neubird_get_session_report", {"session_uuids": [SID, None], "project_uuid": PROJECT}),
    # switch_instance (hosts outside the allow-list: test_isolation)
    ("neubird_switch_instance", {}),
    ("neubird_switch_instance", {"base_url": ""}),
    ("neubird_switch_instance", {"base_url": HUGE}),
    ("neubird_switch_instance", {"base_url": 42}),
    ("neubird_switch_instance", {"base_url": "prod\x00.app.neubird.ai"}),
    ("neubird_switch_instance", {"base_url": "   "}),
    # configure_defaults
    ("neubird_configure_defaults", {"default_project_uuid": "x" * 201}),
    ("neubird_configure_defaults", {"default_organization_uuid": "../org"}),
    ("neubird_configure_defaults", {"default_timeframe": HUGE}),
    ("neubird_configure_defaults", {"default_timeframe": "whenever\x00"}),
    ("neubird_configure_defaults", {"enable_streaming": "maybe"}),
]


def _label(case: tuple[str, dict[str, Any]]) -> str:
    name, args = case
    return f"{name.removeprefix('neubird_')}-{str(args)[:40]}"


@pytest.mark.parametrize("case", CASES, ids=[_label(c) for c in CASES])
def test_hostile_input_over_http_is_a_validation_error(nb_host: HostProcess, case: tuple[str, dict[str, Any]]) -> None:
    name, args = case
    r = post(nb_host, name, args, WS)
    assert r.status_code == 400, (r.status_code, r.text[:500])
    err = r.json()["error"]
    assert err["code"] == "VALIDATION_ERROR", err
    assert err["message"]
    assert err["recovery_suggestions"]


async def test_hostile_inputs_over_mcp_change_nothing_upstream(nb_host: HostProcess, fake: FakeNeubird) -> None:
    await call(nb_host, "neubird_list_sessions", {"limit": 1}, WS)  # logged in, projects cached
    before = fake.stats()["routes"]
    for name, args in CASES:
        err = error_of(await call(nb_host, name, args, WS))
        assert err["code"] == "VALIDATION_ERROR", (name, args, err)
    after = fake.stats()["routes"]
    # Refused before NeuBird was asked anything that creates or sends (no session, no prompt, no report).
    for route in ("POST /v1/inference/new_session", "POST /v1/inference/session:create", "POST /v1/inference/session"):
        assert after.get(route, 0) == before.get(route, 0), route
    assert "other" not in after or after["other"] == before.get("other", 0)  # no unknown path was ever built


def test_a_body_of_megabytes_is_refused_not_crashed(nb_host: HostProcess) -> None:
    r = post(nb_host, "neubird_create_investigation", {"prompt": "y" * 3_000_000}, WS)
    assert r.status_code in (400, 413), (r.status_code, r.text[:300])
    assert r.json()["error"]["code"] in ("VALIDATION_ERROR", "PAYLOAD_TOO_LARGE"), r.text[:300]
