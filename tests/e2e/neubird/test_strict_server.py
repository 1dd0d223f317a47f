"""The NeuBird tools over MCP (and one over /api/tools) against a NeuBird that writes RFC 3339 times with offsets,
answers HTTP 400 to a filter key it does not document, sends fields the contract does not name, and where the
caller has two ready projects and no default: the answers a person acts on stay right."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from devhost.processes import HostProcess
from shared.neubird.times import parse_rfc3339
from tests.e2e.neubird.conftest import call, error_of, post, ws
from tests.support.fake_neubird import FakeNeubird

WS = ws("strict")
INDIA = timedelta(hours=5, minutes=30)
PACIFIC = timedelta(hours=-8)


def _unlisted(value: Any) -> bool:
    if isinstance(value, dict):
        return "x_unlisted" in value or any(_unlisted(v) for v in value.values())
    return isinstance(value, list) and any(_unlisted(v) for v in value)


async def test_an_alert_investigation_against_a_strict_server(
    strict_host: HostProcess, strict_fake: FakeNeubird
) -> None:
    nb = strict_fake
    staging = nb.projects[1]["uuid"]
    alert = "/subscriptions/0000/providers/Microsoft.AlertsManagement/alerts/strict-e2e-1"
    base = datetime.now(UTC) - timedelta(hours=2)
    older = nb.add_session(alert_id=alert, created=base, offset=INDIA, project_uuid=staging, answer="Old: disk.")
    newer = nb.add_session(
        alert_id=alert, created=base + timedelta(hours=1), offset=PACIFIC, project_uuid=staging, answer="New: pool."
    )
    refused_before = nb.stats()["statuses"].get(400, 0)

    # No project given, none by default: the alert's sessions are found in Staging, through the documented
    # filters (the undocumented one is refused), and the latest RCA is the most recent session by time.
    found = await call(strict_host, "neubird_investigate_alert", {"alert_id": alert}, WS)
    assert found["status"] == "found_existing", found
    assert found["session_uuid"] == newer
    assert found["session_uuid"] != older
    assert found["project_uuid"] == staging
    assert found["investigation_results"]["final_answer"].startswith("New: pool.")
    assert nb.stats()["statuses"].get(400, 0) - refused_before <= 1
    assert not _unlisted(found)

    # Status, summary and a follow-up of that session need no project_uuid either.
    status = await call(strict_host, "neubird_get_investigation_status", {"session_uuid": newer}, WS)
    assert status["status"] == "completed", status
    assert parse_rfc3339(status["created_at"]) is not None
    summary = await call(strict_host, "neubird_get_session_summary", {"session_uuid": newer}, WS)
    assert summary["available"] is True, summary
    assert summary["analysis_score"]["accuracy"]["overall_score"] is not None
    assert not _unlisted({k: v for k, v in summary.items() if k != "raw"})
    follow = await call(
        strict_host,
        "neubird_continue_investigation",
        {"session_uuid": newer, "follow_up_prompt": "Which deploy shrank the pool?", "wait_for_completion": True},
        WS,
    )
    assert follow["status"] == "completed", follow
    assert follow["project_uuid"] == staging

    # The list of the project is most recent first by instant, whatever the offsets.
    listed = await call(strict_host, "neubird_list_sessions", {"project_uuid": staging, "limit": 100}, WS)
    instants = [parse_rfc3339(r["create_time"]) for r in listed["sessions"]]
    assert None not in instants
    assert instants == sorted(instants, reverse=True)  # type: ignore[type-var]
    assert not _unlisted(listed)


async def test_a_new_investigation_without_a_default_lists_the_projects(
    strict_host: HostProcess, strict_fake: FakeNeubird
) -> None:
    r = post(strict_host, "neubird_create_investigation", {"prompt": "Why is checkout slow since the deploy?"}, WS)
    assert r.status_code == 400, r.text
    err = error_of(r.json())
    assert err["code"] == "VALIDATION_ERROR"
    assert {"name": "Staging", "uuid": strict_fake.projects[1]["uuid"]} in err["details"]["projects"]
    assert {"name": "Production", "uuid": strict_fake.project_uuid} in err["details"]["projects"]


async def test_the_incident_report_over_http_is_flat_and_has_no_unlisted_field(strict_host: HostProcess) -> None:
    r = post(strict_host, "neubird_get_incident_report", {}, WS)
    assert r.status_code == 200, r.text
    report = r.json()
    assert "report" not in report
    assert report["total_incidents"] > 0
    assert not _unlisted(report)
