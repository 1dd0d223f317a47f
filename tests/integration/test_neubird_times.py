"""Sessions ordered by when they happened, against a NeuBird that writes RFC 3339 times with offsets (the strict
fake) through the real client: the list's "most recent first" and the alert lookup's "latest RCA"."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.neubird.times import parse_rfc3339
from shared.tools.deps import Deps
from tests.integration.neubird_harness import LOCAL, answer, caller
from tests.support.fake_neubird import FakeNeubird

INDIA = timedelta(hours=5, minutes=30)
PACIFIC = timedelta(hours=-8)


@pytest.fixture(params=["strict", "lenient"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeNeubird]:
    """The strict dialect (offsets everywhere, undocumented filter keys refused) and the default one (which
    takes the alert-id filter) with the offsets pinned per session below."""
    strict = request.param == "strict"
    with FakeNeubird(sessions=80, seed=21, investigation_seconds=20, time_scale=0.01, strict=strict) as nb:
        yield nb


@pytest.fixture
async def deps(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    built = build_deps(load_settings({**app_env, **fake.env(), **LOCAL}))
    yield built
    await built.aclose()


async def test_the_list_is_most_recent_first_by_instant(deps: Deps, fake: FakeNeubird) -> None:
    now = datetime.now(UTC)
    for hours, offset in [(5, INDIA), (4, PACIFIC), (3, INDIA), (2, PACIFIC)]:
        fake.add_session(alert_id=f"/aws/alerts/list-{hours}", created=now - timedelta(hours=hours), offset=offset)
    out = await answer(deps, caller(), "neubird_list_sessions", {"limit": 100, "compact": False})
    texts = [r["create_time"] for r in out["sessions"]]
    assert any(t.endswith("+05:30") for t in texts)  # the strict fake writes offsets
    instants = [parse_rfc3339(t) for t in texts]
    assert None not in instants
    assert instants == sorted(instants, reverse=True)  # type: ignore[type-var]


async def test_the_latest_rca_of_an_alert_is_the_most_recent_session(deps: Deps, fake: FakeNeubird) -> None:
    alert = "/aws/alerts/offsets-1"
    base = datetime.now(UTC) - timedelta(hours=3)
    # 10:00Z written 15:30+05:30, 11:00Z written 03:00-08:00: as text the older one looks newer.
    older = fake.add_session(alert_id=alert, created=base, offset=INDIA, answer="Older answer: disk full.")
    newer = fake.add_session(
        alert_id=alert, created=base + timedelta(hours=1), offset=PACIFIC, answer="Newer answer: pool exhausted."
    )
    out = await answer(deps, caller(), "neubird_investigate_alert", {"alert_id": alert})
    assert out["status"] == "found_existing", out
    assert out["session_uuid"] == newer
    assert out["session_uuid"] != older
    assert out["investigation_results"]["final_answer"].startswith("Newer answer")
