"""metrics.aggregate over the narrowed rows the store returns: counts, rates, means, tool usage, odd rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from shared.investigations.metrics import UNKNOWN_ALERT, aggregate, since_text


def row(alert: str | None, status: str, iterations: object, calls: list[object], **times: str) -> dict[str, Any]:
    return {"alert_name": alert, "status": status, "iterations": iterations, "calls": calls, **times}


T0 = "2026-11-01T10:00:00.000000+00:00"


def test_counts_rates_means_and_tool_usage_per_alert_and_in_total() -> None:
    rows = [
        row(
            "A",
            "completed",
            2,
            [["pods_get", False], ["pods_log", False], ["pods_log", True]],
            started_at=T0,
            finished_at="2026-11-01T10:00:30.000000+00:00",
        ),
        row("A", "failed", 1, [["pods_get", True]], created_at=T0, finished_at="2026-11-01T10:00:10.000000+00:00"),
        row("A", "running", 1, [["events_list", False]], started_at=T0),
        row("B", "cancelled", 0, []),
    ]
    totals, groups = aggregate(rows)
    assert [g["alert_name"] for g in groups] == ["A", "B"]
    a = groups[0]
    assert (a["investigations"], a["completed"], a["failed"], a["running"], a["cancelled"]) == (3, 1, 1, 1, 0)
    assert (a["completion_rate"], a["failure_rate"], a["cancellation_rate"]) == (0.333, 0.333, 0.0)
    assert (a["mean_iterations"], a["mean_tool_calls"]) == (1.33, 1.67)
    assert (a["mean_duration_seconds"], a["durations_measured"]) == (20.0, 2)  # the running one has no end
    assert {k: v.model_dump() for k, v in a["tool_usage"].items()} == {
        "pods_get": {"calls": 2, "errors": 1},
        "pods_log": {"calls": 2, "errors": 1},
        "events_list": {"calls": 1, "errors": 0},
    }
    assert list(a["tool_usage"]) == ["pods_get", "pods_log", "events_list"]  # most called first, then by name
    assert (totals["investigations"], totals["cancelled"], totals["cancellation_rate"]) == (4, 1, 0.25)
    assert (totals["mean_tool_calls"], groups[1]["mean_duration_seconds"]) == (1.25, None)


def test_rows_with_missing_or_odd_fields_count_without_breaking_the_sums() -> None:
    rows: list[dict[str, Any]] = [
        {"status": "pending"},  # a record created a moment ago: no alert name, no iterations, no calls
        row("", "completed", True, [["t", "yes"], "junk", [], [7, False]], started_at="not a time", finished_at=T0),
        row("C", "completed", 1, [], started_at="2026-11-01T10:00:05+00:00", finished_at=T0),  # ends before it starts
    ]
    totals, groups = aggregate(rows)
    assert totals["investigations"] == 3
    assert totals["pending"] == 1
    assert {g["alert_name"] for g in groups} == {UNKNOWN_ALERT, "C"}
    assert totals["tool_usage"]["t"].model_dump() == {"calls": 1, "errors": 0}  # only a True flag is an error
    assert totals["mean_iterations"] == 0.33  # True is not a count
    assert totals["durations_measured"] == 0


def test_nothing_to_count_gives_zeros() -> None:
    totals, groups = aggregate([])
    assert groups == []
    assert (totals["investigations"], totals["completion_rate"], totals["mean_iterations"]) == (0, 0.0, 0.0)
    assert totals["mean_duration_seconds"] is None


def test_since_is_compared_in_the_records_own_form() -> None:
    assert since_text(None) is None
    assert since_text(datetime.fromisoformat("2026-11-01")) == "2026-11-01T00:00:00.000000+00:00"  # no zone: UTC
    aware = datetime.fromisoformat("2026-11-01T02:00:00+02:00")
    assert since_text(aware) == "2026-11-01T00:00:00.000000+00:00"
    assert since_text(datetime(2026, 11, 1, tzinfo=UTC)) == "2026-11-01T00:00:00.000000+00:00"
