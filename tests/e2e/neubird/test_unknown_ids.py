"""Ids NeuBird does not know: NOT_FOUND with the spec's error type (api for a project, investigation for a
session) and a recovery that says what to look up; a failed investigation stays an investigation error."""

from __future__ import annotations

from typing import Any

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, error_of, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("unknown")
NO_PROJECT = "11111111-2222-4333-8444-555555555555"
NO_SESSION = "a" * 24

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("neubird_list_sessions", {"project_uuid": NO_PROJECT}, "api"),
    ("neubird_investigate_alert", {"alert_id": "/x/y", "project_uuid": NO_PROJECT}, "api"),
    ("neubird_create_investigation", {"prompt": "Check the API latency", "project_uuid": NO_PROJECT}, "api"),
    ("neubird_get_investigation_status", {"session_uuid": NO_SESSION}, "investigation"),
    ("neubird_inspect_session", {"session_uuid": NO_SESSION}, "investigation"),
    ("neubird_get_session_summary", {"session_uuid": NO_SESSION}, "investigation"),
    (
        "neubird_continue_investigation",
        {"session_uuid": NO_SESSION, "follow_up_prompt": "more please"},
        "investigation",
    ),
    (
        "neubird_continue_investigation",
        {"session_uuid": NO_SESSION, "follow_up_prompt": "more please", "wait_for_completion": True},
        "investigation",
    ),
]


@pytest.mark.parametrize(("name", "args", "kind"), CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
async def test_unknown_ids_are_not_found(nb_host: HostProcess, name: str, args: dict[str, Any], kind: str) -> None:
    err = error_of(await call(nb_host, name, args, WS))
    assert err["code"] == "NOT_FOUND", err
    assert err["details"]["type"] == kind
    assert ("neubird_list_projects" if kind == "api" else "neubird_list_sessions") in err["recovery_suggestions"][0]


async def test_unknown_sessions_in_a_report_are_listed_as_missing(nb_host: HostProcess, fake: FakeNeubird) -> None:
    out = await call(
        nb_host, "neubird_get_session_report", {"session_uuids": [NO_SESSION], "project_uuid": fake.project_uuid}, WS
    )
    assert out["reports"] == []
    assert out["missing"] == [NO_SESSION]


async def test_a_failed_investigation_stays_an_investigation_error(nb_host: HostProcess, fake: FakeNeubird) -> None:
    fake.next_prompt(60, fail=True)
    err = error_of(
        await call(
            nb_host,
            "neubird_create_investigation",
            {"prompt": "Why is the data source not found?", "wait_for_completion": True},
            WS,
        )
    )
    assert err["code"] == "UPSTREAM_ERROR", err
    assert err["details"]["type"] == "investigation"
    assert "neubird_inspect_session" in err["recovery_suggestions"][0]
