"""get_investigation_metrics against the session's Cosmos-API server: per alert name and totals from stored records,
the caller's workspace only, since/alert_name filters, the record cap, and no tool output read."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.app.capabilities import catalogue
from shared.identity.models import Principal
from shared.investigations.alerts import Alert
from shared.investigations.models import CallEntry, InvestigationRecord, InvestigationStatus, Iteration, Timings
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, ToolOutcome, invoke

T0 = "2026-11-01T10:00:00.000000+00:00"


def alert(name: str) -> Alert:
    return Alert(name=name, title=f"{name} fired", source="prometheus", starts_at=datetime(2026, 11, 1, tzinfo=UTC))


def calls(n: int, *specs: tuple[str, bool]) -> Iteration:
    return Iteration(
        n=n,
        calls=[
            # Outputs near the inline cap: the metrics query must not carry them (it narrows calls in Cosmos).
            CallEntry(key=f"i{n}-c{k}", tool=tool, is_error=err, output="x" * 60_000, output_bytes=60_000)
            for k, (tool, err) in enumerate(specs, 1)
        ],
    )


async def seed(
    store: InvestigationStore,
    ws: str,
    name: str,
    status: InvestigationStatus,
    iterations: list[Iteration],
    *,
    created_at: str | None = None,
    seconds: int | None = None,
) -> str:
    inv = uuid.uuid4().hex
    fields = new_record_fields(ws, "alice", inv)
    if created_at:
        fields.update(created_at=created_at, updated_at=created_at)
    timings = Timings()
    if seconds is not None:
        timings = Timings(started_at=T0, finished_at=f"2026-11-01T10:{seconds // 60:02d}:{seconds % 60:02d}+00:00")
    record = InvestigationRecord(**fields, alert=alert(name), status=status, iterations=iterations, timings=timings)
    await store.create(record)
    return inv


async def metrics(deps: Deps, ws: str, **args: Any) -> ToolOutcome:
    tool = catalogue().registry.get("get_investigation_metrics")
    assert tool is not None
    principal = Principal(workspace_id=ws, user_id="bob", source="dev")
    return await invoke(tool, args, ToolContext(principal, deps, "corr-metrics", transport="rest"))


def out(outcome: ToolOutcome) -> dict[str, Any]:
    assert outcome.output is not None, outcome.error
    return outcome.output


@pytest.fixture
async def workspace(deps: Deps) -> str:
    store = InvestigationStore(deps.cosmos, deps.blobs)
    ws = f"ws-met-{uuid.uuid4().hex[:8]}"
    crash = "KubePodCrashLooping"
    await seed(
        store,
        ws,
        crash,
        "completed",
        [calls(1, ("pods_get", False), ("pods_log", False)), calls(2, ("pods_log", True))],
        seconds=30,
    )
    await seed(store, ws, crash, "failed", [calls(1, ("pods_get", True))], seconds=10)
    await seed(store, ws, crash, "running", [calls(1, ("events_list", False))])
    await seed(store, ws, "HighLatency", "cancelled", [], created_at="2026-10-01T00:00:00.000000+00:00")
    # Another workspace's investigations of the same alert: never read, never counted.
    other = f"ws-met-other-{uuid.uuid4().hex[:8]}"
    for _ in range(3):
        await seed(store, other, crash, "failed", [calls(1, ("secrets_list", True))], seconds=5)
    return ws


async def test_per_alert_and_totals_over_the_workspace_only(deps: Deps, workspace: str) -> None:
    m = out(await metrics(deps, workspace))
    assert (m["investigations_read"], m["capped"], m["max_records"]) == (4, False, 1000)
    by_name = {a["alert_name"]: a for a in m["alerts"]}
    assert list(by_name) == ["KubePodCrashLooping", "HighLatency"]  # most investigated first
    crash = by_name["KubePodCrashLooping"]
    assert {k: crash[k] for k in ("investigations", "completed", "failed", "running", "cancelled", "pending")} == {
        "investigations": 3,
        "completed": 1,
        "failed": 1,
        "running": 1,
        "cancelled": 0,
        "pending": 0,
    }
    assert (crash["completion_rate"], crash["failure_rate"]) == (0.333, 0.333)
    assert (crash["mean_iterations"], crash["mean_tool_calls"]) == (1.33, 1.67)
    assert (crash["mean_duration_seconds"], crash["durations_measured"]) == (20.0, 2)
    assert crash["tool_usage"] == {
        "pods_get": {"calls": 2, "errors": 1},
        "pods_log": {"calls": 2, "errors": 1},
        "events_list": {"calls": 1, "errors": 0},
    }
    assert "secrets_list" not in m["totals"]["tool_usage"]  # the other workspace's calls
    assert m["totals"]["investigations"] == 4
    assert (m["totals"]["cancelled"], m["totals"]["cancellation_rate"]) == (1, 0.25)
    assert "all that matched" in m["note"]


async def test_since_and_alert_name_narrow_what_is_counted(deps: Deps, workspace: str) -> None:
    recent = out(await metrics(deps, workspace, since="2026-10-15"))
    assert recent["totals"]["investigations"] == 3  # the October one is older
    assert recent["since"] == "2026-10-15T00:00:00.000000+00:00"
    assert out(await metrics(deps, workspace, since="2026-10-01T02:00:00+02:00"))["totals"]["investigations"] == 4
    one = out(await metrics(deps, workspace, alert_name="HighLatency"))
    assert [a["alert_name"] for a in one["alerts"]] == ["HighLatency"]
    assert one["totals"]["investigations"] == 1
    assert out(await metrics(deps, workspace, alert_name="NoSuchAlert"))["alerts"] == []
    bad = await metrics(deps, workspace, since="last tuesday")
    assert bad.error is not None
    assert (bad.error.code, bad.error.details["errors"][0]["field"]) == ("VALIDATION_ERROR", "since")


async def test_the_record_cap_is_said_in_the_answer(deps: Deps) -> None:
    store = InvestigationStore(deps.cosmos, deps.blobs)
    ws = f"ws-cap-{uuid.uuid4().hex[:8]}"
    for _ in range(12):
        await seed(store, ws, "Flapping", "completed", [calls(1, ("pods_get", False))])
    capped_deps = dataclasses.replace(
        deps, settings=deps.settings.with_section(InvestigationSettings(metrics_max_records=10))
    )
    m = out(await metrics(capped_deps, ws))
    assert (m["investigations_read"], m["capped"], m["max_records"]) == (10, True, 10)
    assert m["totals"]["investigations"] == 10
    assert "only the newest 10" in m["note"]
    exact = dataclasses.replace(
        deps, settings=deps.settings.with_section(InvestigationSettings(metrics_max_records=12))
    )
    assert out(await metrics(exact, ws))["capped"] is False  # exactly the cap: nothing left out


async def test_rows_carry_no_output(deps: Deps, workspace: str) -> None:
    store = InvestigationStore(deps.cosmos, deps.blobs)
    rows, _ = await store.metrics_rows(workspace, cap=100)
    assert len(rows) == 4
    keys = set().union(*(r.keys() for r in rows)) - {"_rid", "_ts", "_etag", "_self", "_attachments"}
    assert keys <= {"id", "status", "alert_name", "created_at", "started_at", "finished_at", "iterations", "calls"}
    assert sum(len(str(r)) for r in rows) < 5_000  # four records holding 240 KB of inline output
