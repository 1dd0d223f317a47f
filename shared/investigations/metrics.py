"""Aggregate metrics of a workspace's investigations (get_investigation_metrics, GET /api/investigations/metrics).

Per alert name and in total: how many were run, how they ended (counts and rates), mean iterations, mean
tool calls, mean duration and how often each tool was called (and failed). Computed from the stored records
of the caller's workspace only (one partition; another workspace's investigations are never read), newest
first and at most `metrics_max_records` of them: the answer says when older ones were left out. The store
narrows each record to its state and its calls' tool names and error flags, so no output is read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from shared.investigations.store import InvestigationStore

UNKNOWN_ALERT = "(unnamed)"


class ToolUsage(BaseModel):
    calls: int = Field(description="Times the tool was called.")
    errors: int = Field(description="Calls the tool answered with an error.")


class MetricsGroup(BaseModel):
    """Counts over a set of investigations. Rates are shares of `investigations` (0..1); a pending or running one
    counts with the iterations and calls it has so far."""

    investigations: int = Field(description="Investigations counted.")
    pending: int
    running: int
    completed: int
    failed: int
    cancelled: int
    completion_rate: float = Field(description="completed / investigations.")
    failure_rate: float = Field(description="failed / investigations.")
    cancellation_rate: float = Field(description="cancelled / investigations.")
    mean_iterations: float
    mean_tool_calls: float
    mean_duration_seconds: float | None = Field(
        description="From start to end of the investigations that ended with a recorded end (None: none did)."
    )
    durations_measured: int = Field(description="How many investigations mean_duration_seconds is over.")
    tool_usage: dict[str, ToolUsage] = Field(description="Tool name -> calls and errors, most called first.")


class AlertMetrics(MetricsGroup):
    alert_name: str = Field(description="The alert name (alertname) these investigations were started for.")


class InvestigationMetrics(BaseModel):
    since: str | None = Field(description="Only investigations created at or after this time (UTC) were counted.")
    alert_name: str | None = Field(description="Only investigations of this alert name were counted.")
    investigations_read: int = Field(description="Records read and counted.")
    capped: bool = Field(description="True when older investigations were left out (more than max_records matched).")
    max_records: int = Field(description="Most records one answer reads (newest first).")
    totals: MetricsGroup
    alerts: list[AlertMetrics] = Field(description="Per alert name, the most investigated first.")
    note: str
    next_action: str


@dataclass
class _Tally:
    statuses: Counter[str] = field(default_factory=Counter)
    iterations: int = 0
    calls: int = 0
    durations: list[float] = field(default_factory=list)
    tools: dict[str, list[int]] = field(default_factory=dict)  # name -> [calls, errors]

    def add(self, row: Mapping[str, Any]) -> None:
        self.statuses[str(row.get("status") or "pending")] += 1
        self.iterations += _int(row.get("iterations"))
        calls = row.get("calls")
        for call in calls if isinstance(calls, list) else []:
            if not (isinstance(call, list) and call and isinstance(call[0], str)):
                continue
            usage = self.tools.setdefault(call[0], [0, 0])
            usage[0] += 1
            usage[1] += 1 if len(call) > 1 and call[1] is True else 0
            self.calls += 1
        seconds = _duration_seconds(row)
        if seconds is not None:
            self.durations.append(seconds)

    def group(self) -> dict[str, Any]:
        n = sum(self.statuses.values())
        ranked = sorted(self.tools.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return {
            "investigations": n,
            **{s: self.statuses.get(s, 0) for s in ("pending", "running", "completed", "failed", "cancelled")},
            "completion_rate": _share(self.statuses.get("completed", 0), n),
            "failure_rate": _share(self.statuses.get("failed", 0), n),
            "cancellation_rate": _share(self.statuses.get("cancelled", 0), n),
            "mean_iterations": round(self.iterations / n, 2) if n else 0.0,
            "mean_tool_calls": round(self.calls / n, 2) if n else 0.0,
            "mean_duration_seconds": round(sum(self.durations) / len(self.durations), 3) if self.durations else None,
            "durations_measured": len(self.durations),
            "tool_usage": {name: ToolUsage(calls=c, errors=e) for name, (c, e) in ranked},
        }


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _duration_seconds(row: Mapping[str, Any]) -> float | None:
    """From the run's start (else the record's creation) to its recorded end; None when it has no end."""
    end = _time(row.get("finished_at"))
    start = _time(row.get("started_at")) or _time(row.get("created_at"))
    if end is None or start is None or end < start:
        return None
    return (end - start).total_seconds()


def aggregate(rows: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(totals, per-alert groups most investigated first) of the narrowed rows the store returns."""
    total = _Tally()
    per_alert: defaultdict[str, _Tally] = defaultdict(_Tally)
    for row in rows:
        total.add(row)
        name = row.get("alert_name")
        per_alert[name if isinstance(name, str) and name else UNKNOWN_ALERT].add(row)
    groups = [{"alert_name": name, **tally.group()} for name, tally in per_alert.items()]
    groups.sort(key=lambda g: (-g["investigations"], g["alert_name"]))
    return total.group(), groups


def since_text(since: datetime | None) -> str | None:
    """`since` in the records' own created_at form (UTC, microseconds), so the query compares like with like."""
    if since is None:
        return None
    aware = since if since.tzinfo else since.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


async def compute_metrics(
    store: InvestigationStore, workspace: str, *, since: datetime | None, alert_name: str | None, max_records: int
) -> InvestigationMetrics:
    """The workspace's metrics (see the module's docstring)."""
    since_iso = since_text(since)
    rows, capped = await store.metrics_rows(workspace, since=since_iso, alert_name=alert_name, cap=max_records)
    totals, groups = aggregate(rows)
    note = f"Counted {len(rows)} investigation(s) of this workspace"
    if capped:
        note += (
            f": only the newest {max_records} were read, older ones are not in these numbers. Narrow the window "
            "with `since` or one `alert_name` to count them."
        )
    else:
        note += ", all that matched."
    return InvestigationMetrics(
        since=since_iso,
        alert_name=alert_name,
        investigations_read=len(rows),
        capped=capped,
        max_records=max_records,
        totals=MetricsGroup.model_validate(totals),
        alerts=[AlertMetrics.model_validate(g) for g in groups],
        note=note,
        next_action="List the investigations behind these numbers with list_alert_investigations; open one with "
        "get_alert_investigation.",
    )
