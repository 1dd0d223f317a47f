"""The comparison report's SVGs: a diff bar chart of the graded changes and differential flame graphs.

A differential flame graph needs one call tree per side. Profile keys differ from run to run, so the
two runs' SPX profiles are paired by what they measured (the endpoint, or the CLI command), and the
profiles of one endpoint are merged into their mean per request: each call path's self time summed
over the profiles and divided by their number. The endpoints whose mean wall time moved most get one
graph each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.perf.analysis import compare_report
from shared.perf.analysis.diff_svg import diff_bars, differential_flame_graph
from shared.perf.analysis.report import RenderedReport

DIFF_FLAMES = 3  # differential flame graphs per report
# Profiles of one endpoint merged per side: each holds up to 4 MB of stacks, and a report loads one pair
# at a time, so at most 2 x PROFILES_PER_SIDE x 4 MB of stacks are in memory per export.
PROFILES_PER_SIDE = 5


@dataclass(frozen=True)
class FlamePair:
    label: str
    baseline_keys: list[str]
    candidate_keys: list[str]
    baseline_wall_ms: float  # mean over the side's profiles
    candidate_wall_ms: float


@dataclass(frozen=True)
class Merged:
    """One pair's stacks, each side the mean per profile of its endpoint's profiles."""

    pair: FlamePair
    baseline: str
    candidate: str


def _label(profile: Mapping[str, Any]) -> str:
    return str(profile.get("endpoint") or profile.get("command") or profile["key"])


def _by_label(snapshot: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for p in sorted(snapshot.get("profiles", []), key=lambda p: p["key"]):
        out.setdefault(_label(p), []).append(p)
    return out


def _mean_wall(profiles: list[Mapping[str, Any]]) -> float:
    return sum(float(p["wall_ms"]) for p in profiles) / len(profiles)


def flame_pairs(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[FlamePair]:
    """The endpoints (or commands) both runs profiled, the largest change in mean wall time first."""
    base, cand = _by_label(baseline), _by_label(candidate)
    pairs = [
        FlamePair(
            label,
            [p["key"] for p in base[label][:PROFILES_PER_SIDE]],
            [p["key"] for p in cand[label][:PROFILES_PER_SIDE]],
            _mean_wall(base[label][:PROFILES_PER_SIDE]),
            _mean_wall(cand[label][:PROFILES_PER_SIDE]),
        )
        for label in sorted(base.keys() & cand.keys())
    ]
    pairs.sort(key=lambda p: (-abs(p.candidate_wall_ms - p.baseline_wall_ms), p.label))
    return pairs[:DIFF_FLAMES]


def mean_stacks(texts: list[str]) -> str:
    """Collapsed stacks of several profiles of one endpoint as their mean per profile (malformed lines skipped)."""
    if not texts:
        return ""
    totals: dict[str, float] = {}
    for text in texts:
        for line in text.splitlines():
            stack, _, count = line.rpartition(" ")
            try:
                value = float(count)
            except ValueError:
                continue
            if stack and math.isfinite(value):  # "nan"/"inf" parse as floats but are no time
                totals[stack] = totals.get(stack, 0.0) + value
    lines = [f"{stack} {round(total / len(texts))}" for stack, total in totals.items() if round(total / len(texts))]
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def merged_pair(pair: FlamePair, baseline_flames: Mapping[str, str], candidate_flames: Mapping[str, str]) -> Merged:
    """The pair's mean stacks per side (empty on a side without stacks)."""
    return Merged(
        pair,
        mean_stacks([baseline_flames[k] for k in pair.baseline_keys if baseline_flames.get(k)]),
        mean_stacks([candidate_flames[k] for k in pair.candidate_keys if candidate_flames.get(k)]),
    )


def render_charts(comparison: Mapping[str, Any], report_id: str, merged: list[Merged]) -> dict[str, str]:
    """File name -> SVG: report_<id>_diff.svg, then report_<id>_diff_flame_<n>.svg per pair with stacks on both."""
    charts = {
        f"report_{report_id}_diff.svg": diff_bars(
            list(comparison["changes"]), "Baseline vs candidate: graded changes against their thresholds"
        )
    }
    n = 0
    for m in merged:
        if not (m.baseline and m.candidate):
            continue
        n += 1
        pair = m.pair
        title = (
            f"{pair.label}: {pair.baseline_wall_ms:,.1f} ms -> {pair.candidate_wall_ms:,.1f} ms "
            f"(mean of {len(pair.baseline_keys)} vs {len(pair.candidate_keys)} profile(s))"
        )
        charts[f"report_{report_id}_diff_flame_{n}.svg"] = differential_flame_graph(m.baseline, m.candidate, title)
    return charts


def render_report(comparison: Mapping[str, Any], merged: list[Merged]) -> RenderedReport:
    """The comparison report with its charts (the tool and the CLI write the same bytes for the same runs)."""
    rid = compare_report.report_id(dict(comparison))
    return compare_report.render(dict(comparison), render_charts(comparison, rid, merged))
