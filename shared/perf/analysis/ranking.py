"""analysis.run on a snapshot: rank endpoints, query classes and functions per metric, grade them P0/P1/P2.

For each of the spec's five metrics the subjects are ranked by that metric, the top `top_n` kept in
`aggregates`, and every kept subject at or above its P2 threshold becomes a finding with its evidence
(the numbers it was graded on), how far over the threshold it is, and a suggestion that names what
to change. Two kinds of subject are left out of the ranking because they would drown the real ones:
replication streams (`administrator command: Binlog Dump...`, a connection that lives for hours) and
pass-through wrappers in span_total_ms (a function whose largest callee has >= PASS_THROUGH of its
total: the callee is graded instead, so a framework's Kernel -> Pipeline -> closure chain is one
finding, not five). Deterministic: ties break by name, so the same snapshot and parameters give the same
findings in the same order (report ids depend on it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.perf.analysis.thresholds import LEVELS, clamp_top_n, resolve, severity

_DB_CALLS = ("PDO", "mysqli", "Doctrine\\DBAL", "Illuminate\\Database")
_SEVERITY_ORDER = {level: i for i, level in enumerate(LEVELS)}
PASS_THROUGH = 0.9
_DDL = ("alter ", "create ", "drop ", "optimize ", "analyze ", "truncate ", "rename ")


def _is_replication(q: dict[str, Any]) -> bool:
    return str(q["fingerprint"]).lower().startswith("administrator command: binlog dump")


def _is_pass_through(s: dict[str, Any]) -> bool:
    return (
        bool(s["top_callees"]) and s["total_ms"] > 0 and s["top_callees"][0]["total_ms"] >= PASS_THROUGH * s["total_ms"]
    )


def _query_suggestion(q: dict[str, Any]) -> str:
    if q["fingerprint"].lower().startswith(_DDL):
        return (
            "A schema change (DDL), not application traffic: run it off-peak or as an online schema change "
            "(ALGORITHM=INPLACE / pt-online-schema-change)."
        )
    examined, sent = q["rows_examined_avg"], max(q["rows_sent_avg"], 1.0)
    if examined >= 1000 and examined / sent >= 100:
        return (
            f"Each execution examines {examined:,.0f} rows on average to return {q['rows_sent_avg']:,.0f}: "
            "run EXPLAIN on the worst sample and add an index on the columns in its WHERE/JOIN "
            "(or narrow the predicate)."
        )
    if q["count"] >= 100 and q["avg_ms"] < 20:
        return (
            f"It is fast per call ({q['avg_ms']} ms) but runs {q['count']:,} times: look for a loop issuing it per row "
            "(N+1) and batch it (IN list / JOIN) or cache the result."
        )
    if q["lock_time_ms"] >= 0.2 * q["total_time_ms"]:
        return (
            f"{q['lock_time_ms']:,.0f} ms of its time is lock wait: shorten the transactions that hold these rows "
            "or move the work off the hot path."
        )
    return (
        "Run EXPLAIN on the worst sample; reduce the rows it reads (index, LIMIT, fewer columns) or cache its result."
    )


def _span_suggestion(s: dict[str, Any], metric: str) -> str:
    name = s["function"]
    if any(name.startswith(p) for p in _DB_CALLS):
        return f"{name} is database time: the query findings show which statements; fix those rather than the PHP code."
    if metric == "span_self_ms" or not s["top_callees"]:
        extra = (
            f" It is called {s['calls']:,} times: call it less (cache, hoist out of loops)."
            if s["calls"] >= 1000
            else ""
        )
        return f"The time is spent in {name} itself ({s['self_ms']} ms self): optimise its own code.{extra}"
    top = s["top_callees"][0]
    return (
        f"Most of {name}'s time is in its callee {top['function']} ({top['total_ms']} ms): "
        "start there (see the flame graph)."
    )


def _endpoint_suggestion(e: dict[str, Any], metric: str) -> str:
    if e["profiles"]:
        return (
            f"Open SPX profile {e['profiles'][0]} for {e['endpoint']}: "
            "the span findings for that profile show where the time goes."
        )
    if metric == "endpoint_ttfb_ms":
        return (
            f"The server needs {e['ttfb_ms']['p95']} ms before its first byte on {e['endpoint']}: "
            "profile this endpoint with SPX and ingest the profile."
        )
    return f"Capture an SPX profile of {e['endpoint']} to see where its time goes."


class _Metric:
    def __init__(
        self,
        key: str,
        kind: str,
        subjects: list[dict[str, Any]],
        value: Callable[[dict[str, Any]], float | None],
        name: Callable[[dict[str, Any]], str],
        subject_id: Callable[[dict[str, Any]], str],
        suggestion: Callable[[dict[str, Any]], str],
    ) -> None:
        self.key, self.kind, self.subjects, self.value, self.name, self.subject_id, self.suggestion = (
            key,
            kind,
            subjects,
            value,
            name,
            subject_id,
            suggestion,
        )


def _metrics(snapshot: dict[str, Any]) -> list[_Metric]:
    endpoints = snapshot["endpoints"]
    queries = [q for q in snapshot["queries"] if not _is_replication(q)]
    spans = snapshot["spans"]
    # A root's total is its endpoint's wall time (graded there); a pass-through wrapper's is its callee's.
    non_root = [s for s in spans if not s["is_root"] and not _is_pass_through(s)]

    def wall(e: dict[str, Any]) -> float | None:
        phases = e["wall_ms"] or e["total_ms"]
        p95 = phases.get("p95") if phases else None
        return float(p95) if p95 is not None else None

    return [
        _Metric(
            "endpoint_ttfb_ms",
            "endpoint",
            endpoints,
            lambda e: e["ttfb_ms"]["p95"] if e["ttfb_ms"] else None,
            lambda e: e["endpoint"],
            lambda e: e["endpoint"],
            lambda e: _endpoint_suggestion(e, "endpoint_ttfb_ms"),
        ),
        _Metric(
            "endpoint_wall_ms",
            "endpoint",
            endpoints,
            wall,
            lambda e: e["endpoint"],
            lambda e: e["endpoint"],
            lambda e: _endpoint_suggestion(e, "endpoint_wall_ms"),
        ),
        _Metric(
            "query_total_time_ms",
            "query",
            queries,
            lambda q: q["total_time_ms"],
            lambda q: q["fingerprint"],
            lambda q: q["query_id"],
            _query_suggestion,
        ),
        _Metric(
            "span_self_ms",
            "span",
            spans,
            lambda s: s["self_ms"],
            lambda s: f"{s['function']} ({s['profile']})",
            lambda s: s["span_id"],
            lambda s: _span_suggestion(s, "span_self_ms"),
        ),
        _Metric(
            "span_total_ms",
            "span",
            non_root,
            lambda s: s["total_ms"],
            lambda s: f"{s['function']} ({s['profile']})",
            lambda s: s["span_id"],
            lambda s: _span_suggestion(s, "span_total_ms"),
        ),
    ]


def _evidence(kind: str, subject: dict[str, Any]) -> dict[str, Any]:
    if kind == "query":
        keep: tuple[str, ...] = (
            "query_id",
            "fingerprint",
            "count",
            "total_time_ms",
            "avg_ms",
            "p95_ms",
            "max_ms",
            "lock_time_ms",
            "rows_examined_avg",
            "rows_sent_avg",
            "share_of_time",
            "databases",
            "worst_sample",
        )
    elif kind == "span":
        keep = (
            "span_id",
            "profile",
            "function",
            "calls",
            "self_ms",
            "total_ms",
            "max_recursion",
            "share_of_wall",
            "top_callees",
        )
    else:
        keep = ("endpoint", "samples", "error_rate", "ttfb_ms", "total_ms", "wall_ms", "profiles", "sources")
    return {k: subject[k] for k in keep if k in subject}


def analyze(snapshot: dict[str, Any], snapshot_id: str, *, top_n: Any = None, thresholds: Any = None) -> dict[str, Any]:
    """The analysis.run result (without correlation_id); raises VALIDATION_ERROR for bad thresholds or top_n."""
    ranking, questions = resolve(thresholds)
    n = clamp_top_n(top_n)
    findings: list[dict[str, Any]] = []
    aggregates: dict[str, Any] = {}
    for metric in _metrics(snapshot):
        valued = [(v, s) for s in metric.subjects if (v := metric.value(s)) is not None]
        ranked = sorted(valued, key=lambda vs: (-vs[0], metric.name(vs[1])))[:n]
        levels = ranking[metric.key]
        aggregates[metric.key] = [
            {
                "rank": i + 1,
                "subject": metric.name(s),
                "id": metric.subject_id(s),
                "value_ms": v,
                "severity": severity(v, levels),
            }
            for i, (v, s) in enumerate(ranked)
        ]
        for value, subject in ranked:
            level = severity(value, levels)
            if level is None:
                continue
            threshold = levels[level]
            over = value - threshold
            findings.append(
                {
                    "id": f"{metric.key}:{metric.subject_id(subject)}",
                    "severity": level,
                    "metric": metric.key,
                    "kind": metric.kind,
                    "subject": metric.name(subject),
                    "value_ms": value,
                    "threshold_ms": threshold,
                    "over_by_ms": round(over, 3),
                    "over_by_pct": round(100.0 * over / threshold, 1),
                    "title": (
                        f"{level} {metric.key}: {metric.name(subject)[:120]} at {value:,.1f} ms "
                        f"(>= {level} {threshold:,} ms)"
                    ),
                    "evidence": _evidence(metric.kind, subject),
                    "suggestion": metric.suggestion(subject),
                }
            )
    findings.sort(key=lambda f: (_SEVERITY_ORDER[f["severity"]], -f["value_ms"] / f["threshold_ms"], f["id"]))
    by_severity: dict[str, list[dict[str, Any]]] = {level: [] for level in LEVELS}
    for f in findings:
        by_severity[f["severity"]].append({"id": f["id"], "title": f["title"]})
    aggregates["totals"] = {
        "query_time_ms": round(sum(q["total_time_ms"] for q in snapshot["queries"] if not _is_replication(q)), 3),
        "replication_stream_ms": round(sum(q["total_time_ms"] for q in snapshot["queries"] if _is_replication(q)), 3),
        "query_executions": sum(q["count"] for q in snapshot["queries"]),
        "profiles": len(snapshot["profiles"]),
        "profiled_wall_ms": round(sum(p["wall_ms"] for p in snapshot["profiles"]), 3),
        "timing_samples": sum(e["samples"] for e in snapshot["endpoints"]),
    }
    summary = {
        "endpoint_count": len(snapshot["endpoints"]),
        "query_count": len(snapshot["queries"]),
        "span_count": len(snapshot["spans"]),
        "profile_count": len(snapshot["profiles"]),
        "finding_count": len(findings),
        "p0_count": len(by_severity["P0"]),
        "p1_count": len(by_severity["P1"]),
        "p2_count": len(by_severity["P2"]),
        "top_n": n,
        "headline": findings[0]["title"] if findings else "No endpoint, query or function reaches a P2 threshold.",
    }
    return {
        "normalized_snapshot_id": snapshot_id,
        "summary": summary,
        "ranking_thresholds": ranking,
        "open_questions": questions,
        "aggregates": aggregates,
        "findings": findings,
        "findings_by_severity": by_severity,
    }
