"""neubird_investigate_alert finds an alert's sessions without relying on the undocumented `incident_info.id`
filter: against a NeuBird that refuses unknown filter keys (the strict fake, HTTP 400) it falls back to the
documented `session_type` filter and checks the alert id itself, through the real client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.tools.deps import Deps
from tests.integration.neubird_harness import LOCAL, answer, caller
from tests.support.fake_neubird import FakeNeubird

LIST = "POST /v1/inference/session/list"


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=60, seed=23, investigation_seconds=20, time_scale=0.01, strict=True) as nb:
        yield nb


@pytest.fixture
async def deps(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    built = build_deps(load_settings({**app_env, **fake.env(), **LOCAL}))
    yield built
    await built.aclose()


async def test_an_existing_rca_is_found_through_the_documented_filters(deps: Deps, fake: FakeNeubird) -> None:
    alert = "/subscriptions/0000/providers/Microsoft.AlertsManagement/alerts/strict-found-1"
    sid = fake.add_session(alert_id=alert, status="completed", answer="The disk of vm-7 is full.")
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": alert})
    assert out["status"] == "found_existing", out
    assert out["session_uuid"] == sid
    assert out["investigation_results"]["final_answer"].startswith("The disk of vm-7 is full.")


async def test_a_refused_filter_key_is_not_sent_again_by_the_same_worker(deps: Deps, fake: FakeNeubird) -> None:
    for n in range(3):
        fake.add_session(alert_id=f"/aws/alerts/strict-memo-{n}", status="completed")
    for n in range(3):
        out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": f"/aws/alerts/strict-memo-{n}"})
        assert out["status"] == "found_existing", out
    assert fake.stats()["statuses"].get(400) == 1


async def test_only_the_exact_alert_id_matches(deps: Deps, fake: FakeNeubird) -> None:
    fake.add_session(alert_id="/aws/alerts/strict-exact-10", status="completed")
    fake.add_session(alert_id="/AWS/alerts/strict-exact-1", status="completed")
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": "/aws/alerts/strict-exact-1"})
    assert out["status"] == "new_investigation", out
    created = fake.session_view(out["session_uuid"])["session_info"]
    assert created["incident_info"]["id"] == "/aws/alerts/strict-exact-1"


async def test_an_older_alert_session_is_found_past_the_first_page(deps: Deps, fake: FakeNeubird) -> None:
    alert = "/aws/alerts/strict-deep-1"
    old = datetime.now(UTC) - timedelta(days=2)
    sid = fake.add_session(alert_id=alert, status="completed", created=old)
    for n in range(130):  # newer incident sessions: the alert's is on the second page of 100
        fake.add_session(alert_id=f"/aws/alerts/strict-noise-{n}", status="not_started")
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": alert})
    assert out["status"] == "found_existing", out
    assert out["session_uuid"] == sid


async def test_a_new_alert_says_how_far_it_looked(deps: Deps, fake: FakeNeubird) -> None:
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": "/aws/alerts/strict-new-1"})
    assert out["status"] == "new_investigation", out
    assert "most recent incident sessions" in out["message"]


async def test_an_alert_whose_last_investigation_failed_is_asked_again_and_says_so(
    deps: Deps, fake: FakeNeubird
) -> None:
    alert = "/aws/alerts/strict-failed-1"
    sid = fake.add_session(alert_id=alert, status="failed")
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": alert})
    assert out["status"] == "new_investigation", out
    assert out["session_uuid"] == sid
    assert "failed" in out["message"]
    assert "no investigation" not in out["message"]
