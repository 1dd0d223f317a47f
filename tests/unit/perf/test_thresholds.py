"""The threshold validation table of analysis.run."""

from __future__ import annotations

import pytest

from shared.core.errors import ValidationFailed
from shared.perf.analysis.thresholds import DEFAULTS, clamp_top_n, resolve, severity


def test_omitted_thresholds_use_conservative_defaults_and_ask() -> None:
    ranking, questions = resolve(None)
    assert ranking["endpoint_ttfb_ms"] == {"P0": 1500, "P1": 800, "P2": 300, "source": "default_conservative"}
    assert set(ranking) == set(DEFAULTS)
    assert len(questions) == 5
    assert (
        questions[0] == 'OPEN_QUESTION: provide params.thresholds.endpoint_ttfb_ms as {"P0":int,"P1":int,"P2":int} '
        "to replace conservative defaults."
    )


def test_overrides_merge_with_defaults_and_ask_nothing() -> None:
    ranking, questions = resolve({"span_self_ms": {"P0": 700, "P1": 280, "P2": 90}})
    assert ranking["span_self_ms"] == {"P0": 700, "P1": 280, "P2": 90, "source": "provided"}
    assert ranking["query_total_time_ms"]["source"] == "default_conservative"
    assert questions == []


def test_spec_example_is_accepted() -> None:
    spec = {
        "endpoint_ttfb_ms": {"P0": 1200, "P1": 700, "P2": 250},
        "endpoint_wall_ms": {"P0": 1800, "P1": 900, "P2": 350},
        "query_total_time_ms": {"P0": 8000, "P1": 2500, "P2": 900},
        "span_self_ms": {"P0": 700, "P1": 280, "P2": 90},
        "span_total_ms": {"P0": 1200, "P1": 600, "P2": 220},
    }
    ranking, questions = resolve(spec)
    assert all(v["source"] == "provided" for v in ranking.values())
    assert questions == []


@pytest.mark.parametrize(
    ("thresholds", "field"),
    [
        ([1, 2], "thresholds"),
        ({"endpoint_latency_ms": {"P0": 3, "P1": 2, "P2": 1}}, "thresholds.endpoint_latency_ms"),
        ({"span_self_ms": 500}, "thresholds.span_self_ms"),
        ({"span_self_ms": {"P0": 500, "P1": 300}}, "thresholds.span_self_ms.P2"),
        ({"span_self_ms": {"P0": 500, "P1": 300, "P2": 0}}, "thresholds.span_self_ms.P2"),
        ({"span_self_ms": {"P0": 500, "P1": -3, "P2": 1}}, "thresholds.span_self_ms.P1"),
        ({"span_self_ms": {"P0": 500.5, "P1": 300, "P2": 100}}, "thresholds.span_self_ms.P0"),
        ({"span_self_ms": {"P0": "500", "P1": 300, "P2": 100}}, "thresholds.span_self_ms.P0"),
        ({"span_self_ms": {"P0": True, "P1": 1, "P2": 1}}, "thresholds.span_self_ms.P0"),
        ({"span_self_ms": {"P0": 100, "P1": 300, "P2": 50}}, "thresholds.span_self_ms"),
        ({"span_self_ms": {"P0": 500, "P1": 300, "P2": 400}}, "thresholds.span_self_ms"),
        ({"span_self_ms": {"P0": 5, "P1": 3, "P2": 1, "P3": 0}}, "thresholds.span_self_ms"),
    ],
)
def test_invalid_thresholds_name_the_field(thresholds, field) -> None:
    with pytest.raises(ValidationFailed) as info:
        resolve(thresholds)
    assert info.value.details["errors"][0]["field"] == field
    assert info.value.recovery_suggestions


def test_equal_levels_are_allowed() -> None:
    assert resolve({"span_self_ms": {"P0": 100, "P1": 100, "P2": 100}})[0]["span_self_ms"]["P2"] == 100


@pytest.mark.parametrize(("value", "expected"), [(None, 5), (0, 1), (-4, 1), (1, 1), (7, 7), (20, 20), (500, 20)])
def test_top_n_is_clamped(value, expected) -> None:
    assert clamp_top_n(value) == expected


@pytest.mark.parametrize("value", ["5", 2.5, True])
def test_top_n_must_be_an_integer(value) -> None:
    with pytest.raises(ValidationFailed):
        clamp_top_n(value)


@pytest.mark.parametrize(
    ("ms", "level"), [(1500, "P0"), (1499, "P1"), (800, "P1"), (300, "P2"), (299.9, None), (0, None)]
)
def test_severity_boundaries(ms, level) -> None:
    assert severity(ms, {"P0": 1500, "P1": 800, "P2": 300}) == level
