"""health.check does real round trips and reports a down store as degraded, not as a crash."""

from __future__ import annotations

from shared.app.wiring import build_deps
from shared.core.settings import Settings
from shared.health.service import health_report
from shared.tools.deps import Deps


async def test_healthy_stack_reports_ok(deps: Deps) -> None:
    report = await health_report(deps)
    assert report.status == "ok"
    assert {c.name: c.ok for c in report.stores} == {
        "cosmos": True,
        "blob": True,
        "perf_runs": True,
        "perf_artifacts": True,
        "investigations_records": True,
        "neubird_state": True,
    }
    # Outside services: NeuBird is not configured in the test stack, and the report says what to set.
    (neubird,) = [i for i in report.integrations if i.name == "neubird_setup"]
    assert neubird.detail.startswith("not configured")
    assert "NEUBIRD_BASE_URL, NEUBIRD_EMAIL, NEUBIRD_PASSWORD" in neubird.detail
    assert all(c.latency_ms and c.latency_ms > 0 for c in report.stores)
    assert report.versions["mcp"].startswith("2.")
    assert report.llm.mode == "rule_based"


async def test_unreachable_cosmos_is_degraded(settings: Settings) -> None:
    broken = build_deps(settings.model_copy(update={"cosmos_endpoint": "https://127.0.0.1:9"}))
    try:
        report = await health_report(broken, include_versions=False)
    finally:
        await broken.aclose()
    by_name = {c.name: c for c in report.stores}
    assert report.status == "degraded"
    assert not by_name["cosmos"].ok
    assert by_name["cosmos"].error
    assert not by_name["perf_runs"].ok  # the perf index lives in the same Cosmos account
    assert by_name["blob"].ok
    assert by_name["perf_artifacts"].ok
    assert report.versions == {}
