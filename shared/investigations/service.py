"""Alert investigations for callers: start from an alert payload, read one (and one call's whole output),
list the workspace's, their metrics, cancel.

Shared by the REST routes (routes.py) and the MCP tools (tools.py). An
investigation belongs to the workspace it was started in: any member can read and cancel it, and an id
from another workspace is NOT_FOUND, the same answer as an unknown id.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from shared.core.errors import Conflict, NotConfigured, NotFound, RateLimited, ValidationFailed
from shared.identity.models import Principal
from shared.investigations.activities.payloads import StartedBy, StoredPlan
from shared.investigations.alerts import Alert, normalise
from shared.investigations.call_output import DEFAULT_OUTPUT_CHARS, CallOutput, read_call_output
from shared.investigations.loop import Limits
from shared.investigations.metrics import InvestigationMetrics, compute_metrics
from shared.investigations.models import (
    ORCHESTRATOR,
    ROUTE,
    TERMINAL_STATUSES,
    InvestigationRecord,
    InvestigationSummary,
)
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields
from shared.tools.deps import Deps
from shared.tools.invoke import Orchestrations

log = logging.getLogger("firebreak.investigations")

PREVIEW_CHARS = 1_000
MAX_CONTINUATION_CHARS = 4_096


class Started(BaseModel):
    investigation_id: str
    alert_name: str
    severity: str
    status_url: str = Field(description="GET it for status, progress and, when done, the report.")
    joined: bool = Field(
        False, description="True when this alert was already being investigated: this is that investigation."
    )


class StartResult(BaseModel):
    format: str = Field(description="generic, alertmanager or azure_monitor.")
    started: list[Started]
    skipped_resolved: int = Field(0, description="Resolved alerts in the payload (they start nothing).")
    next_action: str


class CallView(BaseModel):
    key: str
    call_id: str = Field(description="The call's id (= key): get_investigation_tool_output reads its whole output.")
    tool: str
    args: dict[str, Any]
    reason: str
    is_error: bool
    output_bytes: int
    output_preview: str = Field(description=f"The first {PREVIEW_CHARS} characters of the output.")
    output_in_blob: bool = Field(description="The whole output is kept in Blob (it was over the inline limit).")
    output_url: str = Field(description="GET it for the whole output, a page at a time (?offset=&limit=).")
    truncated: bool
    duration_ms: int


class IterationView(BaseModel):
    n: int
    calls: list[CallView]
    partial_analysis: str | None = None
    reasoning: str | None = Field(None, description="Why this iteration's calls were chosen (model or rules).")


class InvestigationView(BaseModel):
    """One investigation as a caller sees it (tool outputs as previews; the report whole)."""

    investigation_id: str
    status: str = Field(description="pending, running, completed, failed or cancelled.")
    phase: str
    progress: dict[str, Any] = Field(description="percent, phase, iteration, tool calls so far (live while running).")
    path: str | None = Field(description="rule, llm, or llm->rule when the rules took over from the model.")
    path_reason: str | None = None
    alert: dict[str, Any]
    runbook: dict[str, Any]
    tools: dict[str, Any]
    debug_memory: dict[str, Any] | None = None
    iterations: list[IterationView]
    report: dict[str, Any] | None = Field(description="When completed: analysis (Markdown) and the structured report.")
    error: str | None = None
    timings: dict[str, Any]
    token_usage: dict[str, int]
    created_at: str
    updated_at: str
    status_url: str
    next_action: str


class InvestigationList(BaseModel):
    investigations: list[InvestigationSummary]
    continuation: str | None = Field(description="Pass it back to get the next page; null on the last page.")
    next_action: str


class InvestigationService:
    def __init__(self, deps: Deps, runs: Orchestrations | None) -> None:
        self.deps = deps
        self.runs = runs
        self.settings = deps.settings.section(InvestigationSettings)
        self.store = InvestigationStore(deps.cosmos, deps.blobs, inline_output_bytes=self.settings.inline_output_bytes)

    async def start(self, principal: Principal, payload: Any, correlation_id: str | None = None) -> StartResult:
        """Normalise the alert payload and start one investigation per firing alert (all checked first)."""
        from shared.investigations.alerts import detect_format

        fmt = detect_format(payload)
        _refuse_crowds(payload, fmt, self.settings.max_alerts_per_request)
        # Up to 100 alerts of up to 1 MB in all: normalised (checked, scrubbed) off the event loop.
        alerts = await asyncio.to_thread(normalise, payload, received_at=self.deps.clock())
        resolved = _resolved_count(payload, fmt)
        if not alerts:
            return StartResult(
                format=fmt,
                started=[],
                skipped_resolved=resolved,
                next_action="Nothing to investigate: the payload holds only resolved alerts.",
            )
        if self.runs is None:
            raise NotConfigured("Investigations run as Durable orchestrations, which this process cannot start.")
        limits = Limits.of(self.settings)
        # A run cannot be active longer than its budget plus the report: older "running" records are stale.
        since = (self.deps.clock() - timedelta(seconds=limits.time_budget_seconds + 600)).isoformat()
        keys = [dedup_key(alert) for alert in alerts]
        running = await self.store.active(principal.workspace_id, since)  # one query: repeats and the cap
        newest: dict[str, str] = {}
        for inv_id, key in running:  # newest first: the first id of a key is its newest investigation
            if key is not None:
                newest.setdefault(key, inv_id)
        joined = {k: newest[k] for k in set(keys) if k in newest and await self._still_live(principal, newest[k])}
        fresh = len({k for k in keys if k not in joined})
        active = len(running)
        if fresh and active + fresh > self.settings.max_active:
            raise RateLimited(
                f"{active} investigations are running in this workspace; at most {self.settings.max_active} at once",
                details={"active": active, "requested": fresh, "max_active": self.settings.max_active},
                recovery_suggestions=["Wait for some to finish (list_alert_investigations), or cancel some."],
            )
        # One after another: each start writes two records and an instance. Repeats of an alert that is being
        # investigated (Alertmanager resends firing groups) join it instead of starting another.
        started: list[Started] = []
        for alert, key in zip(alerts, keys, strict=True):
            if key in joined:
                started.append(_joined(joined[key], alert))
                continue
            one = await self._start_one(principal, alert, limits, correlation_id, key)
            joined[key] = one.investigation_id
            started.append(one)
        first = started[0].investigation_id
        return StartResult(
            format=fmt,
            started=started,
            skipped_resolved=resolved,
            next_action=(
                f"Poll GET {ROUTE}{first} (or get_alert_investigation with investigation_id {first}) every few "
                "seconds: progress shows the phase and iteration; when status is 'completed' the report holds the "
                "analysis and next_actions."
            ),
        )

    async def _still_live(self, principal: Principal, investigation_id: str) -> bool:
        """Whether the run behind a pending/running record still runs; a record left behind by a run that ended
        another way (cancelled as a run, failed before its FAILED activity) is settled here, so it neither
        swallows repeats of its alert nor counts against the cap."""
        assert self.runs is not None
        try:
            live = await self.runs.status(principal, investigation_id, scope="workspace")
        except NotFound:
            return False
        if live.state in ("pending", "running"):
            return True
        await self._settle(principal, investigation_id, live.state, live.error)
        return False

    async def _settle(self, principal: Principal, investigation_id: str, state: str, error: str | None) -> None:
        """Give a record its run's final state when the run ended without the orchestration recording it."""

        def settle(r: InvestigationRecord) -> None:
            if r.status not in TERMINAL_STATUSES:
                r.status = "cancelled" if state == "cancelled" else "failed"
                r.error = r.error or error or "The run behind this investigation ended without its report."

        await self.store.update(principal.workspace_id, investigation_id, settle)

    async def _start_one(
        self, principal: Principal, alert: Alert, limits: Limits, correlation_id: str | None, key: str
    ) -> Started:
        plan = StoredPlan(
            alert=alert,
            limits=limits,
            started_by=StartedBy(user_id=principal.user_id, source=principal.source),
            dedup_key=key,
        ).model_dump(mode="json")
        assert self.runs is not None
        run = await self.runs.start(ORCHESTRATOR, principal, plan, correlation_id=correlation_id)
        record = InvestigationRecord(
            **new_record_fields(principal.workspace_id, principal.user_id, run.run_id),
            alert=alert,
            dedup_key=key,
            ttl=None if self.deps.settings.is_local else self.settings.record_ttl_days * 86400,
        )
        with contextlib.suppress(Conflict):  # the orchestration's first activity wrote it first
            await self.store.create(record)
        log.info("investigation %s started (%s, %s)", run.run_id, alert.source, alert.severity)
        return Started(
            investigation_id=run.run_id,
            alert_name=alert.name,
            severity=alert.severity,
            status_url=ROUTE + run.run_id,
        )

    async def get(self, principal: Principal, investigation_id: str) -> InvestigationView:
        """The caller's workspace's investigation, with live progress while it runs."""
        record = await self.store.get(principal.workspace_id, investigation_id)
        status, progress = record.status, {"phase": record.phase, "percent": record.progress}
        error = record.error
        if record.status not in TERMINAL_STATUSES and self.runs is not None:
            try:
                live = await self.runs.status(principal, investigation_id, scope="workspace")
            except NotFound:
                live = None
            if live is not None:
                if isinstance(live.progress, dict):
                    progress = {**progress, **live.progress}
                if live.state in ("failed", "cancelled"):
                    status, error = live.state, live.error
                    # Settled here too, so the list and the active cap stop counting it.
                    await self._settle(principal, investigation_id, live.state, live.error)
        return _view(record, status, progress, error)

    async def list(self, principal: Principal, limit: int = 20, continuation: str | None = None) -> InvestigationList:
        """The workspace's investigations, newest first, one page at a time."""
        if continuation is not None and len(continuation) > MAX_CONTINUATION_CHARS:
            raise ValidationFailed.on_field(
                "continuation",
                "too long",
                "continuation is not one this endpoint returned",
            )
        try:
            items, token = await self.store.list_summaries(principal.workspace_id, limit, continuation)
        except (ValueError, TypeError):
            raise ValidationFailed.on_field(
                "continuation",
                "not a continuation token",
                "continuation is not one this endpoint returned",
            ) from None
        return InvestigationList(
            investigations=items,
            continuation=token,
            next_action=("Pass continuation back for the next page. " if token else "")
            + "Open one with get_alert_investigation (or GET /api/investigations/{id}).",
        )

    async def call_output(
        self,
        principal: Principal,
        investigation_id: str,
        call_id: str,
        offset: int = 0,
        limit: int = DEFAULT_OUTPUT_CHARS,
    ) -> CallOutput:
        """One call's whole stored output of the workspace's investigation, `limit` characters from `offset`."""
        return await read_call_output(
            self.store, principal.workspace_id, investigation_id, call_id, offset=offset, limit=limit
        )

    async def metrics(
        self, principal: Principal, since: datetime | None = None, alert_name: str | None = None
    ) -> InvestigationMetrics:
        """Per alert name and in total, over the workspace's investigations only (metrics.py)."""
        return await compute_metrics(
            self.store,
            principal.workspace_id,
            since=since,
            alert_name=alert_name,
            max_records=self.settings.metrics_max_records,
        )

    async def cancel(self, principal: Principal, investigation_id: str, reason: str | None = None) -> InvestigationView:
        """Stop a pending or running investigation of the workspace; a finished one answers CONFLICT."""
        record = await self.store.get(principal.workspace_id, investigation_id)
        if record.status in ("completed", "failed"):
            raise Conflict(
                f"Investigation {investigation_id} already {record.status}; there is nothing to cancel.",
                details={"investigation_id": investigation_id, "status": record.status},
                recovery_suggestions=["Read it with get_alert_investigation."],
            )
        if self.runs is None:
            raise NotConfigured("Investigations run as Durable orchestrations, which this process cannot reach.")
        await self.runs.cancel(principal, investigation_id, reason, scope="workspace")

        def put(r: InvestigationRecord) -> None:
            if r.status not in TERMINAL_STATUSES:
                r.status, r.error = "cancelled", "Cancelled" + (f" by {principal.user_id}" if principal.user_id else "")

        updated = await self.store.update(principal.workspace_id, investigation_id, put)
        return _view(updated, updated.status, {"phase": updated.phase, "percent": updated.progress}, updated.error)


def _refuse_crowds(payload: Any, fmt: str, most: int) -> None:
    """The one limit on alerts per request, counted before normalising them (only an Alertmanager group holds
    more than one alert): too many is refused at once, nothing started."""
    if fmt != "alertmanager" or not isinstance(payload, dict) or not isinstance(payload.get("alerts"), list):
        return
    firing = sum(1 for a in payload["alerts"] if not (isinstance(a, dict) and a.get("status") == "resolved"))
    if firing > most:
        raise ValidationFailed.on_field(
            "alerts",
            "too many firing alerts",
            f"{firing} firing alerts in one payload; at most {most} start investigations at once",
            suggestions=["Send the alerts in smaller groups (Alertmanager: group_by, max_alerts)."],
        )


def dedup_key(alert: Alert) -> str:
    """The alert's identity across repeats: its source fingerprint, else its name and labels."""
    basis = alert.fingerprint or json.dumps([alert.source, alert.name, sorted(alert.labels.items())])
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:32]


def _joined(investigation_id: str, alert: Alert) -> Started:
    return Started(
        investigation_id=investigation_id,
        alert_name=alert.name,
        severity=alert.severity,
        status_url=ROUTE + investigation_id,
        joined=True,
    )


def _resolved_count(payload: Any, fmt: str) -> int:
    if fmt == "alertmanager" and isinstance(payload, dict) and isinstance(payload.get("alerts"), list):
        return sum(1 for a in payload["alerts"] if isinstance(a, dict) and a.get("status") == "resolved")
    if fmt == "azure_monitor" and isinstance(payload, dict):
        essentials = (
            ((payload.get("data") or {}).get("essentials") or {}) if isinstance(payload.get("data"), dict) else {}
        )
        return 1 if isinstance(essentials, dict) and essentials.get("monitorCondition") == "Resolved" else 0
    return 0


def _view(record: InvestigationRecord, status: str, progress: dict[str, Any], error: str | None) -> InvestigationView:
    if status == "completed":
        next_action = (
            "Read report.analysis; report.next_actions says what to record in debug memory once the fix works. "
            "A call's whole output: get_investigation_tool_output with its call_id."
        )
    elif status in ("failed", "cancelled"):
        next_action = "Start a new investigation with POST /api/investigations (start_alert_investigation)."
    else:
        next_action = f"Still {status}: poll again in a few seconds."
    return InvestigationView(
        investigation_id=record.id,
        status=status,
        phase=record.phase,
        progress=progress,
        path=record.path,
        path_reason=record.path_reason,
        alert=record.alert.model_dump(mode="json"),
        runbook=record.runbook.model_dump(exclude_none=True),
        tools=record.tools.model_dump(exclude_none=True),
        debug_memory=record.memory.model_dump(exclude_none=True) if record.memory else None,
        iterations=[
            IterationView(
                n=it.n,
                partial_analysis=it.partial_analysis,
                reasoning=it.reasoning,
                calls=[
                    CallView(
                        key=c.key,
                        call_id=c.key,
                        tool=c.tool,
                        args=c.args,
                        reason=c.reason,
                        is_error=c.is_error,
                        output_bytes=c.output_bytes,
                        output_preview=(c.output or "")[:PREVIEW_CHARS],
                        output_in_blob=c.output_ref is not None,
                        output_url=f"{ROUTE}{record.id}/calls/{c.key}/output",
                        truncated=c.truncated,
                        duration_ms=c.duration_ms,
                    )
                    for c in it.calls
                ],
            )
            for it in record.iterations
        ],
        report=record.report if status == "completed" else None,
        error=error if status in ("failed", "cancelled") else None,
        timings=record.timings.model_dump(exclude_none=True),
        token_usage=record.token_usage.model_dump(),
        created_at=record.created_at,
        updated_at=record.updated_at,
        status_url=ROUTE + record.id,
        next_action=next_action,
    )
