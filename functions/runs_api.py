"""The two activities every run's orchestration starts and ends with (claim, finish).

The run routes (`GET /api/runs/{id}`, `POST /api/runs/{id}/cancel`) are the runs capability's own
(shared/runs/routes.py).
"""

from __future__ import annotations

import azure.durable_functions as df

from functions import wiring

bp = df.Blueprint()

CLAIM_ACTIVITY = "runs_claim"
FINISH_ACTIVITY = "runs_finish"


@bp.activity_trigger(input_name="claim")
async def runs_claim(claim: dict) -> dict:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Claim the run recorded under {"run_id"} for orchestration {"orchestrator"} once, re-validating its stored plan.

    The orchestrator passes its own (constant) name; the run id is its instance id. Fails, so the
    orchestration ends having done nothing, when the record is missing, foreign or claimed before.
    """
    from shared.runs.service import RunService

    deps = wiring.deps()
    declared = wiring.catalogue().orchestrations[claim["orchestrator"]]
    return await RunService.from_deps(deps).claim(
        claim["run_id"], declared.name, lambda plan: declared.validate_plan(plan, deps)
    )


@bp.activity_trigger(input_name="outcome")
async def runs_finish(outcome: dict) -> None:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Record a claimed run's outcome ({"run_id", "output"} or {"run_id", "failed": true}) and drop its secrets."""
    from shared.runs.service import RunService

    await RunService.from_deps(wiring.deps()).finish(
        outcome["run_id"], outcome.get("output"), bool(outcome.get("failed"))
    )
