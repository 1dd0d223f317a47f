"""Severity thresholds of analysis.run: conservative defaults, caller overrides, and their validation.

Metric keys and defaults are the spec's. Thresholds are milliseconds; a value at or above P0 is a P0
finding, else at or above P1 a P1, else at or above P2 a P2. When the caller sends no thresholds the
defaults apply (source `default_conservative`) and one open question per metric asks for real ones;
when the caller sends any, its metrics override the defaults and no threshold question is asked.
"""

from __future__ import annotations

from typing import Any

from shared.core.errors import ValidationFailed

LEVELS = ("P0", "P1", "P2")
DEFAULTS: dict[str, tuple[int, int, int]] = {
    "endpoint_ttfb_ms": (1500, 800, 300),
    "endpoint_wall_ms": (2000, 1000, 400),
    "query_total_time_ms": (10000, 3000, 1000),
    "span_self_ms": (800, 300, 100),
    "span_total_ms": (1500, 700, 250),
}
TOP_N_DEFAULT, TOP_N_MIN, TOP_N_MAX = 5, 1, 20


def _invalid(field: str, problem: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        f"thresholds.{field}" if field else "thresholds",
        problem,
        suggestions=[
            'Send thresholds as {"<metric>": {"P0": int, "P1": int, "P2": int}} '
            "with positive integers and P0 >= P1 >= P2; metrics: " + ", ".join(DEFAULTS)
        ],
    )


def _levels(metric: str, value: Any) -> tuple[int, int, int]:
    if not isinstance(value, dict):
        raise _invalid(metric, "must be an object {P0, P1, P2}")
    unknown = sorted(set(value) - set(LEVELS))
    if unknown:
        raise _invalid(metric, f"unknown level(s) {', '.join(map(str, unknown))}")
    levels = []
    for level in LEVELS:
        v = value.get(level)
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise _invalid(f"{metric}.{level}", "must be a positive integer (milliseconds)")
        levels.append(v)
    p0, p1, p2 = levels
    if not p0 >= p1 >= p2:
        raise _invalid(metric, f"must satisfy P0 >= P1 >= P2 (got {p0}, {p1}, {p2})")
    return p0, p1, p2


def resolve(thresholds: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(ranking_thresholds with each metric's source, open_questions)."""
    if thresholds is None:
        ranking = {
            m: {**dict(zip(LEVELS, v, strict=False)), "source": "default_conservative"} for m, v in DEFAULTS.items()
        }
        questions = [
            f'OPEN_QUESTION: provide params.thresholds.{m} as {{"P0":int,"P1":int,"P2":int}} '
            "to replace conservative defaults."
            for m in DEFAULTS
        ]
        return ranking, questions
    if not isinstance(thresholds, dict):
        raise _invalid("", "must be an object keyed by metric")
    unknown = sorted(set(thresholds) - set(DEFAULTS))
    if unknown:
        raise _invalid(unknown[0], f"unknown metric; supported: {', '.join(DEFAULTS)}")
    ranking = {}
    for metric, default in DEFAULTS.items():
        if metric in thresholds:
            ranking[metric] = {
                **dict(zip(LEVELS, _levels(metric, thresholds[metric]), strict=False)),
                "source": "provided",
            }
        else:
            ranking[metric] = {**dict(zip(LEVELS, default, strict=False)), "source": "default_conservative"}
    return ranking, []


def clamp_top_n(value: Any) -> int:
    if value is None:
        return TOP_N_DEFAULT
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed.on_field("top_n", "not an integer", "top_n must be an integer")
    return max(TOP_N_MIN, min(TOP_N_MAX, value))


def severity(value_ms: float, levels: dict[str, Any]) -> str | None:
    for level in LEVELS:
        if value_ms >= levels[level]:
            return level
    return None
