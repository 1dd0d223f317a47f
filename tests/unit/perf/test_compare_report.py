"""compare_report.render: fixed sections, deterministic id, hostile names kept inside their table cell."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from shared.perf.analysis.compare import compare
from shared.perf.analysis.compare_report import render
from tests.unit.perf.compare_fixtures import SMALL_LOG, TIMINGS, snapshot, timings_scaled

HOSTILE = "select `x` | from t where a = '|' \n| -- ![img](http://evil) \\| end"
SECTIONS = ("# Comparison summary", "# Thresholds used", "# Slower", "# Faster", "# New and gone", "# Unchanged")


def query(fp: str, total_ms: float, count: int) -> dict[str, Any]:
    """A query class as the snapshot holds it, its executions all in one histogram bucket."""
    per = total_ms / count
    return {
        "query_id": "q",
        "fingerprint": fp,
        "count": count,
        "total_time_ms": total_ms,
        "avg_ms": per,
        "p95_ms": per,
        "max_ms": per,
        "lock_time_ms": 0.0,
        "rows_examined_avg": 1.0,
        "rows_sent_avg": 1.0,
        "share_of_time": 1.0,
        "databases": {},
        "users": {},
        "first_seen": None,
        "last_seen": None,
        "worst_sample": {"query": fp, "query_time_ms": per},
        "truncated_statements": 0,
        "query_time_histogram": [[per, count]],
    }


def snap(*queries: dict[str, Any]) -> dict[str, Any]:
    return {"schema": "firebreak-perf-snapshot-v1", "inputs": [], "endpoints": [], "queries": list(queries)}


def table_rows(markdown: str, section: str) -> list[str]:
    body = markdown.split(f"# {section}\n", 1)[1].split("\n# ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| ") and not line.startswith("| severity")]


def unescaped_pipes(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row.replace("\\\\", "")))


def test_hostile_fingerprints_stay_in_their_cell() -> None:
    comparison = compare(snap(query(HOSTILE, 1000.0, 100)), snap(query(HOSTILE, 5000.0, 100)))
    slower = [c for c in comparison["changes"] if c["key"] == HOSTILE]
    assert slower  # the class got 5x slower per execution
    rendered = render(comparison)
    rows = table_rows(rendered.markdown, "Slower")
    assert len(rows) == len(slower)
    columns = rendered.markdown.split("# Slower\n", 1)[1].split("\n")[2].count("|")  # the header's separators
    for row in rows:
        assert "\n" not in row
        assert unescaped_pipes(row) == columns
        assert "\\|" in row
    assert rendered.report["changes"][0]["key"] == HOSTILE  # the JSON keeps the name as it was


def test_sections_id_and_charts(tmp_path: Path) -> None:
    baseline = snapshot([TIMINGS, SMALL_LOG])
    comparison = compare(baseline, snapshot([timings_scaled(tmp_path, "/checkout", 1.5), SMALL_LOG]))
    charts = {"comparison_bars.svg": "<svg/>"}
    rendered = render(comparison, charts)
    positions = [
        rendered.markdown.index(f"\n{s}\n") if i else rendered.markdown.index(s) for i, s in enumerate(SECTIONS)
    ]
    assert positions == sorted(positions)
    assert "![comparison_bars.svg](comparison_bars.svg)" in rendered.markdown
    assert rendered.charts == charts
    assert rendered.report["charts"] == ["comparison_bars.svg"]
    assert len(rendered.report_id) == 16
    assert int(rendered.report_id, 16) >= 0
    assert render(comparison, charts).markdown == rendered.markdown  # deterministic
    assert len(table_rows(rendered.markdown, "Slower")) == comparison["summary"]["slower"] > 0
    assert comparison["summary"]["headline"].split(":")[0] in rendered.markdown
    same = render(compare(baseline, baseline))
    assert same.report_id != rendered.report_id
    assert "Nothing got slower." in same.markdown


def test_markup_in_names_is_inert_in_the_markdown() -> None:
    # A name from an uploaded file must not become HTML, a link or a remote image in whoever renders the report.
    fp = "select a <script>alert(1)</script> ![i](http://evil/x.png) [l](javascript:x) <img src=x> \x00\x1b\x7f b"
    comparison = compare(snap(query(fp, 1000.0, 100)), snap(query(fp, 5000.0, 100)))
    assert comparison["changes"]
    markdown = render(comparison).markdown
    for markup in ("<script>", "<img", "\x00", "\x1b", "\x7f"):
        assert markup not in markdown
    links = re.findall(r"(?<!\\)\]\(", markdown)  # "](" closes a link or image unless its "]" is escaped
    assert len(links) == len(render(comparison).charts)  # only the charts' own images (none here)
    assert "&lt;script&gt;" in markdown
    assert "!\\[i\\]" in markdown
