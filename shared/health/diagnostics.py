"""The diagnostics orchestration: every declared check that applies, each in its own activity, in parallel."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from shared.health.models import DiagnosticsReport
from shared.tools.capability import ActiveRun, Orchestration, RunContext
from shared.tools.checks import CheckResult, run_check
from shared.tools.deps import Deps

ORCHESTRATOR = "diagnostics_orchestrator"
CHECK_ACTIVITY = "diagnostics_check"


def plan(deps: Deps) -> dict[str, Any]:
    """Which checks a diagnostics run makes: every declared check whose `applies` holds for these settings."""
    return {"checks": [c.name for c in deps.checks if c.applies(deps.settings)]}


def validate_plan(stored: dict[str, Any], deps: Deps) -> dict[str, Any]:
    """A stored plan, re-checked when the orchestration claims it: declared checks, each once."""
    known = {c.name for c in deps.checks}
    checks = stored.get("checks")
    if (
        not isinstance(checks, list)
        or not checks
        or len(set(checks)) != len(checks)
        or not all(c in known for c in checks)
    ):
        raise ValueError("a diagnostics plan names each declared check at most once")
    return {"checks": list(checks)}


def orchestrate(ctx: RunContext, stored: dict[str, Any]) -> Generator[Any, Any, dict[str, Any]]:
    """Deterministic: fan the checks out, summarise. Output: the DiagnosticsReport as JSON."""
    checks = stored["checks"]
    ctx.set_custom_status({"stage": "checking", "checks": len(checks)})
    results = yield ctx.task_all([ctx.call_activity(CHECK_ACTIVITY, name) for name in checks])
    ctx.set_custom_status({"stage": "done", "checks": len(checks)})
    return summarize(results)


async def check(run: ActiveRun, name: Any, deps: Deps) -> dict[str, Any]:
    """Activity: one check of the run's plan (a name the claimed plan holds; anything else is refused)."""
    if name not in run.plan.get("checks", []):
        raise ValueError("the check is not in this run's plan")
    declared = next(c for c in deps.checks if c.name == name)
    return (await run_check(declared, deps)).model_dump(mode="json")


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Pure and deterministic (it runs inside the orchestrator)."""
    checks = [CheckResult.model_validate(r) for r in results]
    failed = [c.name for c in checks if not c.ok]
    report = DiagnosticsReport(
        status="ok" if not failed else "degraded",
        checks=checks,
        failed=failed,
        next_action="Everything answered."
        if not failed
        else f"Fix {', '.join(failed)}: see each check's detail, then run POST /api/diagnostics again.",
    )
    return report.model_dump(mode="json")


DIAGNOSTICS = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={CHECK_ACTIVITY: check},
    validate_plan=validate_plan,
    description=(
        "POST /api/diagnostics: every declared check that applies, in parallel; output is the DiagnosticsReport."
    ),
)
