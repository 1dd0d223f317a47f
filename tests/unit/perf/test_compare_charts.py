"""Pairing two runs' SPX profiles for differential flame graphs, and merging one endpoint's profiles."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from shared.perf.analysis.compare import compare
from shared.perf.analysis.compare_charts import (
    DIFF_FLAMES,
    PROFILES_PER_SIDE,
    flame_pairs,
    mean_stacks,
    merged_pair,
    render_report,
)
from tests.unit.perf.compare_fixtures import TIMINGS, snapshot


def profile(key: str, endpoint: str | None, wall_ms: float, command: str | None = None) -> dict[str, Any]:
    return {"key": key, "endpoint": endpoint, "command": command, "wall_ms": wall_ms}


def test_mean_stacks_is_the_mean_per_profile_and_skips_malformed_lines() -> None:
    first = "main;a 100\nmain;b 40\nbroken line\nmain;c nan\n"
    second = "main;a 300\nmain;d 10\n"
    merged = dict(line.rsplit(" ", 1) for line in mean_stacks([first, second]).splitlines())
    assert merged == {"main;a": "200", "main;b": "20", "main;d": "5"}
    assert mean_stacks([]) == ""
    assert mean_stacks([first]) == "main;a 100\nmain;b 40\n"


def test_profiles_pair_by_endpoint_or_command_biggest_move_first() -> None:
    baseline = {
        "profiles": [
            profile("b1", "GET /a", 100),
            profile("b2", "GET /a", 300),
            profile("b3", "GET /b", 50),
            profile("b4", None, 1000, "php cron.php"),
            profile("b5", "GET /only-before", 10),
        ]
    }
    candidate = {
        "profiles": [
            profile("c1", "GET /a", 250),
            profile("c2", "GET /b", 500),
            profile("c3", None, 1010, "php cron.php"),
            profile("c4", "GET /only-after", 10),
        ]
    }
    pairs = flame_pairs(baseline, candidate)
    assert [p.label for p in pairs] == ["GET /b", "GET /a", "php cron.php"]  # moved 450, 50, 10 ms
    by_label = {p.label: p for p in pairs}
    assert by_label["GET /a"].baseline_keys == ["b1", "b2"]
    assert by_label["GET /a"].baseline_wall_ms == 200
    assert by_label["GET /a"].candidate_keys == ["c1"]


def test_pairs_and_profiles_per_side_are_capped() -> None:
    many = 3 * PROFILES_PER_SIDE
    baseline = {"profiles": [profile(f"b{i:03}", f"GET /{i % 5}", 10 + i) for i in range(many * 5)]}
    candidate = {"profiles": [profile(f"c{i:03}", f"GET /{i % 5}", 20 + i) for i in range(many * 5)]}
    pairs = flame_pairs(baseline, candidate)
    assert len(pairs) == DIFF_FLAMES
    assert all(len(p.baseline_keys) == len(p.candidate_keys) == PROFILES_PER_SIDE for p in pairs)


def test_report_draws_one_differential_flame_graph_per_pair_with_stacks_on_both_sides() -> None:
    baseline = {"profiles": [profile("b1", "GET /a", 100), profile("b2", "GET /b", 100)]}
    candidate = {"profiles": [profile("c1", "GET /a", 200), profile("c2", "GET /b", 150)]}
    pairs = flame_pairs(baseline, candidate)
    flames_before = {"b1": "main;slow 100\n", "b2": "main;x 100\n"}
    flames_after = {"c1": "main;slow 200\n"}  # GET /b has no stacks after: no graph for it
    merged = [merged_pair(p, flames_before, flames_after) for p in pairs]
    timings = snapshot([TIMINGS])
    comparison = compare(timings, timings)
    rendered = render_report(comparison, merged)
    rid = rendered.report_id
    assert sorted(rendered.charts) == [f"report_{rid}_diff.svg", f"report_{rid}_diff_flame_1.svg"]
    svg = ET.fromstring(rendered.charts[f"report_{rid}_diff_flame_1.svg"])
    assert any("GET /a" in (t.text or "") for t in svg.iter("{http://www.w3.org/2000/svg}text"))
