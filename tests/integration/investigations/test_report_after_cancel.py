"""The report activity against the session's stores: a cancel that landed while the report was being written
stands (the record stays cancelled, without a report), and an uncancelled run is completed as before."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from shared.investigations.activities.payloads import ReportRequest, StartedBy, StoredPlan
from shared.investigations.activities.report import write_report
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits
from shared.investigations.models import InvestigationRecord
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields
from shared.tools.deps import Deps
from tests.support.investigations import Run

STOPPED = ReportRequest(stop="iteration limit (5)", iterations=1, calls=0, data_points=0)


async def _record(deps: Deps, status: str) -> tuple[Run, InvestigationStore]:
    alert = Alert(name="KubePodCrashLooping", title="KubePodCrashLooping", source="test", starts_at=datetime.now(UTC))
    ws, run_id = f"ws-cancel-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    limits = Limits.of(deps.settings.section(InvestigationSettings))
    plan = StoredPlan(alert=alert, limits=limits, started_by=StartedBy(user_id="alice", source="dev")).model_dump(
        mode="json"
    )
    store = InvestigationStore(deps.cosmos, deps.blobs)
    record = InvestigationRecord(**new_record_fields(ws, "alice", run_id), alert=alert)
    record.status = status  # type: ignore[assignment]
    await store.create(record)
    return Run(run_id, ws, "alice", plan), store


async def test_a_cancel_that_lands_during_the_report_stands(deps: Deps) -> None:
    run, store = await _record(deps, "cancelled")
    out = await write_report(run, STOPPED, deps)
    assert out.status == "cancelled"  # the output says what the record says
    after = await store.get(run.workspace_id, run.run_id)
    assert after.status == "cancelled"
    assert after.report is None
    assert after.phase != "done"


async def test_a_running_investigation_is_completed_by_its_report(deps: Deps) -> None:
    run, store = await _record(deps, "running")
    await write_report(run, STOPPED, deps)
    after = await store.get(run.workspace_id, run.run_id)
    assert after.status == "completed"
    assert after.report is not None
    assert after.report["analysis"]
