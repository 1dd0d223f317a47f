"""The two activities every run's orchestration starts and ends with: claim the run, record its outcome.

Registered with the orchestrations (functions/orchestration.py), never with an HTTP module. Their
payloads are shared/runs/frame.py's models, validated here; pydantic is imported when they run, not
when the app is indexed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from functions import wiring

if TYPE_CHECKING:  # indexing must not import pydantic (tests/unit/tools/test_manifest_snapshot.py)
    from pydantic import BaseModel

CLAIM_ACTIVITY = "runs_claim"
FINISH_ACTIVITY = "runs_finish"


async def runs_claim(claim: dict) -> dict:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Claim the run of a RunClaim {run_id, orchestrator} once, re-validating its stored plan: a ClaimedRun.

    The orchestrator passes its own (constant) name; the run id is its instance id. Fails, so the
    orchestration ends having done nothing, when the record is missing, foreign or claimed before.
    """
    from shared.runs.frame import ClaimedRun, RunClaim
    from shared.runs.service import RunService

    asked = RunClaim.model_validate(claim)
    deps = wiring.deps()
    declared = wiring.catalogue().orchestrations[asked.orchestrator]

    def validate(stored: dict[str, Any]) -> dict[str, Any]:
        checked: BaseModel = declared.validate_plan(stored, deps)
        return checked.model_dump(mode="json")

    claimed = await RunService.from_deps(deps).claim(asked.run_id, declared.name, validate)
    return ClaimedRun.model_validate(claimed).model_dump(mode="json")


async def runs_finish(outcome: dict) -> None:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
    """Record a claimed run's RunOutcome ({run_id, output} or {run_id, failed: true}) and drop its secrets."""
    from shared.runs.frame import RunOutcome
    from shared.runs.service import RunService

    told = RunOutcome.model_validate(outcome)
    await RunService.from_deps(wiring.deps()).finish(told.run_id, told.output, told.failed)
