"""The top-offenders chart: labels name the request (method and path), and no threshold line or label covers text.

Geometry is read back from the SVG the chart writes, with the chart's own text-width estimate
(svg.text_width: 7 px a character at 11 px, 6 px at 9 px).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from shared.perf.__main__ import _local_artifacts
from shared.perf.analysis.ranking import analyze
from shared.perf.analysis.report import render
from shared.perf.analysis.svg import fit_subject, offenders_chart, text_width
from tests.unit.perf.svg_geometry import crossings as _crossings
from tests.unit.perf.svg_geometry import texts as _texts

SPX = Path(__file__).parents[2] / "fixtures" / "spx"
HTTP_GET = "spx-full-20261122_030653-vm-31191-1804289383"


@cache
def _report_chart() -> str:
    files = [SPX / f"{HTTP_GET}.json", SPX / f"{HTTP_GET}.txt.gz"]
    from shared.perf.parsers.snapshot import build

    built, _ = build(_local_artifacts(files))
    thresholds = {"span_self_ms": {"P0": 400, "P1": 200, "P2": 100}, "span_total_ms": {"P0": 400, "P1": 160, "P2": 120}}
    rendered = render(
        built.content, analyze(built.content, built.snapshot_id, thresholds=thresholds), built.flamegraphs
    )
    return next(svg for name, svg in rendered.charts.items() if name.endswith("_top.svg"))


def test_span_labels_name_the_endpoint_not_the_profile_key() -> None:
    labels = [t[4] for t in _texts(_report_chart())]
    assert not [label for label in labels if "spx-full" in label]
    assert any(label.endswith("(GET /tag/blue)") for label in labels)


def test_a_long_function_name_is_cut_in_the_middle_and_keeps_its_request() -> None:
    label = (
        "App\\Infrastructure\\Persistence\\Doctrine\\Repository\\ProductRepository::findByTagAndCategory"
        " (GET /tag/blue)"
    )
    fitted = fit_subject(label, 420)
    assert fitted.endswith("::findByTagAndCategory (GET /tag/blue)")
    assert text_width(fitted, 11) <= 420
    assert ".." in fitted


def _chart(values: list[float], levels: dict[str, int]) -> str:
    items: list[dict[str, Any]] = [{"subject": f"f{i}", "value_ms": v, "severity": None} for i, v in enumerate(values)]
    return offenders_chart({"span_self_ms": items}, {"span_self_ms": levels}, ["span_self_ms"])


def test_no_threshold_line_crosses_a_value_label() -> None:
    levels = {"P0": 800, "P1": 300, "P2": 100}
    # Bars ending just short of each line, so each value label starts right before a line.
    assert _crossings(_chart([95.0, 290.0, 780.0, 99.0, 60.0], levels)) == []


def test_threshold_labels_close_together_do_not_overlap() -> None:
    assert _crossings(_chart([3_600_000.0, 20.0], {"P0": 10000, "P1": 3000, "P2": 1000})) == []


def test_the_report_chart_has_no_crossing() -> None:
    assert _crossings(_report_chart()) == []


def test_statements_are_cut_at_their_end_not_in_the_middle() -> None:
    fp = "alter table orders add index idx_customer_placed_status_and_channel (customer_id, placed_at, status)"
    chart = offenders_chart(
        {"query_total_time_ms": [{"subject": fp, "value_ms": 14030.0, "severity": "P0"}]},
        {"query_total_time_ms": {"P0": 10000, "P1": 3000, "P2": 1000}},
        ["query_total_time_ms"],
    )
    [label] = [t[4] for t in _texts(chart) if t[4].startswith("alter")]
    assert label.startswith("alter table orders add index")
