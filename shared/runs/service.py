"""Runs: start an orchestration for its owner, show its status to that owner only, cancel it; and the
activity side, where an orchestration claims its record by its own instance id and never trusts its input.

Start order: secrets (sealed) first, then the record, then the instance, so an orchestration always
finds everything it may need. The instance input is only `{"run_id", "correlation_id"}`.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from shared.core.errors import AppError, Conflict, NotConfigured, NotFound
from shared.core.redaction import redact_text
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.runs.models import RUN_ID_PATTERN, STATUS_ROUTE, TERMINAL_STATES, RunDoc, RunStarted, RunState, RunStatus
from shared.runs.secrets import secret_box
from shared.runs.settings import RunSettings
from shared.runs.store import RunStore
from shared.storage.cosmos import CosmosDatabase

log = logging.getLogger("firebreak.runs")
# Who may read and cancel a run: its starter only, or anyone in its workspace.
RunScope = Literal["user", "workspace"]
_RUN_ID = re.compile(RUN_ID_PATTERN)
# What a caller learns about a failure: never an exception text (it may quote inputs or internals).
FAILED_MESSAGE = (
    "The run stopped on an error before it finished; nothing more will happen."
    " Start it again; if it fails again, report the run_id."
)


@dataclass
class InstanceStatus:
    """The engine's view of one instance (Durable's runtime status, custom status, output, timestamps)."""

    runtime_status: str
    custom_status: Any = None
    output: Any = None
    updated_at: str | None = None


class RunEngine(Protocol):
    """The orchestration engine (functions/orchestration.py wraps the Durable client binding)."""

    async def start_instance(self, orchestrator: str, instance_id: str, payload: dict[str, Any]) -> None: ...

    async def instance_status(self, instance_id: str) -> InstanceStatus | None: ...

    async def terminate_instance(self, instance_id: str, reason: str) -> None: ...


class RunRefused(Exception):
    """An orchestration may not go on: no record for its instance id, already claimed, plan invalid, cancelled."""


def _state_from_engine(runtime_status: str, claimed: bool) -> RunState | None:
    return {
        "Pending": "running" if claimed else "pending",
        "Running": "running",
        "ContinuedAsNew": "running",
        "Completed": "completed",
        "Failed": "failed",
        "Terminated": "cancelled",
        "Canceled": "cancelled",
    }.get(runtime_status)


def _next_action(doc: RunDoc, state: RunState) -> str:
    route = STATUS_ROUTE + doc.id
    if state in ("pending", "running"):
        return (
            f"Still going: call get_run_status (or GET {route}) again in a few seconds;"
            " progress shows how far it got. cancel_run stops it."
        )
    if state == "completed":
        return "Finished: read output (its next_action, when present, says what to do with it)."
    if state == "cancelled":
        return "Cancelled: nothing more will happen. Start a new run if you still need it."
    return "Failed: start the run again; if it fails again, report the run_id and correlation id."


class RunService:
    def __init__(
        self, cosmos: CosmosDatabase, settings: Settings, clock: Callable[[], datetime], engine: RunEngine | None = None
    ) -> None:
        self.cosmos, self.settings, self.clock, self.engine = cosmos, settings, clock, engine

    @classmethod
    def from_deps(cls, deps: Any, engine: RunEngine | None = None) -> RunService:
        return cls(deps.cosmos, deps.settings, deps.clock, engine)

    async def _store(self) -> RunStore:
        return await RunStore.open(self.cosmos)

    # -- caller side -------------------------------------------------------------------------------
    async def start(
        self,
        name: str,
        principal: Principal,
        plan: dict[str, Any],
        secrets: dict[str, Any] | None = None,
        *,
        correlation_id: str | None = None,
    ) -> RunStarted:
        """Record the run for `principal` (plan in clear, secrets sealed) and start orchestrator `name` on it."""
        if self.engine is None:
            raise NotConfigured("Durable orchestrations are not available in this process.")
        store = await self._store()
        run_id = uuid.uuid4().hex
        now = self.clock()
        ws = principal.workspace_id
        secrets_ref = None
        if secrets:
            box = secret_box(self.settings)  # NOT_CONFIGURED before anything is written
            ttl = self.settings.section(RunSettings).run_secrets_ttl_seconds
            secrets_ref = await store.put_secrets(
                run_id, ws, box.seal(secrets, ws, run_id), (now + timedelta(seconds=ttl)).isoformat(), ttl
            )
        doc = RunDoc(
            id=run_id,
            kind=name.removesuffix("_orchestrator"),
            orchestrator=name,
            workspace_id=ws,
            user_id=principal.user_id,
            created_at=now.isoformat(),
            updated_at=now.isoformat(),
            correlation_id=correlation_id,
            plan=plan,
            secrets_ref=secrets_ref,
            ttl=self.settings.section(RunSettings).run_record_ttl_days * 86400,
        )
        await store.create(doc)
        try:
            await self.engine.start_instance(name, run_id, {"run_id": run_id, "correlation_id": correlation_id})
        except Exception:
            await self._settle(store, run_id, "failed", error=FAILED_MESSAGE)
            raise
        return RunStarted(run_id=run_id, status_url=STATUS_ROUTE + run_id)

    async def _owned(self, principal: Principal, run_id: str, scope: RunScope = "user") -> tuple[RunStore, RunDoc, str]:
        """The caller's own run (scope "user"), or any run of the caller's workspace (scope "workspace", for
        capabilities whose runs a team shares). Unknown ids, malformed ids and runs outside the scope get
        one identical NOT_FOUND."""
        store = await self._store()
        loaded = await store.load(run_id) if _RUN_ID.match(run_id) else None
        owner = (principal.workspace_id, principal.user_id)
        if loaded is None or (
            loaded[0].workspace_id != principal.workspace_id
            or (scope == "user" and (loaded[0].workspace_id, loaded[0].user_id) != owner)
        ):
            raise NotFound(
                f"Run {run_id[:100]!r} not found.",
                details={"run_id": run_id[:100]},
                recovery_suggestions=["Use the run_id returned when the run was started, with the same credentials."],
            )
        return store, *loaded

    async def status(self, principal: Principal, run_id: str, *, scope: RunScope = "user") -> RunStatus:
        """State, progress, output (completed) or a safe error (failed) of the caller's run."""
        _, doc, _ = await self._owned(principal, run_id, scope)
        return await self._status(doc)

    async def _status(self, doc: RunDoc) -> RunStatus:
        state: RunState = doc.state
        output, error, updated, progress = doc.output, doc.error, doc.updated_at, None
        engine = await self.engine.instance_status(doc.id) if self.engine is not None else None
        if engine is not None:
            if isinstance(engine.custom_status, dict):
                progress = engine.custom_status
            live = _state_from_engine(engine.runtime_status, doc.claimed)
            # The record decides once it is final (the orchestration wrote it); before that the engine knows more.
            if state not in TERMINAL_STATES and live is not None:
                state = live
                updated = engine.updated_at or updated
                if live == "completed" and output is None and isinstance(engine.output, dict):
                    output = engine.output
                elif live == "failed":
                    error = FAILED_MESSAGE
        return RunStatus(
            run_id=doc.id,
            kind=doc.kind,
            state=state,
            progress=progress,
            output=output if state == "completed" else None,
            error=error if state in ("failed", "cancelled") else None,
            created_at=doc.created_at,
            updated_at=updated,
            status_url=STATUS_ROUTE + doc.id,
            next_action=_next_action(doc, state),
        )

    async def cancel(
        self, principal: Principal, run_id: str, reason: str | None = None, *, scope: RunScope = "user"
    ) -> RunStatus:
        """Stop the caller's pending or running run. Cancelling a cancelled run answers its status again;
        cancelling a completed or failed one is CONFLICT (there is nothing to stop)."""
        store, doc, _ = await self._owned(principal, run_id, scope)
        if doc.state == "cancelled":
            # Stopping is repeatable: a cancel whose first terminate failed is completed by the next one.
            if self.engine is not None:
                await self.engine.terminate_instance(run_id, "cancelled by its owner")
            return await self._status(doc)
        if doc.state in TERMINAL_STATES:
            raise Conflict(
                f"Run {run_id} already {doc.state}; there is nothing to cancel.",
                details={"run_id": run_id, "state": doc.state},
                recovery_suggestions=["Call get_run_status to read its result."],
            )
        # Recorded first: an activity that starts after this sees the run cancelled and does nothing.
        settled = await self._settle(
            store, run_id, "cancelled", error=f"Cancelled by its owner{': ' + redact_text(reason) if reason else ''}."
        )
        if self.engine is not None and (settled is None or settled.state == "cancelled"):
            await self.engine.terminate_instance(run_id, "cancelled by its owner")
        if settled is not None and settled.state != "cancelled":
            raise Conflict(
                f"Run {run_id} finished ({settled.state}) before it could be cancelled.",
                details={"run_id": run_id, "state": settled.state},
            )
        return await self._status(settled or doc)

    async def _settle(
        self,
        store: RunStore,
        run_id: str,
        state: RunState,
        *,
        output: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> RunDoc | None:
        """Move a run to a final state unless it already has one (etag-checked, retried), and drop its secrets."""
        for _ in range(5):
            loaded = await store.load(run_id)
            if loaded is None:
                return None
            current, etag = loaded
            if current.state in TERMINAL_STATES:
                doc = current
                break
            settled = current.model_copy(
                update={"state": state, "output": output, "error": error, "updated_at": self.clock().isoformat()}
            )
            if await store.replace(settled, etag):
                doc = settled
                break
            doc = current  # lost the race: what was read, never an unsaved copy
        if doc.secrets_ref:
            await store.delete_secrets(doc.secrets_ref)
        return doc

    # -- orchestration side (activities) -------------------------------------------------------------
    async def claim(
        self, instance_id: str, orchestrator: str, validate: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> dict[str, Any]:
        """Claim the record of `instance_id` for `orchestrator` once.

        Returns {"plan" (re-validated, no secrets), "correlation_id"}.

        Raises RunRefused when there is no record (a start that did not come from the app), when it
        belongs to another orchestrator, or when it was claimed before (a second start with that id).
        """
        store = await self._store()
        loaded = await store.load(instance_id)
        if loaded is None:
            raise RunRefused("no run record for this instance id: it was not started by the app, so it does nothing")
        doc, etag = loaded
        if doc.orchestrator != orchestrator:
            raise RunRefused(f"the run record of this instance id belongs to {doc.orchestrator}, not {orchestrator}")
        if doc.claimed or doc.state != "pending":
            raise RunRefused(
                "this run was already claimed by an earlier start with this instance id; the repeat does nothing"
            )
        try:
            plan = validate(doc.plan)
        except (ValueError, AppError) as exc:
            log.warning("run %s: stored plan refused on re-validation: %s", instance_id, type(exc).__name__)
            await self._settle(
                store, instance_id, "failed", error="The run's plan failed re-validation; nothing was done."
            )
            raise RunRefused("the stored plan failed re-validation") from None
        now = self.clock().isoformat()
        if not await store.replace(
            doc.model_copy(update={"claimed": True, "claimed_at": now, "state": "running", "updated_at": now}), etag
        ):
            raise RunRefused("another start claimed this run at the same time")
        return {"plan": plan, "correlation_id": doc.correlation_id}

    async def running(self, instance_id: str, orchestrator: str) -> RunDoc:
        """The claimed, still running record of `instance_id` (activities call this before doing anything)."""
        loaded = await (await self._store()).load(instance_id)
        if loaded is None or loaded[0].orchestrator != orchestrator or not loaded[0].claimed:
            raise RunRefused("no claimed run record for this instance id")
        if loaded[0].state != "running":
            raise RunRefused(f"the run is {loaded[0].state}")
        return loaded[0]

    async def active(self, instance_id: str, orchestrator: str) -> ActiveRunRecord:
        """The claimed, running run of `instance_id` as an activity sees it (plan, owner, secrets on demand)."""
        return ActiveRunRecord(self, await self.running(instance_id, orchestrator))

    async def open_secrets(self, doc: RunDoc) -> dict[str, Any]:
        """The run's secrets (empty without any); RunRefused once they expired or do not decrypt for this run."""
        if not doc.secrets_ref:
            return {}
        store = await self._store()
        sealed = await store.get_secrets(doc.secrets_ref)
        if sealed is None or sealed.get("run_id") != doc.id or sealed.get("workspace_id") != doc.workspace_id:
            raise RunRefused("the run's secrets are gone")
        if sealed.get("expires_at", "") <= self.clock().isoformat():
            await store.delete_secrets(doc.secrets_ref)
            raise RunRefused("the run's secrets expired")
        try:
            return secret_box(self.settings).open(sealed, doc.workspace_id, doc.id)
        except (ValueError, NotConfigured):
            raise RunRefused("the run's secrets do not decrypt") from None

    async def finish(self, instance_id: str, output: dict[str, Any] | None = None, failed: bool = False) -> None:
        """Record the outcome of a claimed run (a cancelled or finished record keeps its state) and drop its secrets."""
        store = await self._store()
        loaded = await store.load(instance_id)
        if loaded is None or not loaded[0].claimed:
            return
        await self._settle(
            store,
            instance_id,
            "failed" if failed else "completed",
            output=None if failed else output,
            error=FAILED_MESSAGE if failed else None,
        )


class ActiveRunRecord:
    """A run an activity works for (shared.tools.capability.ActiveRun), loaded by id, not from the activity's input."""

    def __init__(self, service: RunService, doc: RunDoc) -> None:
        self._service, self._doc = service, doc

    @property
    def run_id(self) -> str:
        return self._doc.id

    @property
    def workspace_id(self) -> str:
        return self._doc.workspace_id

    @property
    def user_id(self) -> str:
        return self._doc.user_id

    @property
    def plan(self) -> dict[str, Any]:
        return self._doc.plan

    @property
    def correlation_id(self) -> str | None:
        return self._doc.correlation_id

    async def secrets(self) -> dict[str, Any]:
        return await self._service.open_secrets(self._doc)
