"""A comparison (analysis.compare) as Markdown and JSON under a deterministic id, with its charts passed through.

`report_id` is the first 16 hex digits of SHA-256 over the canonical comparison, so the same
comparison always gives the same id and bytes. The Markdown always has `# Comparison summary`,
`# Thresholds used`, `# Slower`, `# Faster`, `# New and gone` and `# Unchanged` (also when empty),
and links each chart by its file name (the files sit next to it). Table cells escape `|` and
newlines: fingerprints and function names may hold anything.
"""

from __future__ import annotations

import hashlib
from typing import Any

from shared.perf.analysis.compare import worst_severity
from shared.perf.analysis.compare_rules import LEVELS
from shared.perf.analysis.markdown import cell
from shared.perf.analysis.report import RenderedReport
from shared.perf.parsers.snapshot import canonical


def report_id(comparison: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(comparison)).hexdigest()[:16]


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ratio":
        return f"{value:.2%}"
    return f"{value:,.3f}" if unit == "ms" else f"{value:,.1f}"


def _change_text(c: dict[str, Any]) -> str:
    if c["delta"] is None:
        return str(c["direction"])
    relative = f" ({c['relative']:+.1%})" if c["relative"] is not None else ""
    return f"{c['delta']:+,.3f}{relative}"


def _interval_text(c: dict[str, Any]) -> str:
    i = c["interval"]
    if not i:
        return "-"
    return f"[{i['baseline'][0]:,}, {i['baseline'][1]:,}] -> [{i['candidate'][0]:,}, {i['candidate'][1]:,}]"


def _table(changes: list[dict[str, Any]], empty: str) -> list[str]:
    if not changes:
        return [empty]
    md = [
        "| severity | what | metric | baseline | candidate | change | interval | evidence |",
        "|---|---|---|---|---|---|---|---|",
    ]
    md.extend(
        f"| {c['severity'] or '-'} | {c['kind']}: {cell(c['label'], 100)} | {c['metric']} "
        f"| {_value(c['baseline'], c['unit'])} | {_value(c['candidate'], c['unit'])} | {_change_text(c)} "
        f"| {_interval_text(c)} | {cell(c['evidence'], 400)} |"
        for c in changes
    )
    return md


def _summary(comparison: dict[str, Any]) -> list[str]:
    s = comparison["summary"]
    worst = worst_severity(comparison)
    verdict = (
        f"**Verdict: slower, worst {worst}.**"
        if worst
        else ("**Verdict: no graded regression.**" if s["change_count"] else "**Verdict: no change beyond the noise.**")
    )
    md = [
        "# Comparison summary",
        "",
        f"Baseline `{comparison['baseline_snapshot_id']}` ->",
        f"candidate `{comparison['candidate_snapshot_id']}`.",
        "",
        (
            f"{s['change_count']} change(s): {s['p0_count']} P0, {s['p1_count']} P1, {s['p2_count']} P2; "
            f"{s['slower']} slower, {s['faster']} faster, {s['new']} new, {s['gone']} gone."
        ),
        "",
        verdict,
        "",
        cell(s["headline"], 600),
    ]
    if s.get("left_out"):
        md += ["", f"{s['left_out']} smaller change(s) left out (options.max_changes)."]
    return md


def _thresholds(options: dict[str, Any]) -> list[str]:
    md = [
        "",
        "# Thresholds used",
        "",
        (
            f"A change counts when it clears both the relative and the absolute step of a level; "
            f"intervals at {options['confidence']:.0%} confidence must not overlap where both sides have them; "
            f"percentiles, error rates and row counts need {options['min_samples']} sample(s) per side."
        ),
        "",
        "| metric | unit | " + " | ".join(LEVELS) + " |",
        "|---|---|" + "---|" * len(LEVELS),
    ]
    for metric, rule in options["rules"].items():
        steps = " | ".join(f"+{rule[lv]['relative']:.0%} and {rule[lv]['absolute']:,g}" for lv in LEVELS)
        md.append(f"| {metric} | {rule['unit']} | {steps} |")
    return md


def render(comparison: dict[str, Any], charts: dict[str, str] | None = None) -> RenderedReport:
    charts = dict(charts or {})
    rid = report_id(comparison)
    changes = comparison["changes"]
    md = _summary(comparison)
    if charts:
        md += ["", *(f"![{cell(name, 200)}]({name})" for name in sorted(charts))]
    md += _thresholds(comparison["options"])
    sections = (
        ("Slower", ("slower",), "Nothing got slower."),
        ("Faster", ("faster",), "Nothing got faster."),
        ("New and gone", ("new", "gone"), "No endpoint, query class or function appeared or vanished."),
    )
    for title, directions, empty in sections:
        md += ["", f"# {title}", "", *_table([c for c in changes if c["direction"] in directions], empty)]
    s = comparison["summary"]
    md += [
        "",
        "# Unchanged",
        "",
        (
            f"{comparison['unchanged_count']} metric(s) compared without a change beyond the noise; "
            f"{s.get('not_compared', 0)} not compared (too few samples). Report `{rid}`."
        ),
    ]
    report = {"report_id": rid, **comparison, "charts": sorted(charts)}
    return RenderedReport(rid, "\n".join(md) + "\n", report, charts)
