"""What analysis.compare measures in one snapshot: subjects (endpoints, query classes, functions) and their metrics.

Each metric of a subject is a `Measure`: the point value that is compared and graded, the number of
samples behind it, and the confidence intervals that decide whether a change is real:

- endpoints (`GET /path`): ttfb/total/wall p50 and p95 (the snapshot's nearest-rank values; interval
  from the endpoint's kept samples, `samples_ms`), error_rate (Wilson interval over the timing samples);
- query classes (by fingerprint): count (Poisson interval), p95_ms (interval from the Query_time
  histogram), total_time_ms (real when the count moved or the per-execution median or p95 moved),
  rows_examined_avg (Hoeffding interval from the class's min and max rows examined);
- functions: SPX profile keys differ between runs, so a function is matched by (endpoint or CLI
  command, function name). Its value is the mean over that endpoint's profiles of the function's
  self_ms, total_ms and share_of_wall, a profile whose kept spans lack the function counting 0 (the
  snapshot keeps each profile's top functions, so it is small there). With min_samples profiles on
  each side the per-profile medians' intervals must also separate; with fewer, the floors alone decide.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.perf.analysis.intervals import (
    Interval,
    count_interval,
    histogram_count,
    histogram_interval,
    hoeffding_interval,
    quantile_interval,
    quantile_ranks,
    wilson_interval,
)

QUANTILES = {"p50": 0.5, "p95": 0.95}
PHASES = ("ttfb", "total", "wall")
PRIMARY = {"endpoint": ("ttfb_p95_ms", "total_p95_ms", "wall_p95_ms"), "query": ("total_time_ms",)}
PRIMARY["function"] = ("total_ms",)


@dataclass
class Measure:
    value: float
    n: int  # samples behind the value (executions, requests, profiles)
    # (what the interval is of, the interval): a change is real if any aligned pair of intervals separates
    tests: Sequence[tuple[str, Interval | None]] = ()
    needs_min_samples: bool = True


@dataclass
class Subject:
    kind: str
    key: str
    label: str
    measures: dict[str, Measure]
    context: dict[str, Any] = field(default_factory=dict)  # for suggestions (worst sample, top callee, ...)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain_label(text: str, limit: int) -> str:
    """A name as one line of plain text for headlines and evidence an agent reads: whitespace runs become one
    space, other control characters U+FFFD, at most `limit` characters (a name may come from any input)."""
    return _CONTROL.sub("\ufffd", " ".join(text.split()))[:limit]


def _endpoint(e: dict[str, Any], confidence: float) -> Subject:
    measures: dict[str, Measure] = {}
    kept = e.get("samples_ms") or {}
    for phase in PHASES:
        stats = e.get(f"{phase}_ms")
        samples = kept.get(phase) or []
        if not stats:
            continue
        for name, q in QUANTILES.items():
            tests = [(name, quantile_interval(samples, q, confidence))] if samples else []
            measures[f"{phase}_{name}_ms"] = Measure(float(stats[name]), len(samples), tests)
    if e.get("samples"):
        n = int(e["samples"])
        errors = int(e["errors"])
        measures["error_rate"] = Measure(errors / n, n, [("error rate", wilson_interval(errors, n, confidence))])
    label = plain_label(str(e["endpoint"]), 120)
    return Subject("endpoint", e["endpoint"], label, measures, {"profiles": e.get("profiles", [])})


def _query(q: dict[str, Any], confidence: float, min_samples: int) -> Subject:
    histogram = q.get("query_time_histogram") or []
    n = int(q["count"])
    counted = count_interval(n, confidence)
    p95 = histogram_interval(histogram, 0.95, confidence) if histogram else None
    median = histogram_interval(histogram, 0.5, confidence) if histogram else None
    enough = histogram_count(histogram) >= min_samples if histogram else False
    rows: list[tuple[str, Interval | None]] = []
    if "rows_examined_max" in q and n:
        low, high = float(q["rows_examined_min"]), float(q["rows_examined_max"])
        rows.append(("mean", hoeffding_interval(float(q["rows_examined_avg"]), low, high, n, confidence)))
    measures = {
        "count": Measure(float(n), n, [("executions", counted)], needs_min_samples=False),
        "p95_ms": Measure(float(q["p95_ms"]), n, [("p95", p95)] if p95 else []),
        # Total time moves with executions or with per-execution time; a few outliers alone are noise.
        "total_time_ms": Measure(
            float(q["total_time_ms"]),
            n,
            [("executions", counted), ("p50", median if enough else None), ("p95", p95 if enough else None)],
            needs_min_samples=False,
        ),
        "rows_examined_avg": Measure(float(q["rows_examined_avg"]), n, rows),
    }
    label = plain_label(str(q["fingerprint"]), 80)
    return Subject("query", q["fingerprint"], label, measures, {"worst_sample": q.get("worst_sample")})


def _groups(snapshot: dict[str, Any]) -> dict[str, list[str]]:
    """Endpoint or CLI command (or the profile key when neither is known) -> its profiles' keys."""
    groups: dict[str, list[str]] = {}
    for p in snapshot.get("profiles", []):
        groups.setdefault(str(p.get("endpoint") or p.get("command") or p["key"]), []).append(p["key"])
    return groups


def _median_with_zeros(present: list[float], n: int, confidence: float) -> Interval:
    """quantile_interval(0.5) of the sorted `present` values plus n - len(present) zeros (the profiles lacking
    the function), read by rank without building that list."""
    lo, hi, bounded = quantile_ranks(n, 0.5, confidence)
    below, zeros = bisect_left(present, 0.0), n - len(present)

    def at(rank: int) -> float:  # 1-based, in the merged order: negatives, the zeros, the rest
        if rank <= below:
            return present[rank - 1]
        return 0.0 if rank <= below + zeros else present[rank - zeros - 1]

    return Interval(at(lo), at(hi), bounded)


def _functions(snapshot: dict[str, Any], confidence: float, min_samples: int) -> list[Subject]:
    groups = _groups(snapshot)
    group_of = {key: g for g, keys in groups.items() for key in keys}
    per: dict[tuple[str, str], dict[str, dict[str, float]]] = {}  # (group, fn) -> metric -> profile -> value
    callees: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s in snapshot.get("spans", []):
        group = group_of.get(s["profile"])
        if group is None:
            continue
        slot = per.setdefault((group, s["function"]), {"self_ms": {}, "total_ms": {}, "share_of_wall": {}})
        for metric in slot:
            slot[metric][s["profile"]] = float(s[metric])
        callees.setdefault((group, s["function"]), s.get("top_callees") or [])
    # Work per span, not per (function, profile): most functions appear in few of an endpoint's profiles.
    multiplicity = {g: Counter(keys) for g, keys in groups.items()}
    subjects = []
    for (group, fn), metrics in sorted(per.items()):
        profiles = groups[group]
        measures = {}
        for metric, by_profile in metrics.items():
            present = sorted(v for p, v in by_profile.items() for _ in range(multiplicity[group][p]))
            n = len(profiles)
            tests = [("per-profile median", _median_with_zeros(present, n, confidence))] if n >= min_samples else []
            measures[metric] = Measure(sum(present) / n, n, tests, needs_min_samples=False)
        subjects.append(
            Subject(
                "function",
                f"{group} :: {fn}",
                f"{plain_label(fn, 80)} ({plain_label(group, 60)})",
                measures,
                {"group": group, "function": fn, "top_callees": callees[(group, fn)], "profiles": profiles},
            )
        )
    return subjects


def subjects(snapshot: dict[str, Any], confidence: float, min_samples: int) -> dict[tuple[str, str], Subject]:
    """Every comparable subject of a snapshot, keyed by (kind, key)."""
    found = [_endpoint(e, confidence) for e in snapshot.get("endpoints", [])]
    found += [_query(q, confidence, min_samples) for q in snapshot.get("queries", [])]
    found += _functions(snapshot, confidence, min_samples)
    return {(s.kind, s.key): s for s in found}


def function_groups(snapshot: dict[str, Any]) -> set[str]:
    return set(_groups(snapshot))
