"""The individual checks (run as activities) and the pure summary the orchestrator returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from shared.core.deps import Deps
from shared.core.settings import Settings
from shared.diagnostics.models import CheckResult, DiagnosticsReport
from shared.health.service import blob_round_trip, cosmos_round_trip, timed_probe

_TIMEOUT_S = 5.0


def plan_checks(settings: Settings) -> list[str]:
    """Which checks apply: both stores always; the LLM and NeuBird only when configured."""
    checks = ["cosmos_read_write", "blob_read_write"]
    if settings.llm_configured:
        checks.append("llm_reachable")
    if settings.neubird_configured:
        checks.append("neubird_reachable")
    return checks


KNOWN_CHECKS = ("cosmos_read_write", "blob_read_write", "llm_reachable", "neubird_reachable")


def validate_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """A diagnostics run's stored plan, re-checked when its orchestration claims it: known checks, each once."""
    checks = plan.get("checks")
    if not isinstance(checks, list) or not checks or len(set(checks)) != len(checks) or not all(c in KNOWN_CHECKS for c in checks):
        raise ValueError("a diagnostics plan names each known check at most once")
    return {"checks": list(checks)}


async def _reachable(url: str) -> str:
    # Any HTTP answer (even 401/404) proves the endpoint is reachable; only transport failures do not.
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=_TIMEOUT_S)) as session:
        async with session.get(url, allow_redirects=False) as response:
            return f"HTTP {response.status}"


async def run_check(name: str, deps: Deps) -> CheckResult:
    s = deps.settings
    probes: dict[str, Callable[[], Awaitable[Any]]] = {
        "cosmos_read_write": lambda: cosmos_round_trip(deps),
        "blob_read_write": lambda: blob_round_trip(deps),
        "llm_reachable": lambda: _reachable(s.llm_endpoint or ""),
        "neubird_reachable": lambda: _reachable(s.neubird_base_url or ""),
    }
    probe = probes.get(name)
    if probe is None:
        return CheckResult(name=name, ok=False, detail=f"unknown check {name!r}")
    outcome, latency_ms, exc = await timed_probe(probe)
    if exc is not None:
        return CheckResult(name=name, ok=False, latency_ms=latency_ms, detail=type(exc).__name__)
    return CheckResult(name=name, ok=True, latency_ms=latency_ms, detail=outcome if isinstance(outcome, str) else "round trip ok")


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Pure and deterministic (it runs inside the orchestrator)."""
    checks = [CheckResult.model_validate(r) for r in results]
    failed = [c.name for c in checks if not c.ok]
    report = DiagnosticsReport(
        status="ok" if not failed else "degraded",
        checks=checks,
        failed=failed,
        next_action="Everything answered." if not failed else f"Fix {', '.join(failed)}: see each check's detail, then run POST /api/diagnostics again.",
    )
    return report.model_dump(mode="json")
