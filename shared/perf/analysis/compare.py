"""analysis.compare: did the candidate run get slower than the baseline? Two snapshots -> graded changes.

Subjects and metrics are compare_measures' (endpoints, query classes, SPX functions matched by endpoint
or command and name); rules and options are compare_rules'. For each metric measured on both sides a
change is reported when

1. it clears the metric's noise floor in both relative and absolute terms, and
2. it is real: where intervals exist on both sides (see compare_measures) the candidate's lies wholly
   beyond the baseline's; percentile, error-rate and rows metrics also need `min_samples` samples on
   each side (else the metric is counted in summary.not_compared).

A slower change is graded P2/P1/P0 by the highest level whose relative and absolute steps it meets
(below P2: listed without a severity). Subjects on one side only are `new` / `gone`, reported on their
primary metric (endpoint TTFB p95, else total or wall p95; query total time; function total time)
when its size clears the floor's absolute step (and, for a query class, when the interval of its
execution count excludes zero: a class seen once or twice in one run only is chance).

Deterministic: changes are sorted worst first (severity, then slower / new / gone / faster, then
size), ties by key, so the same snapshots and options give the same comparison.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from shared.core.errors import ValidationFailed
from shared.perf.analysis.compare_measures import PRIMARY, Measure, Subject, function_groups, subjects
from shared.perf.analysis.compare_rules import GRADES, grade_starts, level_reached, resolve
from shared.perf.analysis.intervals import separated
from shared.perf.parsers.snapshot import SCHEMA as SNAPSHOT_SCHEMA
from shared.perf.parsers.snapshot import snapshot_id

SCHEMA = "firebreak-perf-comparison-v1"
_SEVERITY_RANK = {"P0": 0, "P1": 1, "P2": 2, None: 3}
_DIRECTION_RANK = {"slower": 0, "new": 1, "gone": 2, "faster": 3}
_UNIT_TEXT = {"ms": " ms", "ratio": "", "count": "", "rows": " rows"}


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, 3)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "absent"
    if unit == "ratio":
        return f"{value:.2%}"
    if unit == "count":
        return f"{value:,.0f}"
    # Three significant digits below 100 (a 0.08 ms query is not "0.1 ms"), one decimal above.
    return f"{value:,.1f}{_UNIT_TEXT[unit]}" if abs(value) >= 100 else f"{value:.3g}{_UNIT_TEXT[unit]}"


def _interval_pair(b: Measure, c: Measure) -> tuple[Any, bool | None]:
    """(the interval pair to show: the first that separates, else the first; whether any separates, None: no pair)."""
    pairs = [(of, bi, ci) for (of, bi), (_, ci) in zip(b.tests, c.tests, strict=False) if bi and ci]
    if not pairs:
        return None, None
    apart = [pair for pair in pairs if separated(pair[1], pair[2])]
    return (apart or pairs)[0], bool(apart)


def _suggestion(subject: Subject, metric: str, direction: str, baseline: Subject | None = None) -> str:
    if direction == "faster":
        return "Faster: keep it; check that the candidate still does the same work (same results, same rows sent)."
    if direction == "gone":
        return f"Absent from the candidate: check that its run exercised {subject.label} before trusting the rest."
    if subject.kind == "endpoint":
        if metric == "error_rate":
            return f"More requests to {subject.key} fail: read the candidate's error responses and application log."
        return (
            f"Profile {subject.key} with SPX in both runs and compare again: the function changes show where "
            "the extra time goes (query changes show database time)."
        )
    if subject.kind == "query":
        hints = {
            "count": "It runs more often: look for a new loop issuing it per row (N+1) and batch or cache it.",
            "rows_examined_avg": "Each execution reads more rows: an index may be unused or gone; EXPLAIN both.",
        }
        explain = "Run EXPLAIN on the candidate's worst sample; compare its plan and row estimates with the baseline's."
        return hints.get(metric, explain)
    fn = subject.context["function"]
    top = (subject.context.get("top_callees") or [{}])[0].get("function")
    own_code = f"The extra time is in {fn}'s own code: diff its code between the two versions."
    if metric == "self_ms" or not top:
        return own_code
    if baseline is not None and {"self_ms", "total_ms"} <= set(baseline.measures) & set(subject.measures):
        grown = subject.measures["total_ms"].value - baseline.measures["total_ms"].value
        own = subject.measures["self_ms"].value - baseline.measures["self_ms"].value
        if grown > 0 and own >= 0.5 * grown:  # its own time, not its callees', made the total grow
            return f"{own_code} ({own:,.1f} of the {grown:,.1f} ms it grew is its own time.)"
    return f"Look at {fn}'s callees in the candidate's flame graph, starting with {top}."


def _change(
    subject: Subject,
    metric: str,
    direction: str,
    base: float | None,
    cand: float | None,
    rule: dict[str, Any],
    severity: str | None,
    shown: Any,
    confidence: float,
    baseline: Subject | None = None,
) -> dict[str, Any]:
    unit = rule["unit"]
    delta = None if base is None or cand is None else cand - base
    relative = None if delta is None or base is None else (delta / base if base else math.inf)
    interval = (
        {
            "of": shown[0],
            "baseline": shown[1].as_list(),
            "candidate": shown[2].as_list(),
            "confidence": confidence,
            "bounded": shown[1].bounded and shown[2].bounded,
        }
        if shown
        else None
    )
    what = f"{metric} of {subject.label}"
    if direction in ("new", "gone"):
        side, value = ("candidate", cand) if direction == "new" else ("baseline", base)
        evidence = f"{what} is {_fmt(value, unit)} and only in the {side}."
    else:
        rel = "" if relative is None or not math.isfinite(relative) else f"{relative:+.1%}, "
        sign = "+" if (delta or 0) >= 0 else ""
        evidence = f"{what} went from {_fmt(base, unit)} to {_fmt(cand, unit)} ({rel}{sign}{_fmt(delta, unit)})"
        if interval:
            lo_b, hi_b = interval["baseline"]
            lo_c, hi_c = interval["candidate"]
            evidence += (
                f"; {confidence:.0%} intervals of the {interval['of']} [{lo_b:,}, {hi_b:,}] vs [{lo_c:,}, {hi_c:,}] "
                "do not overlap"
            )
            if not interval["bounded"]:
                evidence += " (too few samples for the full confidence: an end is the sample's extreme)"
        evidence += "."
    return {
        "change_id": hashlib.sha256(f"{subject.kind}\x1f{subject.key}\x1f{metric}".encode()).hexdigest()[:12],
        "kind": subject.kind,
        "key": subject.key,
        "label": subject.label,
        "metric": metric,
        "direction": direction,
        "severity": severity,
        "baseline": _num(base),
        "candidate": _num(cand),
        "delta": _num(delta),
        "relative": _num(relative),
        "interval": interval,
        "thresholds": grade_starts(rule, base),
        "unit": unit,
        "evidence": evidence,
        "suggestion": _suggestion(subject, metric, direction, baseline),
    }


class _Tally:
    def __init__(self) -> None:
        self.changes: list[dict[str, Any]] = []
        self.unchanged = 0
        self.not_compared = 0


def _compare_subject(b: Subject, c: Subject, opts: dict[str, Any], tally: _Tally) -> None:
    for metric in sorted(set(b.measures) & set(c.measures)):
        bm, cm, rule = b.measures[metric], c.measures[metric], opts["rules"][metric]
        if bm.needs_min_samples and min(bm.n, cm.n) < opts["min_samples"]:
            tally.not_compared += 1
            continue
        delta = cm.value - bm.value
        relative = delta / bm.value if bm.value else (math.inf if delta else 0.0)
        level = level_reached(rule, relative, delta) if delta else None
        shown, real = _interval_pair(bm, cm)
        if level is None or real is False:
            tally.unchanged += 1
            continue
        direction = "slower" if delta > 0 else "faster"
        severity = level if direction == "slower" and level in GRADES else None
        tally.changes.append(
            _change(c, metric, direction, bm.value, cm.value, rule, severity, shown, opts["confidence"], b)
        )


def _one_side(s: Subject, direction: str, opts: dict[str, Any], tally: _Tally) -> None:
    metric = next((m for m in PRIMARY[s.kind] if m in s.measures), None)
    if metric is None:
        return
    measure = s.measures[metric]
    if measure.needs_min_samples and measure.n < opts["min_samples"]:
        tally.not_compared += 1
        return
    rule, value = opts["rules"][metric], measure.value
    level = level_reached(rule, None, value)
    # A query class seen a few times in one run only is chance: its executions' interval must exclude zero.
    executions = measure.tests[0][1] if s.kind == "query" else None
    sporadic = executions is not None and executions.lo <= 0
    if level is None or sporadic:
        tally.unchanged += 1
        return
    graded = direction == "new" or opts["grade_gone"]
    severity = level if graded and level in GRADES else None
    base, cand = (None, value) if direction == "new" else (value, None)
    tally.changes.append(_change(s, metric, direction, base, cand, rule, severity, None, opts["confidence"]))


def _order(change: dict[str, Any]) -> tuple[Any, ...]:
    size = change["relative"] if change["relative"] is not None else math.inf
    return (
        _SEVERITY_RANK[change["severity"]],
        _DIRECTION_RANK[change["direction"]],
        -abs(size),
        -abs(change["delta"] or 0.0),
        change["kind"],
        change["key"],
        change["metric"],
    )


def _check(side: str, snapshot: Any) -> None:
    problem = None
    if not isinstance(snapshot, dict):
        problem = "must be a snapshot's content (an object)"
    elif snapshot.get("schema", SNAPSHOT_SCHEMA) != SNAPSHOT_SCHEMA:
        problem = f"schema {str(snapshot.get('schema'))[:60]!r} is not {SNAPSHOT_SCHEMA}"
    else:
        wrong = [
            part
            for part in ("endpoints", "queries", "spans", "profiles")
            if not isinstance(snapshot.get(part, []), list)
        ]
        problem = f"{', '.join(wrong)} must be lists" if wrong else None
    if problem:
        raise ValidationFailed.on_field(
            side,
            problem,
            f"{side}: {problem}",
            suggestions=[
                "Pass the content of a snapshot built by artifacts.ingest or `python -m shared.perf snapshot`."
            ],
        )


def compare(
    baseline: dict[str, Any], candidate: dict[str, Any], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The comparison of two snapshot contents (see the module doc); VALIDATION_ERROR for bad options."""
    _check("baseline", baseline)
    _check("candidate", candidate)
    opts = resolve(options)
    conf, min_n = opts["confidence"], opts["min_samples"]
    before, after = subjects(baseline, conf, min_n), subjects(candidate, conf, min_n)
    both_groups = function_groups(baseline) & function_groups(candidate)
    tally = _Tally()
    for key in sorted(set(before) | set(after)):
        b, c = before.get(key), after.get(key)
        if b is not None and c is not None:
            _compare_subject(b, c, opts, tally)
            continue
        s = b or c
        assert s is not None
        # A function is new or gone only where its endpoint or command was profiled in both runs.
        if s.kind == "function" and s.context["group"] not in both_groups:
            continue
        _one_side(s, "new" if b is None else "gone", opts, tally)
    changes = sorted(tally.changes, key=_order)
    kept = changes[: opts["max_changes"]]
    counts = {level: sum(1 for c in changes if c["severity"] == level) for level in GRADES}
    directions = {d: sum(1 for c in changes if c["direction"] == d) for d in _DIRECTION_RANK}
    if changes:
        worst = changes[0]
        headline = f"{worst['severity'] or 'Ungraded'} {worst['direction']}: {worst['evidence']}"
    else:
        headline = "No change beyond the noise floor: the candidate performs like the baseline."
    return {
        "schema": SCHEMA,
        "baseline_snapshot_id": snapshot_id(baseline),
        "candidate_snapshot_id": snapshot_id(candidate),
        "options": opts,
        "summary": {
            "change_count": len(changes),
            "p0_count": counts["P0"],
            "p1_count": counts["P1"],
            "p2_count": counts["P2"],
            **directions,
            "not_compared": tally.not_compared,
            "left_out": len(changes) - len(kept),
            "headline": headline,
        },
        "changes": kept,
        "unchanged_count": tally.unchanged,
    }


def worst_severity(comparison: dict[str, Any]) -> str | None:
    """The most severe grade among the changes ("P0" worst), or None when nothing is graded."""
    graded = [c["severity"] for c in comparison["changes"] if c["severity"]]
    return min(graded, key=lambda s: _SEVERITY_RANK[s]) if graded else None
