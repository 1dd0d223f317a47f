"""analysis.run on a snapshot: rank endpoints, query classes and functions per metric, grade them P0/P1/P2.

For each of the spec's five metrics the subjects are ranked by that metric, the top `top_n` kept in
`aggregates`, and every kept subject at or above its P2 threshold becomes a finding with its evidence
(the numbers it was graded on), how far over the threshold it is, its `diagnosis` (the pattern the
advice rules recognised and the facts they decided on: span_advice.py, query_advice.py,
endpoint_advice.py) and the `suggestion` that follows from it. Spans are named by the request their
profile measured (`Fn (GET /path)`), not by the profile key. Two kinds of subject are left out of the
ranking because they would drown the real ones: replication streams (`administrator command: Binlog
Dump...`, a connection that lives for hours) and pass-through wrappers in span_total_ms (a function
whose largest callee has >= PASS_THROUGH of its total, unless that callee is one of PHP's waiting
functions: the callee is graded instead, so a framework's Kernel -> Pipeline -> closure chain is one
finding, not five). Deterministic: ties break by name, so the same snapshot and parameters give the same
findings in the same order (report ids depend on it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.perf.analysis.advice import Advice, AdviceContext
from shared.perf.analysis.call_kinds import external_kind
from shared.perf.analysis.endpoint_advice import endpoint_advice
from shared.perf.analysis.query_advice import query_advice
from shared.perf.analysis.span_advice import span_advice
from shared.perf.analysis.thresholds import LEVELS, clamp_top_n, resolve, severity

_SEVERITY_ORDER = {level: i for i, level in enumerate(LEVELS)}
PASS_THROUGH = 0.9


def _is_replication(q: dict[str, Any]) -> bool:
    return str(q["fingerprint"]).lower().startswith("administrator command: binlog dump")


def _is_pass_through(s: dict[str, Any]) -> bool:
    """A wrapper whose largest callee has PASS_THROUGH of its total, unless that callee is one of PHP's waiting
    functions (curl_exec, PDOStatement::execute, ...): then the wrapper is where the application makes the call."""
    if not s["top_callees"] or s["total_ms"] <= 0:
        return False
    top = s["top_callees"][0]
    return top["total_ms"] >= PASS_THROUGH * s["total_ms"] and external_kind(top["function"]) is None


class _Metric:
    def __init__(
        self,
        key: str,
        kind: str,
        subjects: list[dict[str, Any]],
        value: Callable[[dict[str, Any]], float | None],
        name: Callable[[dict[str, Any]], str],
        subject_id: Callable[[dict[str, Any]], str],
        advise: Callable[[dict[str, Any]], Advice],
    ) -> None:
        self.key, self.kind, self.subjects, self.value, self.name, self.subject_id, self.advise = (
            key,
            kind,
            subjects,
            value,
            name,
            subject_id,
            advise,
        )


def _metrics(snapshot: dict[str, Any]) -> list[_Metric]:
    ctx = AdviceContext(snapshot)
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
            lambda e: endpoint_advice(e, "endpoint_ttfb_ms", ctx),
        ),
        _Metric(
            "endpoint_wall_ms",
            "endpoint",
            endpoints,
            wall,
            lambda e: e["endpoint"],
            lambda e: e["endpoint"],
            lambda e: endpoint_advice(e, "endpoint_wall_ms", ctx),
        ),
        _Metric(
            "query_total_time_ms",
            "query",
            queries,
            lambda q: q["total_time_ms"],
            lambda q: q["fingerprint"],
            lambda q: q["query_id"],
            lambda q: query_advice(q, ctx),
        ),
        _Metric(
            "span_self_ms",
            "span",
            spans,
            lambda s: s["self_ms"],
            lambda s: f"{s['function']} ({ctx.request(s['profile'])})",
            lambda s: s["span_id"],
            lambda s: span_advice(s, "span_self_ms", ctx),
        ),
        _Metric(
            "span_total_ms",
            "span",
            non_root,
            lambda s: s["total_ms"],
            lambda s: f"{s['function']} ({ctx.request(s['profile'])})",
            lambda s: s["span_id"],
            lambda s: span_advice(s, "span_total_ms", ctx),
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
            "signals",
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
            "cpu_self_ms",
            "cpu_total_ms",
            "top_callees",
            "top_callers",
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
            advice = metric.advise(subject)
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
                    "diagnosis": advice.diagnosis(),
                    "suggestion": advice.text,
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
