"""report.export: the analysis as Markdown and JSON, with SVG charts, under a deterministic report id.

`report_id` is the first 16 hex digits of SHA-256 over the snapshot id and the canonical analysis, so
the same snapshot and parameters always give the same id and the same bytes (nothing time-dependent
is in a report). The Markdown always has `# Executive Summary`, `# Thresholds Used` and
`# Observations`, also with zero findings, and links its charts by file name (they sit next to it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from shared.perf.analysis.markdown import cell
from shared.perf.analysis.svg import flame_graph, offenders_chart
from shared.perf.analysis.thresholds import DEFAULTS, LEVELS
from shared.perf.parsers.snapshot import canonical

FLAME_GRAPHS = 3  # the slowest profiles get one each


@dataclass
class RenderedReport:
    report_id: str
    markdown: str
    report: dict[str, Any]
    charts: dict[str, str]  # file name -> SVG


def flame_profiles(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The profiles a report draws a flame graph of: the slowest FLAME_GRAPHS."""
    return sorted(snapshot["profiles"], key=lambda p: (-p["wall_ms"], p["key"]))[:FLAME_GRAPHS]


def report_id(snapshot_id: str, analysis: dict[str, Any]) -> str:
    return hashlib.sha256(snapshot_id.encode() + b"\n" + canonical(analysis)).hexdigest()[:16]


def _charts(
    snapshot: dict[str, Any], analysis: dict[str, Any], flames: dict[str, str], rid: str
) -> tuple[dict[str, str], list[tuple[str, dict[str, Any]]]]:
    """The report's SVGs (top offenders first, then one flame graph per slow profile that has one)."""
    charts = {
        f"report_{rid}_top.svg": offenders_chart(analysis["aggregates"], analysis["ranking_thresholds"], list(DEFAULTS))
    }
    flame_files = []
    for i, p in enumerate(flame_profiles(snapshot)):
        if flames.get(p["key"]):
            name = f"report_{rid}_flame_{i + 1}.svg"
            charts[name] = flame_graph(
                flames[p["key"]], f"{p['endpoint'] or p['command'] or p['key']} ({p['key']}, {p['wall_ms']:,.1f} ms)"
            )
            flame_files.append((name, p))
    return charts, flame_files


def _executive_summary(sid: str, summary: dict[str, Any], findings: list[dict[str, Any]]) -> list[str]:
    md = ["# Executive Summary", ""]
    md.append(
        f"Snapshot `{sid}`: {summary['endpoint_count']} endpoint(s), {summary['query_count']} query class(es), "
        f"{summary['span_count']} function span(s) from {summary['profile_count']} SPX profile(s)."
    )
    md.append("")
    if findings:
        md.append(
            f"**{summary['finding_count']} finding(s): {summary['p0_count']} P0, {summary['p1_count']} P1, "
            f"{summary['p2_count']} P2.** Fix first:"
        )
        md.append("")
        md.extend(
            f"1. **{f['severity']}** {cell(f['subject'], 160)}: `{f['metric']}` {f['value_ms']:,.1f} ms, "
            f"{f['over_by_pct']}% over the {f['severity']} threshold. {f['suggestion']}"
            for f in findings[:3]
        )
    else:
        md.append(
            "No finding: nothing reaches a P2 threshold among the top items ranked. "
            "See Observations for what was measured."
        )
    return md


def _thresholds_used(analysis: dict[str, Any]) -> list[str]:
    md = ["", "# Thresholds Used", "", "| metric | P0 ms | P1 ms | P2 ms | source |", "|---|---|---|---|---|"]
    for metric, levels in analysis["ranking_thresholds"].items():
        md.append(f"| {metric} | {levels['P0']:,} | {levels['P1']:,} | {levels['P2']:,} | {levels['source']} |")
    if analysis["open_questions"]:
        md += ["", "Open questions:", ""] + [f"- {q}" for q in analysis["open_questions"]]
    return md


def _finding_details(findings: list[dict[str, Any]]) -> list[str]:
    """One section per severity level, one subsection per finding."""
    md: list[str] = []
    for level in LEVELS:
        group = [f for f in findings if f["severity"] == level]
        if group:
            md += ["", f"## {level}", ""]
            for f in group:
                md += [
                    f"### {cell(f['subject'], 160)}",
                    "",
                    (
                        f"- metric: `{f['metric']}` = {f['value_ms']:,.3f} ms (threshold {f['threshold_ms']:,} ms, "
                        f"over by {f['over_by_ms']:,.1f} ms)"
                    ),
                    f"- suggestion: {f['suggestion']}",
                ]
                if f.get("diagnosis"):
                    md.append(f"- diagnosis: `{f['diagnosis']['pattern']}` ({_facts_line(f['diagnosis']['facts'])})")
                worst = f["evidence"].get("worst_sample")
                if worst:
                    text = worst["query"][:1500]
                    # A fence longer than any run of backticks in the statement: its text cannot close it.
                    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
                    md += ["- worst sample (literals redacted):", "", f"{fence}sql", text, fence]
                md.append("")
    return md


_FACT_KEYS = (
    "calls",
    "self_ms",
    "total_ms",
    "self_share",
    "cpu_share",
    "count",
    "avg_ms",
    "max_ms",
    "lock_share",
    "rows_examined_avg",
    "rows_sent_avg",
    "p95_ms",
    "next_p95_ms",
)


def _facts_line(facts: dict[str, Any]) -> str:
    """The numbers a diagnosis was decided on, as `key=value` pairs (shares as percentages)."""
    out = []
    for key in _FACT_KEYS:
        value = facts.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(f"{key}={100 * value:.1f}%" if key.endswith("_share") else f"{key}={value:,.4g}")
    return ", ".join(out) or "see the JSON report"


def _observations(findings: list[dict[str, Any]], top_chart: str) -> list[str]:
    md = ["", "# Observations", "", f"![Top offenders]({top_chart})", ""]
    if findings:
        md += ["| severity | metric | subject | measured ms | threshold ms | over |", "|---|---|---|---|---|---|"]
        md.extend(
            f"| {f['severity']} | {f['metric']} | {cell(f['subject'], 120)} | {f['value_ms']:,.1f} "
            f"| {f['threshold_ms']:,} | {f['over_by_pct']}% |"
            for f in findings
        )
        md += _finding_details(findings)
    else:
        md.append("No endpoint, query class or function reached a P2 threshold.")
    return md


def _ranked_by_metric(analysis: dict[str, Any]) -> list[str]:
    md = ["", "## Ranked by metric", ""]
    for metric in DEFAULTS:
        items = analysis["aggregates"].get(metric) or []
        md.append(
            f"- `{metric}`: "
            + (
                ", ".join(f"{cell(i['subject'], 60)} {i['value_ms']:,.1f} ms" for i in items)
                if items
                else "no data in this snapshot"
            )
        )
    return md


def _flame_graphs_and_sources(
    analysis: dict[str, Any], flame_files: list[tuple[str, dict[str, Any]]], rid: str
) -> list[str]:
    md: list[str] = []
    if flame_files:
        md += ["", "## Flame graphs", ""]
        for name, p in flame_files:
            md += [f"![Flame graph of {cell(p['endpoint'] or p['command'] or p['key'], 80)} ({p['key']})]({name})", ""]
    md += ["", "## Sources", ""]
    totals = analysis["aggregates"]["totals"]
    md.append(
        f"{totals['query_executions']:,} slow-log executions ({totals['query_time_ms']:,.1f} ms), "
        f"{totals['profiles']} profile(s) "
        f"({totals['profiled_wall_ms']:,.1f} ms profiled), {totals['timing_samples']} timing sample(s). "
        f"Report `{rid}`."
    )
    return md


def render(snapshot: dict[str, Any], analysis: dict[str, Any], flames: dict[str, str]) -> RenderedReport:
    sid = analysis["normalized_snapshot_id"]
    rid = report_id(sid, analysis)
    summary, findings = analysis["summary"], analysis["findings"]
    charts, flame_files = _charts(snapshot, analysis, flames, rid)
    md = _executive_summary(sid, summary, findings)
    md += _thresholds_used(analysis)
    md += _observations(findings, next(iter(charts)))
    md += _ranked_by_metric(analysis)
    md += _flame_graphs_and_sources(analysis, flame_files, rid)
    markdown = "\n".join(md) + "\n"
    report = {"report_id": rid, "snapshot_id": sid, **analysis, "charts": sorted(charts)}
    return RenderedReport(rid, markdown, report, charts)
