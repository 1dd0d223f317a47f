"""The capabilities' Durable orchestrations and activities, registered from the manifest, with the run frame.

Every declared orchestration gets the same frame: claim the run recorded under the instance id (the
input is never read), run the capability's code with the stored plan, record the output or the
failure. Activities load their run by id before the capability's code runs, so a cancelled run's
activities stop and nothing is taken from an activity's input but the capability's own arguments.
Payloads are pydantic models checked at both ends (shared.tools.capability.ActivitySpec): Durable
carries JSON, the capability's code sees models. Nothing here imports a capability or pydantic at
index time: the code is looked up in the catalogue when it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import azure.durable_functions as df

from functions import wiring
from functions.durable_retry import BackoffRetryOptions
from functions.run_frame import CLAIM_ACTIVITY, FINISH_ACTIVITY, runs_claim, runs_finish

if TYPE_CHECKING:  # indexing must not import pydantic (tests/unit/tools/test_manifest_snapshot.py)
    from pydantic import BaseModel

    from shared.tools.capability import ActivitySpec, RetryPolicy


class BoundContext:
    """The Durable context as a capability's orchestration sees it (shared.tools.capability.RunContext).

    Remembers how to read each task it handed out, so the frame turns the JSON Durable hands back
    (live or replayed from the history) into the activity's output model before the code sees it.
    """

    def __init__(
        self,
        context: df.DurableOrchestrationContext,
        correlation_id: str | None,
        activities: Mapping[str, ActivitySpec[Any, Any]],
    ) -> None:
        self._context = context
        self._correlation_id = correlation_id
        self._activities = activities
        # id(task) -> (task, reader): the task is kept so its id cannot be reused by another while pending.
        self._readers: dict[int, tuple[Any, Callable[[Any], Any]]] = {}

    @property
    def correlation_id(self) -> str | None:
        return self._correlation_id

    @property
    def run_id(self) -> str:
        return str(self._context.instance_id)

    @property
    def current_utc_datetime(self) -> datetime:
        return self._context.current_utc_datetime  # type: ignore[no-any-return]

    def call_activity(self, name: str, args: BaseModel | None = None, *, retry: RetryPolicy | None = None) -> Any:
        spec = self._activities.get(name)
        if spec is None:
            raise ValueError(f"{name!r} is not an activity of this orchestration (see its `activities`)")
        job = {"run_id": self.run_id, "args": spec.send(name, args)}
        if retry is None:
            task = self._context.call_activity(name, job)
        else:
            options = BackoffRetryOptions(
                int(retry.first_interval_seconds * 1000),
                retry.max_attempts,
                retry.backoff,
                int(retry.max_interval_seconds * 1000) if retry.max_interval_seconds is not None else None,
            )
            task = self._context.call_activity_with_retry(name, options, job)
        return self._reads(task, lambda raw: spec.result(name, raw))

    def task_all(self, tasks: list[Any]) -> Any:
        readers = [self._reader_of(t) for t in tasks]
        return self._reads(
            self._context.task_all(tasks), lambda raws: [read(r) for read, r in zip(readers, raws, strict=True)]
        )

    def create_timer(self, fire_at: datetime) -> Any:
        return self._context.create_timer(fire_at)

    def set_custom_status(self, status: Any) -> None:
        self._context.set_custom_status(status)

    def result_of(self, task: Any, raw: Any) -> Any:
        """What the capability's code gets for `task`: its output model(s), or `raw` for a task of no activity."""
        return self._reader_of(task)(raw)

    def _reads(self, task: Any, reader: Callable[[Any], Any]) -> Any:
        self._readers[id(task)] = (task, reader)
        return task

    def _reader_of(self, task: Any) -> Callable[[Any], Any]:
        held = self._readers.pop(id(task), None)
        return held[1] if held is not None and held[0] is task else _as_is


def _as_is(raw: Any) -> Any:
    return raw


def drive(code: Generator[Any, Any, Any], ctx: BoundContext) -> Generator[Any, Any, Any]:
    """Run the capability's generator under Durable: yield its tasks, send it back their results as models.

    A failed task is thrown into the code as Durable throws it; so is a result that does not fit its
    output model (ActivityPayloadInvalid), so the code's own error handling runs (the investigation marks
    its record failed).
    """
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            task = code.send(value) if error is None else code.throw(error)
        except StopIteration as done:
            return done.value
        value, error = None, None
        try:
            raw = yield task
        except Exception as exc:  # the activity failed (after its retries): the code decides what follows
            error = exc
            continue
        try:
            value = ctx.result_of(task, raw)
        except ValueError as exc:  # ActivityPayloadInvalid (a ValueError), named without importing pydantic
            error = exc


def _orchestrator(name: str) -> Callable[[df.DurableOrchestrationContext], Generator[Any, Any, Any]]:
    def orchestrator(context: df.DurableOrchestrationContext) -> Generator[Any, Any, Any]:
        from pydantic import BaseModel

        from shared.runs.frame import ClaimedRun, RunClaim, RunOutcome

        run_id = context.instance_id
        # No record, or one claimed before: the claim fails and the instance ends Failed having done nothing.
        # Looked up first: a name the catalogue lacks fails here, before the claim, having done nothing.
        declared = wiring.catalogue().orchestrations[name]
        claim = RunClaim(run_id=run_id, orchestrator=name).model_dump(mode="json")
        claimed = ClaimedRun.model_validate((yield context.call_activity(CLAIM_ACTIVITY, claim)))
        try:
            plan = declared.plan.model_validate(claimed.plan)
            ctx = BoundContext(context, claimed.correlation_id, declared.activities)
            output = yield from drive(declared.orchestrator(ctx, plan), ctx)
            if not isinstance(output, BaseModel):
                raise TypeError(f"orchestration {name} must return a pydantic model, not a {type(output).__name__}")
            recorded = output.model_dump(mode="json")
        except Exception:
            failed = RunOutcome(run_id=run_id, failed=True).model_dump(mode="json")
            yield context.call_activity(FINISH_ACTIVITY, failed)
            raise
        yield context.call_activity(FINISH_ACTIVITY, RunOutcome(run_id=run_id, output=recorded).model_dump(mode="json"))
        return recorded

    orchestrator.__name__ = name
    orchestrator.__doc__ = f"The {name} orchestration: claim the run, run the capability's code, record the outcome."
    return orchestrator


def _activity(name: str, orchestrator: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    async def activity(job: dict) -> Any:  # type: ignore[type-arg]  # the worker accepts only a plain class on a binding
        _, spec = wiring.catalogue().activities[name]
        args = spec.receive(name, job.get("args"))  # a mismatch fails here, naming the fields, before any read
        from shared.core import telemetry
        from shared.runs.service import RunService

        deps = wiring.deps()

        run = await RunService.from_deps(deps).active(job["run_id"], orchestrator)
        # The activity's span carries the request's correlation id (from the run record, not the input).
        ids = {"firebreak.run_id": run.run_id, telemetry.CORRELATION_ID: run.correlation_id}
        with telemetry.span(f"activity {name}", ids):
            return spec.reply(name, await spec.code(run, args, deps))

    activity.__name__ = name
    activity.__doc__ = f"Activity {name} of {orchestrator}: loads the run by id, then runs the capability's code."
    return activity


def orchestration_functions(entries: list[dict[str, Any]]) -> df.Blueprint:
    """The run frame's claim and finish activities, and the orchestrator and activity functions of each indexed
    orchestration (manifest entries: name, activities)."""
    bp = df.Blueprint()
    bp.function_name(CLAIM_ACTIVITY)(bp.activity_trigger(input_name="claim")(runs_claim))
    bp.function_name(FINISH_ACTIVITY)(bp.activity_trigger(input_name="outcome")(runs_finish))
    for entry in entries:
        bp.function_name(entry["name"])(bp.orchestration_trigger(context_name="context")(_orchestrator(entry["name"])))
        for activity_name in entry["activities"]:
            bp.function_name(activity_name)(
                bp.activity_trigger(input_name="job")(_activity(activity_name, entry["name"]))
            )
    return bp
