"""The spec's example interactions (Examples 1-7 of neubird-mcp-server.md) over MCP against the fake NeuBird,
plus the list tool's semantics (filters_applied, hints, compact mode, pagination, order, search) and the
per-tool HTTP functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, error_of, post, tools_document, ws
from tests.support.fake_neubird import FakeNeubird

NOT_STARTED = "INVESTIGATION_STATUS_NOT_STARTED"
INCIDENT = "SESSION_TYPE_INCIDENT"
AZURE_ALERT = (
    "/subscriptions/cb3bc010-0fc7-476a-8577-03c3e45e2296/resourcegroups/test123/providers/microsoft.insights/"
    "components/test123-insights/providers/Microsoft.AlertsManagement/alerts/08f9c803-6bff-4030-bbe8-300a993af000"
)

WS = ws("examples")


def _descending(rows: list[dict[str, Any]]) -> bool:
    times = [r["create_time"] for r in rows]
    return times == sorted(times, reverse=True)


# -- Example 1: recent sessions of a project over the last week ----------------------------------------------


async def test_example_1_recent_sessions_last_week(nb_host: HostProcess, fake: FakeNeubird) -> None:
    since = (datetime.now(UTC) - timedelta(days=7)).date().isoformat()
    out = await call(
        nb_host, "neubird_list_sessions", {"project_uuid": fake.project_uuid, "limit": 20, "date_from": since}, WS
    )
    assert out["project_uuid"] == fake.project_uuid
    assert out["filters_applied"] == {"date_from": since}
    assert out["page"] == 1
    assert out["limit"] == 20
    # 300 seeded sessions over 60 days: more than 20 this week (sessions other tests' workspaces created here
    # are counted in hidden_count, not shown).
    assert out["count"] == len(out["sessions"])
    assert out["count"] + out["hidden_count"] == 20
    assert all(r["create_time"] >= since for r in out["sessions"]), out["sessions"]
    assert _descending(out["sessions"])
    # Compact above 10 results: short rows and the spec's hint.
    assert out["compact_mode"] is True
    assert "compact=false" in out["compact_hint"]
    assert set(out["sessions"][0]) <= {"session_uuid", "name", "create_time", "status", "incident_id", "priority"}
    assert out["has_more"] is True
    assert "page=2" in out["pagination_hint"]
    assert out.get("investigation_hint") is None


async def test_pages_continue_where_the_previous_ended(nb_host: HostProcess, fake: FakeNeubird) -> None:
    first = await call(nb_host, "neubird_list_sessions", {"limit": 15}, WS)
    second = await call(nb_host, "neubird_list_sessions", {"limit": 15, "page": 2}, WS)
    assert first["project_uuid"] == fake.project_uuid  # NEUBIRD_DEFAULT_PROJECT_UUID
    ids1 = [r["session_uuid"] for r in first["sessions"]]
    ids2 = [r["session_uuid"] for r in second["sessions"]]
    assert len(ids1) + first["hidden_count"] == len(ids2) + second["hidden_count"] == 15
    assert not set(ids1) & set(ids2)
    assert first["sessions"][-1]["create_time"] >= second["sessions"][0]["create_time"]
    assert "page=3" in second["pagination_hint"]
    # Far past the end: an empty page, no pagination hint.
    last = await call(nb_host, "neubird_list_sessions", {"limit": 100, "page": 50}, WS)
    assert last["sessions"] == []
    assert last["has_more"] is False
    assert last.get("pagination_hint") is None


async def test_compact_mode_is_automatic_above_ten_and_overridable(nb_host: HostProcess) -> None:
    ten = await call(nb_host, "neubird_list_sessions", {"limit": 10}, WS)
    assert ten["count"] + ten["hidden_count"] == 10
    assert ten["compact_mode"] is False
    assert ten.get("compact_hint") is None
    full = ten["sessions"][0]
    assert {"session_uuid", "name", "create_time", "last_update", "prompt_cycle_count", "investigation_status"} <= set(
        full
    )
    eleven = await call(nb_host, "neubird_list_sessions", {"limit": 30}, WS)
    assert eleven["count"] > 10
    assert eleven["compact_mode"] is True
    assert eleven["compact_hint"]
    forced_full = await call(nb_host, "neubird_list_sessions", {"limit": 30, "compact": False}, WS)
    assert forced_full["compact_mode"] is False
    assert "last_update" in forced_full["sessions"][0]
    forced_compact = await call(nb_host, "neubird_list_sessions", {"limit": 3, "compact": True}, WS)
    assert forced_compact["compact_mode"] is True
    assert "last_update" not in forced_compact["sessions"][0]
    # The same first rows as the full page (of NeuBird's first 3 rows, those other workspaces created are hidden).
    shown = [r["session_uuid"] for r in forced_compact["sessions"]]
    assert len(shown) + forced_compact["hidden_count"] == 3
    assert [r["session_uuid"] for r in ten["sessions"]][: len(shown)] == shown


# -- Example 1a: uninvestigated incidents, and the same through explicit filters -----------------------------


async def test_example_1a_uninvestigated_incidents(nb_host: HostProcess, fake: FakeNeubird) -> None:
    out = await call(
        nb_host,
        "neubird_list_sessions",
        {"project_uuid": fake.project_uuid, "only_uninvestigated": True, "limit": 50, "compact": False},
        WS,
    )
    assert out["filters_applied"] == {
        "investigation_status": NOT_STARTED,
        "session_type": INCIDENT,
        "only_uninvestigated": True,
    }
    assert out["sessions"]
    assert all(r["investigation_status"] == NOT_STARTED and r["session_type"] == INCIDENT for r in out["sessions"])
    assert all(r["incident_info"]["id"] for r in out["sessions"])
    assert "neubird_investigate_alert" in out["investigation_hint"]
    assert out["sessions"][0]["incident_info"]["id"] in out["investigation_hint"]
    assert _descending(out["sessions"])
    explicit = await call(
        nb_host,
        "neubird_list_sessions",
        {
            "project_uuid": fake.project_uuid,
            "investigation_status": "INVESTIGATION_STATUS_NOT_STARTED",
            "session_type": "SESSION_TYPE_INCIDENT",
            "limit": 50,
            "compact": False,
        },
        WS,
    )
    assert [r["session_uuid"] for r in explicit["sessions"]] == [r["session_uuid"] for r in out["sessions"]]
    assert explicit["filters_applied"] == {"investigation_status": NOT_STARTED, "session_type": INCIDENT}
    friendly = await call(
        nb_host, "neubird_list_sessions", {"investigation_status": "not_started", "session_type": "incident"}, WS
    )
    assert friendly["filters_applied"] == explicit["filters_applied"]


async def test_status_type_and_grouping_filters(nb_host: HostProcess) -> None:
    done = await call(
        nb_host, "neubird_list_sessions", {"investigation_status": "completed", "limit": 40, "compact": False}, WS
    )
    assert done["sessions"]
    assert {r["investigation_status"] for r in done["sessions"]} == {"INVESTIGATION_STATUS_COMPLETED"}
    chats = await call(nb_host, "neubird_list_sessions", {"session_type": "chat", "limit": 40, "compact": False}, WS)
    assert chats["sessions"]
    assert {r["session_type"] for r in chats["sessions"]} == {"SESSION_TYPE_CHAT"}
    grouped = await call(nb_host, "neubird_list_sessions", {"limit": 100, "compact": False}, WS)
    assert any("grouped_incidents" in (r.get("incident_info") or {}) for r in grouped["sessions"])
    hidden = await call(nb_host, "neubird_list_sessions", {"limit": 100, "hide_grouped_incidents": True}, WS)
    assert hidden["filters_applied"] == {"hide_grouped_incidents": True}
    kept = {r["session_uuid"] for r in grouped["sessions"] if "grouped_incidents" not in (r.get("incident_info") or {})}
    assert {r["session_uuid"] for r in hidden["sessions"]} == kept
    window = await call(
        nb_host,
        "neubird_list_sessions",
        {"date_from": "2026-01-01T00:00:00Z", "date_to": "2026-01-02", "limit": 5},
        WS,
    )
    assert window["filters_applied"] == {"date_from": "2026-01-01T00:00:00Z", "date_to": "2026-01-02"}


# -- Example 1b: search by incident title, any case ----------------------------------------------------------


async def test_example_1b_search_is_a_case_insensitive_partial_match(nb_host: HostProcess, fake: FakeNeubird) -> None:
    mine = fake.add_session(
        alert_id="/aws/alerts/web-3-load-4242", title="High Load Avg on web-3", status="not_started"
    )
    out = await call(
        nb_host, "neubird_list_sessions", {"search_term": "load avg", "only_uninvestigated": True, "limit": 20}, WS
    )
    assert out["filters_applied"]["search_term"] == "load avg"
    assert out["filters_applied"]["only_uninvestigated"] is True
    assert [r["session_uuid"] for r in out["sessions"]] == [mine]
    assert out["compact_mode"] is False  # one result
    crash = await call(
        nb_host, "neubird_list_sessions", {"search_term": "CRASHING pod", "limit": 100, "compact": False}, WS
    )
    titles = [r["incident_info"]["title"] for r in crash["sessions"]]
    assert titles
    assert all("crashing pod" in t.lower() for t in titles)
    # Investigated and uninvestigated alike.
    assert len({r["investigation_status"] for r in crash["sessions"]}) > 1
    none = await call(nb_host, "neubird_list_sessions", {"search_term": "no such incident title"}, WS)
    assert none["sessions"] == []
    assert none["count"] == 0


# -- Example 2: a session's details and sources --------------------------------------------------------------


async def _completed_session(host: HostProcess) -> dict[str, Any]:
    listed = await call(host, "neubird_list_sessions", {"investigation_status": "completed", "limit": 5}, WS)
    return listed["sessions"][0]


async def test_example_2_inspect_session(nb_host: HostProcess, fake: FakeNeubird) -> None:
    row = await _completed_session(nb_host)
    out = await call(
        nb_host, "neubird_inspect_session", {"session_uuid": row["session_uuid"], "project_uuid": fake.project_uuid}, WS
    )
    assert out["session_info"]["session_uuid"] == row["session_uuid"]
    assert out["session_info"]["investigation_status"] == "INVESTIGATION_STATUS_COMPLETED"
    cycle = out["prompt_cycles"][0]
    assert cycle["status"] == "PROMPT_STATUS_COMPLETED"
    assert cycle["final_answer"]
    assert cycle["chain_of_thoughts"]
    assert all(s["description"] for s in cycle["chain_of_thoughts"])
    assert cycle["sources"]
    assert out["session_link"].endswith(
        f"/console/project/{fake.project_uuid}/session/{row['session_uuid']}?tab=results"
    )
    missing = await call(nb_host, "neubird_inspect_session", {"session_uuid": "abc-123"}, WS)
    err = error_of(missing)
    assert err["code"] == "NOT_FOUND", err


# -- Example 3: incident analytics ---------------------------------------------------------------------------


async def test_example_3_incident_report(nb_host: HostProcess) -> None:
    report = await call(nb_host, "neubird_get_incident_report", {}, WS)
    assert "report" not in report  # the spec's fields, flat
    assert report["total_incidents"] > 0
    assert report["total_investigations"] > 0
    assert "avg_investigation_time_saved_minutes" in report
    assert "noise_reduction" in report
    priorities = report["incident_type_reports"][0]["priority_reports"]
    assert [p["priority"] for p in priorities] == ["P1", "P2", "P3", "P4"]


# -- Example 4: reports for several sessions, time saved -----------------------------------------------------


async def test_example_4_session_report(nb_host: HostProcess, fake: FakeNeubird) -> None:
    listed = await call(nb_host, "neubird_list_sessions", {"investigation_status": "completed", "limit": 5}, WS)
    shown = [r["session_uuid"] for r in listed["sessions"]][:2]  # others' sessions on the page are not shown
    assert shown
    wanted = [*shown, "session-3"]
    out = await call(
        nb_host, "neubird_get_session_report", {"session_uuids": wanted, "project_uuid": fake.project_uuid}, WS
    )
    assert len(out["reports"]) == len(shown)
    assert out["missing"] == ["session-3"]
    for row in out["reports"]:
        assert row["prompt"]
        assert "<" not in row["summary"]
        assert any(sid in row["session_link"] for sid in shown)
        assert row["time_saved"] is None or isinstance(row["time_saved"], int | float)


async def test_session_summary(nb_host: HostProcess) -> None:
    row = await _completed_session(nb_host)
    out = await call(nb_host, "neubird_get_session_summary", {"session_uuid": row["session_uuid"]}, WS)
    assert out["session_uuid"] == row["session_uuid"]
    if out["available"]:
        assert out["analysis"] or out["short_summary"]
        assert out["raw"]  # NeuBird's own object, under its one key
    else:
        assert "not written" in out["message"]


# -- Example 5: investigate an alert: new, then found_existing -----------------------------------------------


async def test_example_5_investigate_alert_new_then_existing(nb_host: HostProcess, fake: FakeNeubird) -> None:
    started = await call(
        nb_host,
        "neubird_investigate_alert",
        {"alert_id": AZURE_ALERT, "wait_for_completion": True, "max_wait_seconds": 300},
        WS,
    )
    assert started["status"] == "completed", started
    assert started["project_uuid"] == fake.project_uuid
    assert started["investigation_results"]["final_answer"]
    assert started["investigation_results"]["chain_of_thoughts"]
    assert started.get("run_id") is None
    sid = started["session_uuid"]
    assert fake.session_view(sid)["session_info"]["incident_info"]["id"] == AZURE_ALERT
    again = await call(nb_host, "neubird_investigate_alert", {"alert_id": AZURE_ALERT}, WS)
    assert again["status"] == "found_existing", again
    assert again["session_uuid"] == sid
    assert again["investigation_results"]["final_answer"] == started["investigation_results"]["final_answer"]


async def test_investigate_alert_without_waiting_answers_new_investigation(
    nb_host: HostProcess, fake: FakeNeubird
) -> None:
    listed = await call(
        nb_host, "neubird_list_sessions", {"only_uninvestigated": True, "limit": 5, "compact": True}, WS
    )
    alert = listed["sessions"][0]["incident_id"]
    out = await call(nb_host, "neubird_investigate_alert", {"alert_id": alert}, WS)
    assert out["status"] == "new_investigation", out
    assert "neubird_get_investigation_status" in out["next_action"]
    assert out["session_uuid"] == listed["sessions"][0]["session_uuid"]  # the existing NOT_STARTED incident session
    assert fake.wait_finished(out["session_uuid"], timeout=30)
    status = await call(nb_host, "neubird_get_investigation_status", {"session_uuid": out["session_uuid"]}, WS)
    assert status["status"] == "completed"
    assert status["progress_percentage"] == 100
    assert status["investigation_results"]["final_answer"]
    assert status["investigation_summary"]["total_steps"] >= status["investigation_summary"]["completed_steps"] > 0
    brief = await call(
        nb_host,
        "neubird_get_investigation_status",
        {"session_uuid": out["session_uuid"], "include_full_details": False},
        WS,
    )
    assert brief["status"] == "completed"
    assert brief.get("investigation_results") is None


# -- Example 6: custom investigation with a timeframe --------------------------------------------------------


async def test_example_6_create_investigation_with_timeframe(nb_host: HostProcess, fake: FakeNeubird) -> None:
    prompt = "Analyze my EKS cluster for security vulnerabilities and misconfigurations"
    out = await call(
        nb_host,
        "neubird_create_investigation",
        {"prompt": prompt, "timeframe": "last 2 hours", "wait_for_completion": True},
        WS,
    )
    assert out["status"] == "completed", out
    frame = out["timeframe_parsed"]
    start = datetime.fromisoformat(frame["start"])
    end = datetime.fromisoformat(frame["end"])
    assert end - start == timedelta(hours=2)
    assert "2 hours" in frame["description"]
    assert out["enhanced_prompt"].startswith(prompt)
    assert frame["start"] in out["enhanced_prompt"]
    assert frame["end"] in out["enhanced_prompt"]
    assert out["investigation_results"]["final_answer"]
    sent = fake.session_view(out["session_uuid"])["prompt_cycle"][0]["request"]
    assert frame["start"] in str(sent)  # NeuBird got the enhanced prompt
    # Without waiting: "created" as soon as NeuBird took the prompt.
    quick = await call(
        nb_host,
        "neubird_create_investigation",
        {"prompt": prompt, "start_time": frame["start"], "end_time": frame["end"]},
        WS,
    )
    assert quick["status"] == "created", quick
    assert quick["timeframe_parsed"]["start"] == frame["start"]


@pytest.mark.parametrize("timeframe", ["between 2026-11-03 and 2026-11-01", "next 3 hours", "since 2999-01-01"])
async def test_bad_timeframes_are_validation_errors(nb_host: HostProcess, fake: FakeNeubird, timeframe: str) -> None:
    before = fake.calls("POST /v1/inference/new_session")
    out = await call(
        nb_host, "neubird_create_investigation", {"prompt": "Check the API latency please", "timeframe": timeframe}, WS
    )
    err = error_of(out)
    assert err["code"] == "VALIDATION_ERROR", err
    assert fake.calls("POST /v1/inference/new_session") == before  # refused before any session was made


# -- Example 7: a follow-up adds a cycle -----------------------------------------------------------------------


async def test_example_7_follow_up_adds_a_cycle(nb_host: HostProcess, fake: FakeNeubird) -> None:
    created = await call(
        nb_host,
        "neubird_create_investigation",
        {"prompt": "Why is the frontend-service CPU throttled?", "wait_for_completion": True},
        WS,
    )
    sid = created["session_uuid"]
    before = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, WS)
    assert len(before["prompt_cycles"]) == 1
    follow_up = (
        "Please provide more details about the network policy issues, including specific configurations that "
        "need to be addressed"
    )
    out = await call(
        nb_host,
        "neubird_continue_investigation",
        {"session_uuid": sid, "follow_up_prompt": follow_up, "wait_for_completion": True},
        WS,
    )
    assert out["status"] == "completed", out
    assert out["session_uuid"] == sid
    assert out["investigation_results"]["final_answer"]
    after = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, WS)
    assert len(after["prompt_cycles"]) == 2, after["prompt_cycles"]
    assert follow_up in str(after["prompt_cycles"][1]["request"])
    assert len(fake.session_view(sid)["prompt_cycle"]) == 2


# -- projects, defaults, instance --------------------------------------------------------------------------------


async def test_projects_hide_the_system_one_and_come_from_the_cache(nb_host: HostProcess, fake: FakeNeubird) -> None:
    mine = ws("projects")
    first = await call(nb_host, "neubird_list_projects", {}, mine)
    names = [p["name"] for p in first["projects"]]
    assert names == ["Production", "Staging"]
    assert first["default_project"] == fake.project_uuid
    assert [p["is_default"] for p in first["projects"]] == [True, False]
    assert first["cached"] is False
    calls = fake.calls("GET /v1/project")
    again = await call(nb_host, "neubird_list_projects", {"include_inactive": True}, mine)
    assert again["cached"] is True
    assert fake.calls("GET /v1/project") == calls
    assert [p["name"] for p in again["projects"]] == ["Production", "Staging", "Payments sandbox"]
    assert again["projects"][2]["ready"] is False


async def test_configure_defaults_by_name_and_reset(nb_host: HostProcess, fake: FakeNeubird) -> None:
    mine = ws("defaults")
    shown = await call(nb_host, "neubird_configure_defaults", {}, mine)
    assert shown["current_defaults"]["project_uuid"] == fake.project_uuid
    assert shown["current_defaults"]["instance"] == fake.base_url
    set_ = await call(
        nb_host,
        "neubird_configure_defaults",
        {"default_project_uuid": "staging", "default_timeframe": "last 3 hours", "enable_streaming": True},
        mine,
    )
    staging = fake.projects[1]["uuid"]
    assert set_["current_defaults"]["project_uuid"] == staging
    assert set_["current_defaults"]["timeframe"] == "last 3 hours"
    assert set_["current_defaults"]["streaming_enabled"] is True
    listed = await call(nb_host, "neubird_list_sessions", {"limit": 5}, mine)
    assert listed["project_uuid"] == staging
    created = await call(nb_host, "neubird_create_investigation", {"prompt": "Is staging short of memory?"}, mine)
    assert created["project_uuid"] == staging
    assert "3 hours" in created["timeframe_parsed"]["description"]
    unknown = await call(nb_host, "neubird_configure_defaults", {"default_project_uuid": "no such project"}, mine)
    assert error_of(unknown)["code"] == "NOT_FOUND"
    bad_frame = await call(nb_host, "neubird_configure_defaults", {"default_timeframe": "whenever"}, mine)
    assert error_of(bad_frame)["code"] == "VALIDATION_ERROR"
    reset = await call(
        nb_host, "neubird_configure_defaults", {"default_project_uuid": "", "default_timeframe": ""}, mine
    )
    assert reset["current_defaults"]["project_uuid"] == fake.project_uuid
    assert reset["current_defaults"]["timeframe"] == "last 1 hour"


# -- per-tool HTTP: the same declaration as MCP ------------------------------------------------------------------


async def test_per_tool_http_functions(nb_host: HostProcess, fake: FakeNeubird) -> None:
    mine = ws("http")
    r = post(nb_host, "neubird_list_sessions", {"only_uninvestigated": True, "limit": 3}, mine)
    assert r.status_code == 200, r.text
    body = r.json()
    over_mcp = await call(nb_host, "neubird_list_sessions", {"only_uninvestigated": True, "limit": 3}, mine)
    assert body["sessions"] == over_mcp["sessions"]
    assert body["filters_applied"] == over_mcp["filters_applied"]
    r = post(nb_host, "neubird_list_projects", {}, mine)
    assert r.status_code == 200
    assert [p["name"] for p in r.json()["projects"]] == ["Production", "Staging"]
    r = post(nb_host, "neubird_get_incident_report", {}, mine)
    assert r.status_code == 200
    assert r.json()["total_incidents"] > 0
    r = post(nb_host, "neubird_switch_instance", {"base_url": "https://169.254.169.254/api"}, mine)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    r = post(nb_host, "neubird_list_sessions", {"limit": 101}, mine)
    assert r.status_code == 400
    assert r.json()["error"]["details"]["errors"][0]["field"] == "limit"
    tools = tools_document(nb_host)
    neubird = sorted(n for n in tools if n.startswith("neubird_"))
    assert len(neubird) == 12
    assert tools["neubird_list_sessions"]["inputSchema"]["properties"]["limit"]["maximum"] == 100
    async_tools = await _mcp_tool_names(nb_host)
    assert set(neubird) <= async_tools


async def _mcp_tool_names(host: HostProcess) -> set[str]:
    from tests.e2e.neubird.conftest import dev, mcp

    async with mcp(host, dev(WS)) as client:
        listed = await client.list_tools()
    return {t.name for t in listed.tools}


async def test_a_date_only_range_covers_the_whole_day(nb_host: HostProcess, fake: FakeNeubird) -> None:
    sid = fake.add_session(alert_id="/aws/alerts/today-1", title="Created today", status="not_started")
    today = datetime.now(UTC).date().isoformat()
    out = await call(
        nb_host, "neubird_list_sessions", {"date_from": today, "date_to": today, "limit": 100, "compact": True}, WS
    )
    assert out["filters_applied"] == {"date_from": today, "date_to": today}
    assert sid in [r["session_uuid"] for r in out["sessions"]]
    assert all(r["create_time"].startswith(today) for r in out["sessions"])
