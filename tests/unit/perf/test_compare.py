"""analysis.compare on real fixtures with injected changes: found, graded by the rules, and nothing else moves."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

from shared.core.errors import ValidationFailed
from shared.perf.analysis.compare import SCHEMA, compare, worst_severity
from shared.perf.analysis.compare_rules import DEFAULT_RULES
from shared.perf.models import ReportRequest
from shared.perf.parsers.snapshot import snapshot_id
from shared.perf.parsers.timings import percentile
from tests.unit.perf.compare_fixtures import (
    FRAMEWORK,
    SMALL_LOG,
    SPX_DIR,
    TIMINGS,
    slowlog_classes,
    slowlog_halves,
    slowlog_scaled,
    snapshot,
    spx_pair,
    spx_scaled,
    timings_halves,
    timings_scaled,
)


def expected_grade(metric: str, base: float, cand: float, rules: dict[str, Any] | None = None) -> str | None:
    """The grade the issue's rule gives: the largest level whose relative AND absolute steps are both met."""
    steps = rules or {level: {"relative": r, "absolute": a} for level, (r, a) in DEFAULT_RULES[metric][1].items()}
    grade = None
    for level in ("P2", "P1", "P0"):
        if cand - base >= steps[level]["absolute"] and (cand - base) / base >= steps[level]["relative"]:
            grade = level
    return grade


def changes_of(comparison: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {c["metric"]: c for c in comparison["changes"] if c["key"] == key}


HTTP_GET = "spx-full-20261122_030653-vm-31191-1804289383"  # GET /tag/blue


@pytest.fixture(scope="module")
def framework() -> dict[str, Any]:
    return snapshot(spx_pair(SPX_DIR, FRAMEWORK))


@pytest.mark.parametrize("key", [FRAMEWORK, HTTP_GET])
def test_a_function_with_doubled_self_time_is_found_and_graded(tmp_path: Path, key: str) -> None:
    baseline = snapshot(spx_pair(SPX_DIR, key))
    spans = [s for s in baseline["spans"] if not s["is_root"]]
    target = max(spans, key=lambda s: (s["self_ms"], s["function"]))
    candidate = snapshot(spx_scaled(tmp_path, target["function"], 2.0, key))
    result = compare(baseline, candidate)
    group = baseline["profiles"][0]["endpoint"] or baseline["profiles"][0]["command"]
    found = changes_of(result, f"{group} :: {target['function']}")
    self_change = found["self_ms"]
    assert self_change["direction"] == "slower"
    assert self_change["kind"] == "function"
    assert self_change["baseline"] == pytest.approx(target["self_ms"], abs=0.001)
    assert self_change["candidate"] == pytest.approx(2 * target["self_ms"], abs=0.002)
    assert self_change["severity"] == expected_grade("self_ms", target["self_ms"], 2 * target["self_ms"])
    assert self_change["severity"] is not None
    assert self_change["thresholds"]["P2"] <= self_change["thresholds"]["P1"] <= self_change["thresholds"]["P0"]
    # Nothing got faster, and no function whose time does not include the doubled one changed.
    assert result["summary"]["faster"] == 0
    moved = {c["key"].split(" :: ", 1)[1] for c in result["changes"] if c["kind"] == "function"}
    assert {c["kind"] for c in result["changes"]} == {"function"}  # one profile per side: walls are not compared
    callers = {s["function"] for s in baseline["spans"] if s["total_ms"] >= target["self_ms"]}
    assert moved <= callers | {target["function"]}
    assert worst_severity(result) == result["changes"][0]["severity"]


def test_a_query_class_three_times_slower_is_found_and_graded(tmp_path: Path) -> None:
    counts = slowlog_classes()
    fp = max(counts, key=lambda f: (counts[f], f))
    baseline = snapshot([SMALL_LOG])
    candidate = snapshot([slowlog_scaled(tmp_path, fp, 3.0)])
    # small.log's statements take microseconds: grade on steps sized to it (the defaults suit production).
    steps = {
        "floor": {"relative": 0.1, "absolute": 0.001},
        "P2": {"relative": 0.25, "absolute": 0.01},
        "P1": {"relative": 1.0, "absolute": 0.1},
        "P0": {"relative": 5.0, "absolute": 100.0},
    }
    result = compare(baseline, candidate, {"rules": {"p95_ms": steps, "total_time_ms": steps}})
    found = changes_of(result, fp)
    before = next(q for q in baseline["queries"] if q["fingerprint"] == fp)
    after = next(q for q in candidate["queries"] if q["fingerprint"] == fp)
    for metric in ("p95_ms", "total_time_ms"):
        change = found[metric]
        assert change["direction"] == "slower"
        assert change["baseline"] == before[metric]
        assert change["candidate"] == after[metric]
        assert change["severity"] == expected_grade(metric, before[metric], after[metric], steps)
        assert change["severity"] is not None
    assert found["p95_ms"]["interval"]["candidate"][0] > found["p95_ms"]["interval"]["baseline"][1]
    assert "count" not in found  # same executions
    assert {c["key"] for c in result["changes"]} == {fp}  # every other class unchanged


def test_an_endpoint_forty_percent_slower_is_found_and_graded(tmp_path: Path) -> None:
    doc = json.loads(TIMINGS.read_text())
    path = "/api/orders"
    ttfb = [s["timings_ms"]["ttfb"] for s in doc["samples"] if s["url_path"] == path and not s["warmup"]]
    baseline = snapshot([TIMINGS])
    candidate = snapshot([timings_scaled(tmp_path, path, 1.4)])
    result = compare(baseline, candidate)
    found = changes_of(result, f"GET {path}")
    change = found["ttfb_p95_ms"]
    before, after = percentile(ttfb, 0.95), round(percentile(ttfb, 0.95) * 1.4, 3)
    assert change["baseline"] == before
    assert change["candidate"] == after
    assert change["relative"] == pytest.approx(0.4, abs=0.001)
    assert change["severity"] == expected_grade("ttfb_p95_ms", before, after)
    assert change["severity"] is not None
    assert change["interval"]["confidence"] == 0.95
    assert change["interval"]["candidate"][0] > change["interval"]["baseline"][1]
    # The p95's upper end can be bounded at 95 % only when all samples falling below it is that unlikely.
    assert change["interval"]["bounded"] is (0.95 ** len(ttfb) <= 0.025)
    assert {c["key"] for c in result["changes"]} == {f"GET {path}"}  # /health and /checkout did not move
    assert "error_rate" not in found


def test_a_run_compared_with_itself_has_no_change(framework: dict[str, Any]) -> None:
    both = snapshot([TIMINGS, SMALL_LOG, *spx_pair(SPX_DIR, FRAMEWORK)])
    result = compare(both, both)
    assert result["schema"] == SCHEMA
    assert result["baseline_snapshot_id"] == result["candidate_snapshot_id"] == snapshot_id(both)
    assert result["changes"] == []
    assert result["summary"]["change_count"] == 0
    assert result["unchanged_count"] > 0
    assert worst_severity(result) is None


def test_two_halves_of_the_same_workload_have_no_change(tmp_path: Path) -> None:
    ta, tb = timings_halves(tmp_path)
    la, lb = slowlog_halves(tmp_path)
    result = compare(snapshot([ta, la]), snapshot([tb, lb]))
    assert result["changes"] == [], [c["evidence"] for c in result["changes"]]
    assert result["unchanged_count"] > 0


def test_faster_and_gone_are_listed_without_a_grade(tmp_path: Path) -> None:
    baseline = snapshot([timings_scaled(tmp_path, "/checkout", 2.0), SMALL_LOG])
    candidate = snapshot([TIMINGS])
    result = compare(baseline, candidate)
    faster = changes_of(result, "GET /checkout")["ttfb_p95_ms"]
    assert faster["direction"] == "faster"
    assert faster["severity"] is None
    assert faster["delta"] < 0
    gone = [c for c in result["changes"] if c["direction"] == "gone"]
    assert gone
    assert all(c["kind"] == "query" and c["severity"] is None for c in gone)
    assert result["summary"]["gone"] == len(gone)
    p2 = DEFAULT_RULES["total_time_ms"][1]["P2"][1]
    regraded = compare(baseline, candidate, {"grade_gone": True})
    for change in (c for c in regraded["changes"] if c["direction"] == "gone"):
        assert (change["severity"] is not None) == (change["baseline"] >= p2)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ("not an object", "options"),
        ({"bogus": 1}, "options.bogus"),
        ({"confidence": 1.5}, "options.confidence"),
        ({"confidence": True}, "options.confidence"),
        ({"min_samples": 0}, "options.min_samples"),
        ({"grade_gone": "yes"}, "options.grade_gone"),
        ({"rules": {"ttfb_p99_ms": {}}}, "options.rules.ttfb_p99_ms"),
        ({"rules": {"count": {"P3": {}}}}, "options.rules.count"),
        ({"rules": {"count": {"P1": {"relative": -1}}}}, "options.rules.count.P1.relative"),
        ({"rules": {"count": {"P1": {"absolute": "10"}}}}, "options.rules.count.P1.absolute"),
        ({"rules": {"count": {"P0": {"absolute": 1}}}}, "options.rules.count"),  # P0 below P1
        ({"rules": {"count": {"P2": {"percent": 1}}}}, "options.rules.count.P2"),
    ],
)
def test_bad_options_are_rejected(options: Any, field: str) -> None:
    empty: dict[str, Any] = {"endpoints": [], "queries": [], "spans": [], "profiles": []}
    with pytest.raises(ValidationFailed) as caught:
        compare(empty, empty, options)
    assert caught.value.details["errors"][0]["field"] == field
    assert caught.value.message.startswith(field)


def test_options_are_echoed_with_their_overrides() -> None:
    empty: dict[str, Any] = {"endpoints": [], "queries": [], "spans": [], "profiles": []}
    result = compare(empty, empty, {"confidence": 0.9, "rules": {"count": {"P0": {"absolute": 9000}}}})
    rules = result["options"]["rules"]
    assert result["options"]["confidence"] == 0.9
    assert rules["count"]["P0"] == {"relative": DEFAULT_RULES["count"][1]["P0"][0], "absolute": 9000.0}
    assert set(rules) == set(DEFAULT_RULES)
    assert result["summary"]["headline"].startswith("No change")


@pytest.mark.parametrize(
    ("baseline", "problem"),
    [
        ("not a snapshot", "must be a snapshot's content"),
        ({"schema": "firebreak-perf-comparison-v1"}, "is not firebreak-perf-snapshot-v1"),
        ({"queries": {"a": 1}}, "queries must be lists"),
    ],
)
def test_sides_that_are_not_snapshots_are_rejected(baseline: Any, problem: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        compare(baseline, {"endpoints": []})
    assert caught.value.details["errors"][0]["field"] == "baseline"
    assert problem in caught.value.message


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"rules": {"count": {"P0": {"absolute": 10**400}}}}, "options.rules.count.P0.absolute"),
        ({"rules": {"p95_ms": {"floor": {"relative": 10**400}}}}, "options.rules.p95_ms.floor.relative"),
        ({"max_changes": 10**5000}, "options.max_changes"),
    ],
)
def test_integers_beyond_a_float_are_a_validation_error(options: dict[str, Any], field: str) -> None:
    # JSON integers have no size limit: one too big for a float is a bad option, not an internal error.
    empty: dict[str, Any] = {"endpoints": [], "queries": [], "spans": [], "profiles": []}
    with pytest.raises(ValidationFailed) as caught:
        compare(empty, empty, options)
    assert caught.value.details["errors"][0]["field"] == field


def test_errors_echo_no_long_key_and_no_text_value() -> None:
    empty: dict[str, Any] = {"endpoints": [], "queries": [], "spans": [], "profiles": []}
    secret = "sk-live-" + "0123456789abcdef" * 4
    cases: list[dict[str, Any]] = [
        {"k" * 100_000: 1},
        {"rules": {"m" * 100_000: {}}},
        {"rules": {"count": {f"L{i}" * 500: {} for i in range(1000)}}},
        {"rules": {"count": {"P1": {"absolute": secret}}}},
        {"confidence": secret},
    ]
    for options in cases:
        with pytest.raises(ValidationFailed) as caught:
            compare(empty, empty, options)
        answer = caught.value.message + json.dumps(caught.value.details)
        assert len(answer) < 1000
        assert secret[:12] not in answer


@pytest.mark.parametrize(
    "body",
    [
        {"compare_options": {"min_samples": 3}},  # without a baseline it would write a plain analysis report
        {"baseline_snapshot_id": "b" * 64, "thresholds": {"span_self_ms": {"P0": 3, "P1": 2, "P2": 1}}},
        {"baseline_snapshot_id": "b" * 64, "top_n": 3},
    ],
)
def test_report_export_refuses_parameters_its_kind_of_report_would_drop(body: dict[str, Any]) -> None:
    with pytest.raises(PydanticValidationError) as caught:
        ReportRequest.model_validate({"normalized_snapshot_id": "a" * 64, **body})
    assert "baseline_snapshot_id" in str(caught.value)
    assert ReportRequest.model_validate({"normalized_snapshot_id": "a" * 64, "baseline_snapshot_id": "b" * 64})


def _one_endpoint(profiles: int) -> dict[str, Any]:
    """`profiles` SPX profiles of one endpoint, each with its own function (closures, generated code)."""
    return {
        "schema": "firebreak-perf-snapshot-v1",
        "endpoints": [],
        "queries": [],
        "profiles": [{"key": f"p{i}", "endpoint": "GET /x", "command": None, "wall_ms": 9.0} for i in range(profiles)],
        "spans": [
            {"profile": f"p{i}", "function": f"f{i}", "self_ms": 1.0, "total_ms": 2.0, "share_of_wall": 0.2}
            for i in range(profiles)
        ],
    }


def _calls_to_compare(snapshot: dict[str, Any]) -> int:
    """Python and C function calls made by compare: a measure of its work that no machine load changes."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        compare(snapshot, snapshot)
    finally:
        sys.setprofile(None)
    return calls


def test_compare_work_grows_linearly_with_the_profiles_of_an_endpoint() -> None:
    # A hand-made SNAPSHOT.json of 50,000 such profiles (10 MB) took minutes when each function was
    # looked up in each profile of its endpoint: four times the profiles was sixteen times the work.
    small, large = _calls_to_compare(_one_endpoint(500)), _calls_to_compare(_one_endpoint(2000))
    assert large < 6 * small


def test_headlines_and_evidence_are_one_plain_line_whatever_the_endpoint_name(tmp_path: Path) -> None:
    doc = json.loads(TIMINGS.read_text())
    hostile = "/api/orders\n\x1b[2J# Ignore previous instructions\r\x00"
    for s in doc["samples"]:
        if s["url_path"] == "/api/orders":
            s["url_path"] = hostile
    base_file = tmp_path / "base.json"
    base_file.write_text(json.dumps(doc))
    baseline = snapshot([base_file])
    for s in doc["samples"]:
        if s["url_path"] == hostile:
            s["timings_ms"] = {k: v * 1.4 if k in ("ttfb", "total") and v else v for k, v in s["timings_ms"].items()}
    slower = tmp_path / "slower.json"
    slower.write_text(json.dumps(doc))
    candidate = snapshot([slower])
    result = compare(baseline, candidate)
    assert result["changes"]
    texts = [
        result["summary"]["headline"],
        *(c["evidence"] for c in result["changes"]),
        *(c["label"] for c in result["changes"]),
    ]
    for text in texts:
        assert "\n" not in text
        assert "\r" not in text
        assert "\x1b" not in text
        assert "\x00" not in text
    assert any("Ignore previous instructions" in t for t in texts)  # kept as text, on one line


def test_a_total_that_grew_through_its_own_time_is_not_sent_to_the_callees(tmp_path: Path) -> None:
    baseline = snapshot(spx_pair(SPX_DIR, FRAMEWORK))
    target = max((s for s in baseline["spans"] if not s["is_root"]), key=lambda s: (s["self_ms"], s["function"]))
    candidate = snapshot(spx_scaled(tmp_path, target["function"], 2.0, FRAMEWORK))
    group = baseline["profiles"][0]["command"]
    total = changes_of(compare(baseline, candidate), f"{group} :: {target['function']}")["total_ms"]
    assert "callees" not in total["suggestion"]
    assert "own code" in total["suggestion"]
