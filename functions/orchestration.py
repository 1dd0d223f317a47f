"""The capabilities' Durable orchestrations and activities, registered from the manifest.

Every declared orchestration gets the same frame: claim the run recorded under the instance id (the
input is never read), run the capability's code with the stored plan, record the output or the
failure. Activities load their run by id before the capability's code runs, so a cancelled run's
activities stop and nothing is taken from an activity's input but the capability's own arguments.
Nothing here imports a capability at index time: the code is looked up in the catalogue when it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import azure.durable_functions as df

from functions import wiring
from functions.durable_retry import BackoffRetryOptions
from functions.runs_api import CLAIM_ACTIVITY, FINISH_ACTIVITY

if TYPE_CHECKING:  # indexing must not import pydantic (tests/unit/tools/test_manifest_snapshot.py)
    from shared.tools.capability import RetryPolicy


class BoundContext:
    """The Durable context as a capability's orchestration sees it (shared.tools.capability.RunContext)."""

    def __init__(self, context: df.DurableOrchestrationContext, correlation_id: str | None) -> None:
        self._context = context
        self._correlation_id = correlation_id

    @property
    def correlation_id(self) -> str | None:
        return self._correlation_id

    @property
    def run_id(self) -> str:
        return str(self._context.instance_id)

    @property
    def current_utc_datetime(self) -> datetime:
        return self._context.current_utc_datetime  # type: ignore[no-any-return]

    def call_activity(self, name: str, args: Any = None, *, retry: RetryPolicy | None = None) -> Any:
        job = {"run_id": self.run_id, "args": args}
        if retry is None:
            return self._context.call_activity(name, job)
        options = BackoffRetryOptions(
            int(retry.first_interval_seconds * 1000),
            retry.max_attempts,
            retry.backoff,
            int(retry.max_interval_seconds * 1000) if retry.max_interval_seconds is not None else None,
        )
        return self._context.call_activity_with_retry(name, options, job)

    def task_all(self, tasks: list[Any]) -> Any:
        return self._context.task_all(tasks)

    def create_timer(self, fire_at: datetime) -> Any:
        return self._context.create_timer(fire_at)

    def set_custom_status(self, status: Any) -> None:
        self._context.set_custom_status(status)


def _orchestrator(name: str) -> Callable[[df.DurableOrchestrationContext], Generator[Any, Any, Any]]:
    def orchestrator(context: df.DurableOrchestrationContext) -> Generator[Any, Any, Any]:
        run_id = context.instance_id
        # No record, or one claimed before: the claim fails and the instance ends Failed having done nothing.
        # Looked up first: a name the catalogue lacks fails here, before the claim, having done nothing.
        declared = wiring.catalogue().orchestrations[name]
        claimed = yield context.call_activity(CLAIM_ACTIVITY, {"run_id": run_id, "orchestrator": name})
        try:
            output = yield from declared.orchestrator(
                BoundContext(context, claimed.get("correlation_id")), claimed["plan"]
            )
        except Exception:
            yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "failed": True})
            raise
        yield context.call_activity(FINISH_ACTIVITY, {"run_id": run_id, "output": output})
        return output

    orchestrator.__name__ = name
    orchestrator.__doc__ = f"The {name} orchestration: claim the run, run the capability's code, record the outcome."
    return orchestrator


def _activity(name: str, orchestrator: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    async def activity(job: dict) -> Any:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
        deps = wiring.deps()
        _, code = wiring.catalogue().activities[name]
        from shared.runs.service import RunService

        run = await RunService.from_deps(deps).active(job["run_id"], orchestrator)
        return await code(run, job.get("args"), deps)

    activity.__name__ = name
    activity.__doc__ = f"Activity {name} of {orchestrator}: loads the run by id, then runs the capability's code."
    return activity


def orchestration_functions(entries: list[dict[str, Any]]) -> df.Blueprint:
    """The orchestrator and activity functions of each indexed orchestration (manifest entries: name, activities)."""
    bp = df.Blueprint()
    for entry in entries:
        bp.function_name(entry["name"])(bp.orchestration_trigger(context_name="context")(_orchestrator(entry["name"])))
        for activity_name in entry["activities"]:
            bp.function_name(activity_name)(
                bp.activity_trigger(input_name="job")(_activity(activity_name, entry["name"]))
            )
    return bp
