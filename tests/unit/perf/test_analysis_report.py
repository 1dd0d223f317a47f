"""analysis.run's grading rules and the report renderer, on small hand-made snapshots."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import pytest

from shared.core.errors import ValidationFailed
from shared.perf.analysis.ranking import analyze
from shared.perf.analysis.report import render
from shared.perf.analysis.svg import flame_graph, offenders_chart

SID = "a" * 64


def span(
    fn: str, self_ms: float, total_ms: float, callees: Sequence[tuple[str, float]] = (), root: bool = False
) -> dict:
    return {
        "span_id": fn,
        "profile": "p1",
        "function": fn,
        "calls": 1,
        "self_ms": self_ms,
        "total_ms": total_ms,
        "max_recursion": 0,
        "is_root": root,
        "share_of_wall": 0.5,
        "top_callees": [{"function": c, "total_ms": t} for c, t in callees],
        "metrics": {},
    }


def query(fp: str, total: float, count: int = 10, examined: float = 10, sent: float = 1, lock: float = 0) -> dict:
    return {
        "query_id": fp[:16],
        "fingerprint": fp,
        "count": count,
        "total_time_ms": total,
        "avg_ms": total / count,
        "p95_ms": total / count,
        "max_ms": total / count,
        "lock_time_ms": lock,
        "rows_examined_avg": examined,
        "rows_sent_avg": sent,
        "share_of_time": 0.1,
        "databases": {},
        "users": {},
        "worst_sample": {"query": fp, "query_time_ms": 1},
    }


def snapshot(**parts: list) -> dict:
    return {
        "endpoints": parts.get("endpoints", []),
        "queries": parts.get("queries", []),
        "spans": parts.get("spans", []),
        "profiles": parts.get("profiles", []),
    }


def test_grades_by_threshold_and_explains_how_far_over() -> None:
    a = analyze(
        snapshot(
            queries=[
                query("select * from orders where customer_id = ?", 12000, examined=50000, sent=2),
                query("select ?", 900),
            ]
        ),
        SID,
    )
    [f] = a["findings"]
    assert (f["severity"], f["threshold_ms"], f["over_by_ms"], f["over_by_pct"]) == ("P0", 10000, 2000.0, 20.0)
    assert "EXPLAIN" in f["suggestion"]
    assert "index" in f["suggestion"]
    assert "50,000" in f["suggestion"]
    assert a["findings_by_severity"] == {"P0": [{"id": f["id"], "title": f["title"]}], "P1": [], "P2": []}
    assert [i["subject"] for i in a["aggregates"]["query_total_time_ms"]] == [
        "select * from orders where customer_id = ?",
        "select ?",
    ]


def test_suggestions_name_the_pattern() -> None:
    a = analyze(
        snapshot(
            queries=[
                query("select name from tags where id = ?", 5000, count=4000),
                query("alter table t add index i (c)", 4000),
                query("update stock set n = n - ? where id = ?", 3500, lock=2000),
            ]
        ),
        SID,
    )
    by = {f["subject"]: f["suggestion"] for f in a["findings"]}
    assert "N+1" in by["select name from tags where id = ?"]
    assert "schema change" in by["alter table t add index i (c)"]
    assert "lock wait" in by["update stock set n = n - ? where id = ?"]


def test_replication_streams_and_pass_through_wrappers_are_not_ranked() -> None:
    a = analyze(
        snapshot(
            queries=[query("administrator command: binlog dump gtid", 3_600_000)],
            spans=[
                span("main.php", 1, 2000, [("Kernel::handle", 1990)], root=True),
                span("Kernel::handle", 1, 1990, [("Pipeline::run", 1985)]),
                span("Pipeline::run", 5, 1985, [("Repo::select", 1200), ("View::render", 780)]),
                span("Repo::select", 1200, 1200),
            ],
        ),
        SID,
    )
    totals = [f["subject"] for f in a["findings"] if f["metric"] == "span_total_ms"]
    assert totals == ["Pipeline::run (p1)", "Repo::select (p1)"]  # not main.php (root), not Kernel::handle (wrapper)
    assert not any(f["metric"] == "query_total_time_ms" for f in a["findings"])
    assert a["aggregates"]["totals"]["replication_stream_ms"] == 3_600_000


def test_top_n_is_clamped_and_defaults_ask_questions() -> None:
    spans = [span(f"f{i}", 150 + i, 150 + i) for i in range(30)]
    assert analyze(snapshot(spans=spans), SID, top_n=0)["summary"]["top_n"] == 1
    a = analyze(snapshot(spans=spans), SID, top_n=99)
    assert a["summary"]["top_n"] == 20
    assert len(a["aggregates"]["span_self_ms"]) == 20
    assert len(a["open_questions"]) == 5
    with pytest.raises(ValidationFailed):
        analyze(snapshot(spans=spans), SID, top_n="5")


def test_same_input_same_report_id_and_bytes_and_sections_without_findings() -> None:
    snap = snapshot(queries=[query("select ?", 10)])
    a1, a2 = analyze(snap, SID), analyze(snap, SID)
    r1, r2 = render(snap, a1, {}), render(snap, a2, {})
    assert r1.report_id == r2.report_id
    assert r1.markdown == r2.markdown
    assert r1.charts == r2.charts
    assert a1["summary"]["finding_count"] == 0
    for section in ("# Executive Summary", "# Thresholds Used", "# Observations"):
        assert section in r1.markdown
    r3 = render(snap, analyze(snap, SID, thresholds={"query_total_time_ms": {"P0": 3, "P1": 2, "P2": 1}}), {})
    assert r3.report_id != r1.report_id


def test_svgs_are_well_formed_and_escape_names() -> None:
    stacks = "main;A<b>&c;leaf 700\nmain;A<b>&c 200\nmain;other 100\n"
    svg = flame_graph(stacks, "t & <title>")
    root = ET.fromstring(svg)
    rects = list(root.iter("{http://www.w3.org/2000/svg}rect"))[1:]
    widths = sorted(float(r.get("width", "nan")) for r in rects)
    assert widths == pytest.approx(
        [118.0, 826.0, 1062.0, 1180.0]
    )  # of 1000: other 100, leaf 700, A 900 (leaf + 200 self), main all
    titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any(t.startswith("A<b>&c: 0.001 ms (90.0%)") for t in titles)
    chart = offenders_chart(
        {"span_self_ms": [{"subject": "x<y", "value_ms": 900.0, "severity": "P0"}]},
        {"span_self_ms": {"P0": 800, "P1": 300, "P2": 100}},
        ["span_self_ms", "span_total_ms"],
    )
    assert ET.fromstring(chart).tag.endswith("svg")
    assert "x&lt;y" in chart
    ET.fromstring(offenders_chart({}, {}, ["span_self_ms"]))


def test_flame_graph_with_xml_forbidden_characters_in_a_name_is_still_well_formed() -> None:
    import xml.etree.ElementTree as ET

    from shared.perf.analysis.svg import flame_graph

    svg = flame_graph("main;evil\x00name\x1b[31m;leaf 100\nmain 5\n", "title \x07")
    root = ET.fromstring(svg)
    titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("evil\ufffdname\ufffd[31m" in t for t in titles)


def test_markup_in_subjects_is_inert_in_the_markdown() -> None:
    # A fingerprint from an uploaded slow log must not become HTML, a link or a remote image in the report.
    fp = "select <script>alert(1)</script> ![i](http://evil/x.png) <img src=x> \x00\x1b from t"
    r = render(snapshot(queries=[query(fp, 9000.0)]), analyze(snapshot(queries=[query(fp, 9000.0)]), "s" * 64), {})
    assert "&lt;script&gt;" in r.markdown
    outside_code = re.sub(
        r"^(`{3,})sql\n.*?^\1$", "", r.markdown, flags=re.DOTALL | re.MULTILINE
    )  # the worst sample's block
    for markup in ("<script>", "<img", "\x00", "\x1b"):
        assert markup not in outside_code
    assert not re.findall(r"(?<!\\)\]\(http://evil", outside_code)  # "](" opens a link unless "]" is escaped


def test_a_worst_sample_with_backtick_fences_stays_in_its_code_block() -> None:
    sample = "select 1 /* ```\n<script>alert(1)</script>\n```` */"
    q = {**query("select ?", 9000.0), "worst_sample": {"query": sample, "query_time_ms": 1}}
    r = render(snapshot(queries=[q]), analyze(snapshot(queries=[q]), "s" * 64), {})
    [(fence, body)] = re.findall(r"^(`{3,})sql\n(.*?)\n\1$", r.markdown, flags=re.DOTALL | re.MULTILINE)
    assert body == sample
    assert len(fence) == 5
