"""Every neubird_* tool answers in the spec's shape (../shared/specs/neubird-mcp-server.md), against a NeuBird that
sends fields the contract does not name (the fake's extra_fields): those never reach an answer, except under the
one documented `raw` key of the session summary."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.neubird.tools import CreateInvestigationRequest
from shared.tools.deps import Deps
from tests.integration.neubird_harness import LOCAL, answer, caller
from tests.support.fake_neubird import FakeNeubird

UNLISTED = "x_unlisted"
INCIDENT_REPORT = {
    "avg_investigation_time_saved_minutes",
    "avg_mttr",
    "end_time",
    "start_time",
    "incident_type_reports",
    "noise_reduction",
    "total_incidents",
    "total_investigation_time_saved_hours",
    "total_investigations",
}
PRIORITY_REPORT = {
    "avg_investigation_time_minutes",
    "avg_mttr",
    "avg_time_saved_minutes",
    "investigated_incidents",
    "percent_grouped",
    "priority",
    "total_incidents",
}
SPEC_STATUSES = {"in_progress", "completed", "failed", "unknown"}


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(
        sessions=40, seed=31, investigation_seconds=20, time_scale=0.01, strict=True, extra_fields=True
    ) as nb:
        yield nb


@pytest.fixture
async def deps(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    built = build_deps(load_settings({**app_env, **fake.env(), **LOCAL}))
    yield built
    await built.aclose()


def unlisted(value: Any, path: str = "") -> list[str]:
    """Where a field the contract does not name appears in `value` (paths like `sessions[0].incident_info`)."""
    if isinstance(value, dict):
        found = [path] if UNLISTED in value else []
        return found + [p for k, v in value.items() for p in unlisted(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in unlisted(v, f"{path}[{i}]")]
    return []


async def test_the_incident_report_is_the_spec_s_flat_object(deps: Deps) -> None:
    out = await answer(deps, caller(), "neubird_get_incident_report", {})
    assert "report" not in out
    assert set(out) >= INCIDENT_REPORT, out
    assert set(out) <= {*INCIDENT_REPORT, "not_reported"}
    assert out["not_reported"] == []
    assert isinstance(out["total_incidents"], int)
    assert out["incident_type_reports"][0]["incident_type"] == "alert"
    assert set(out["incident_type_reports"][0]["priority_reports"][0]) == PRIORITY_REPORT
    assert unlisted(out) == []


async def test_the_session_summary_has_the_spec_s_score_fields_and_names_what_it_cannot_give(
    deps: Deps, fake: FakeNeubird
) -> None:
    sid = fake.add_session(alert_id="/aws/alerts/shape-scored-1", status="completed", summary="scored")
    raw = fake.session_view(sid)  # (inspect; the summary NeuBird holds is read through the tool below)
    assert raw["prompt_cycle"]
    out = await answer(deps, caller(), "neubird_get_session_summary", {"session_uuid": sid})
    score = out["analysis_score"]
    assert set(score) >= {"accuracy", "completeness", "qualitative", "scored_by", "scored_during_call"}
    assert {"root_cause_correct", "impact_analysis_correct", "timeline_accurate", "overall_score"} <= set(
        score["accuracy"]
    )
    assert {"data_sources", "remediation_steps", "prevention_measures", "business_impact", "overall_score"} <= set(
        score["completeness"]
    )
    assert {"trust_without_review", "missing_elements", "additional_notes", "improvement_suggestions"} <= set(
        score["qualitative"]
    )
    nb_score = out["raw"]["analysis_score"]
    assert score["accuracy"]["overall_score"] == nb_score["accuracy"]["score"]
    assert score["completeness"]["overall_score"] == nb_score["completeness"]["score"]
    assert "Add a timeline" in score["qualitative"]["improvement_suggestions"]
    assert score["scored_by"] == "auto"
    assert score["accuracy"]["root_cause_correct"] is None
    assert "analysis_score.accuracy.root_cause_correct" in out["not_provided"]
    assert "analysis_score.scored_during_call" in out["not_provided"]
    assert "analysis_score.accuracy.overall_score" not in out["not_provided"]
    # NeuBird's object is kept whole under `raw`, and only there.
    assert UNLISTED in out["raw"]
    assert unlisted({k: v for k, v in out.items() if k != "raw"}) == []


async def test_an_unscored_summary_says_the_score_is_not_there(deps: Deps, fake: FakeNeubird) -> None:
    sid = fake.add_session(alert_id="/aws/alerts/shape-plain-1", status="completed", summary="plain")
    out = await answer(deps, caller(), "neubird_get_session_summary", {"session_uuid": sid})
    assert out["available"] is True
    assert out["analysis_score"] is None
    assert "analysis_score" in out["not_provided"]
    assert out["action_items"]


async def test_no_unlisted_field_reaches_any_read_tool(deps: Deps, fake: FakeNeubird) -> None:
    who = caller()
    alert = "/aws/alerts/shape-unlisted-1"
    sid = fake.add_session(alert_id=alert, status="completed")
    listed = await answer(deps, who, "neubird_list_sessions", {"limit": 50, "compact": False})
    assert listed["sessions"]
    assert all(isinstance(r["prompt_cycle_count"], int) for r in listed["sessions"])
    outs = {
        "list": listed,
        "inspect": await answer(deps, who, "neubird_inspect_session", {"session_uuid": sid}),
        "status": await answer(deps, who, "neubird_get_investigation_status", {"session_uuid": sid}),
        "alert": await answer(deps, who, "neubird_investigate_alert", {"alert_id": alert}),
        "report": await answer(
            deps, who, "neubird_get_session_report", {"session_uuids": [sid], "project_uuid": fake.project_uuid}
        ),
        "projects": await answer(deps, who, "neubird_list_projects", {"include_inactive": True}),
    }
    for name, out in outs.items():
        assert "error" not in out, (name, out)
        assert unlisted(out) == [], name
    cycle = outs["inspect"]["prompt_cycles"][0]
    assert cycle["request"]["messages"][0]["content"]["parts"] == [f"Investigate alert {alert}"]
    assert all(set(s) <= {"id", "title", "description", "category"} for s in cycle["sources"])
    assert isinstance(outs["report"]["reports"][0]["time_saved"], int)


async def test_streamed_sources_carry_no_unlisted_field(deps: Deps, fake: FakeNeubird) -> None:
    out = await answer(
        deps,
        caller(),
        "neubird_create_investigation",
        {"prompt": "Why is checkout slow since the deploy?", "wait_for_completion": True},
    )
    assert out["status"] == "completed", out
    assert out["investigation_results"]["sources"]
    assert unlisted(out) == []


async def test_status_is_one_of_the_spec_s_values_even_before_any_investigation(deps: Deps, fake: FakeNeubird) -> None:
    sid = fake.add_session(alert_id="/aws/alerts/shape-new-1", status="not_started")
    out = await answer(deps, caller(), "neubird_get_investigation_status", {"session_uuid": sid})
    assert out["status"] in SPEC_STATUSES
    assert out["status"] == "unknown"
    assert out["investigation_status"] == "INVESTIGATION_STATUS_NOT_STARTED"
    assert "not started" in out["message"]
    assert isinstance(out["created_at"], str)
    assert out["created_at"]


@pytest.mark.parametrize("kind", ["SESSION_TYPE_MANUAL", "manual"])
async def test_manual_sessions_are_neubird_s_chat_sessions(deps: Deps, fake: FakeNeubird, kind: str) -> None:
    out = await answer(deps, caller(), "neubird_list_sessions", {"session_type": kind, "compact": False})
    assert out["sessions"], out
    assert {r["session_type"] for r in out["sessions"]} == {"SESSION_TYPE_CHAT"}
    assert out["filters_applied"]["session_type"] == "SESSION_TYPE_CHAT"


@pytest.mark.parametrize(
    ("field", "value"), [("session_type", "SESSION_TYPE_BOGUS"), ("investigation_status", "INVESTIGATION_STATUS_X")]
)
async def test_an_unknown_enum_value_is_refused_not_answered_empty(deps: Deps, field: str, value: str) -> None:
    out = await answer(deps, caller(), "neubird_list_sessions", {field: value})
    assert out["error"]["code"] == "VALIDATION_ERROR", out
    assert out["error"]["details"]["field"] == field


def test_stream_updates_defaults_to_false() -> None:
    assert CreateInvestigationRequest.model_fields["stream_updates"].default is False


async def test_no_progress_is_streamed_unless_asked(deps: Deps) -> None:
    told: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        told.append(str(message))

    args = {"prompt": "Why is checkout slow since the deploy?", "wait_for_completion": True}
    quiet = await answer(deps, caller(), "neubird_create_investigation", args, progress)
    assert quiet["status"] == "completed", quiet
    assert told == []
    loud = await answer(deps, caller(), "neubird_create_investigation", {**args, "stream_updates": True}, progress)
    assert loud["status"] == "completed", loud
    assert told
