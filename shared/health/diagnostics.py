"""The diagnostics orchestration: every declared check that applies, each in its own activity, in parallel."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.health.models import DiagnosticsReport
from shared.tools.capability import ActiveRun, ActivitySpec, Orchestration, RunContext
from shared.tools.checks import CheckResult, run_check
from shared.tools.deps import Deps

ORCHESTRATOR = "diagnostics_orchestrator"
CHECK_ACTIVITY = "diagnostics_check"


class DiagnosticsPlan(BaseModel):
    """Which declared checks a diagnostics run makes, each once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checks: list[str] = Field(min_length=1)


class CheckRequest(BaseModel):
    """The check activity's input: the name of one check of the run's plan."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)


def plan(deps: Deps) -> dict[str, Any]:
    """Which checks a diagnostics run makes (the record's plan): every declared check whose `applies` holds."""
    return DiagnosticsPlan(checks=[c.name for c in deps.checks if c.applies(deps.settings)]).model_dump(mode="json")


def validate_plan(stored: dict[str, Any], deps: Deps) -> DiagnosticsPlan:
    """A stored plan, re-checked when the orchestration claims it: declared checks, each once."""
    known = {c.name for c in deps.checks}
    try:
        checked = DiagnosticsPlan.model_validate(stored)
    except ValidationError:
        checked = None
    if checked is None or len(set(checked.checks)) != len(checked.checks) or not set(checked.checks) <= known:
        raise ValueError("a diagnostics plan names each declared check at most once")
    return checked


def orchestrate(ctx: RunContext, stored: DiagnosticsPlan) -> Generator[Any, Any, DiagnosticsReport]:
    """Deterministic: fan the checks out, summarise. Output: the DiagnosticsReport."""
    checks = stored.checks
    ctx.set_custom_status({"stage": "checking", "checks": len(checks)})
    results = yield ctx.task_all([ctx.call_activity(CHECK_ACTIVITY, CheckRequest(name=name)) for name in checks])
    ctx.set_custom_status({"stage": "done", "checks": len(checks)})
    return summarize(results)


async def check(run: ActiveRun, asked: CheckRequest, deps: Deps) -> CheckResult:
    """Activity: one check of the run's plan (a name the claimed plan holds; anything else is refused)."""
    if asked.name not in DiagnosticsPlan.model_validate(run.plan).checks:
        raise ValueError("the check is not in this run's plan")
    declared = next(c for c in deps.checks if c.name == asked.name)
    return await run_check(declared, deps)


def summarize(checks: list[CheckResult]) -> DiagnosticsReport:
    """Pure and deterministic (it runs inside the orchestrator)."""
    failed = [c.name for c in checks if not c.ok]
    return DiagnosticsReport(
        status="ok" if not failed else "degraded",
        checks=checks,
        failed=failed,
        next_action="Everything answered."
        if not failed
        else f"Fix {', '.join(failed)}: see each check's detail, then run POST /api/diagnostics again.",
    )


DIAGNOSTICS = Orchestration(
    name=ORCHESTRATOR,
    orchestrator=orchestrate,
    activities={CHECK_ACTIVITY: ActivitySpec(check, input=CheckRequest, output=CheckResult)},
    plan=DiagnosticsPlan,
    validate_plan=validate_plan,
    description=(
        "POST /api/diagnostics: every declared check that applies, in parallel; output is the DiagnosticsReport."
    ),
)
