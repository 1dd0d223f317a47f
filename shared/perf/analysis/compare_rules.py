"""The grading rules of analysis.compare: per metric, the relative and absolute change of each level.

A change is a candidate value minus the baseline's (`delta`) and that delta over the baseline
(`relative`). Levels, from the smallest step up: `floor` (below it the change is noise and not
reported), then `P2`, `P1`, `P0`. A slower change reaches a level when BOTH its relative change and
its absolute change are at or above that level's values (a 50 % change of 2 ms is not a regression,
nor is 20 ms on a 10 s request). Faster changes above the floor are listed without a severity; a
subject only in the candidate (`new`) is graded by its absolute size alone; one only in the
baseline (`gone`) has no severity unless options.grade_gone is true (it is not slower: usually the
candidate run did not exercise it).

Options (all optional; effective values are echoed in the comparison):
    {"confidence": 0.95, "min_samples": 5, "grade_gone": false, "max_changes": 500,
     "rules": {"ttfb_p95_ms": {"P1": {"relative": 0.3, "absolute": 50}}, ...}}
Overrides merge with the defaults per metric and level; each metric's levels must grow from floor to
P0 in both relative and absolute terms.
"""

from __future__ import annotations

import math
from typing import Any

from shared.core.errors import ValidationFailed

GRADES = ("P0", "P1", "P2")
LEVELS = ("floor", "P2", "P1", "P0")  # ascending

# metric -> (unit, {level: (relative, absolute)}); relative 0.25 = +25 %.
_MS_ENDPOINT = {"floor": (0.10, 5.0), "P2": (0.20, 20.0), "P1": (0.50, 100.0), "P0": (1.00, 500.0)}
_MS_FUNCTION = {"floor": (0.20, 5.0), "P2": (0.50, 20.0), "P1": (1.00, 100.0), "P0": (3.00, 1000.0)}
DEFAULT_RULES: dict[str, tuple[str, dict[str, tuple[float, float]]]] = {
    **{f"{phase}_{q}_ms": ("ms", _MS_ENDPOINT) for phase in ("ttfb", "total", "wall") for q in ("p50", "p95")},
    "error_rate": ("ratio", {"floor": (0.25, 0.01), "P2": (0.50, 0.02), "P1": (1.00, 0.05), "P0": (2.00, 0.20)}),
    "count": ("count", {"floor": (0.10, 5.0), "P2": (0.50, 50.0), "P1": (1.00, 500.0), "P0": (4.00, 5000.0)}),
    "total_time_ms": ("ms", {"floor": (0.10, 10.0), "P2": (0.25, 100.0), "P1": (1.00, 1000.0), "P0": (3.00, 10000.0)}),
    "p95_ms": ("ms", {"floor": (0.10, 1.0), "P2": (0.25, 10.0), "P1": (1.00, 100.0), "P0": (3.00, 1000.0)}),
    "rows_examined_avg": (
        "rows",
        {"floor": (0.10, 10.0), "P2": (0.50, 1000.0), "P1": (2.00, 10000.0), "P0": (10.00, 100000.0)},
    ),
    "self_ms": ("ms", _MS_FUNCTION),
    "total_ms": ("ms", _MS_FUNCTION),
    "share_of_wall": ("ratio", {"floor": (0.20, 0.03), "P2": (0.50, 0.10), "P1": (1.00, 0.20), "P0": (2.00, 0.40)}),
}
DEFAULT_OPTIONS: dict[str, Any] = {"confidence": 0.95, "min_samples": 5, "grade_gone": False, "max_changes": 500}


def _invalid(field: str, problem: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        f"options.{field}" if field else "options",
        problem,
        suggestions=[
            'Send options as {"confidence": 0.5..0.999, "min_samples": 1..1000, "grade_gone": bool, '
            '"max_changes": 1..5000, "rules": {"<metric>": {"<level>": {"relative": r, "absolute": a}}}} with '
            "levels floor, P2, P1, P0 (each at least the one before) and metrics: " + ", ".join(DEFAULT_RULES)
        ],
    )


_ECHO_CHARS = 40
_JSON_TYPES = {str: "a string", list: "an array", dict: "an object", type(None): "null", bool: "a boolean"}


def _name(key: Any) -> str:
    """A caller's key as an error echoes it: short (a key may be megabytes of anything)."""
    text = str(key)
    return text if len(text) <= _ECHO_CHARS else text[: _ECHO_CHARS - 3] + "..."


def _shown(value: Any) -> str:
    """A bad value as an error echoes it: numbers shortened, anything else by its JSON type only (a token
    pasted into the wrong field must not come back in the answer)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _JSON_TYPES.get(type(value), type(value).__name__)
    try:
        return repr(_name(value))
    except ValueError:  # an integer beyond str()'s digit limit
        return "a huge integer"


def _number(field: str, value: Any) -> float:
    try:
        ok = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) and value >= 0
    except OverflowError:  # an integer too large for a float: no threshold means that
        ok = False
    if not ok:
        raise _invalid(field, f"must be a finite non-negative number (got {_shown(value)})")
    return float(value)


def _metric_rule(metric: str, override: Any) -> dict[str, dict[str, float]]:
    defaults = DEFAULT_RULES[metric][1]
    if not isinstance(override, dict):
        raise _invalid(f"rules.{metric}", "must be an object keyed by level (floor, P2, P1, P0)")
    unknown = sorted(set(override) - set(LEVELS))
    if unknown:
        raise _invalid(f"rules.{metric}", f"unknown level(s) {', '.join(map(_name, unknown[:3]))}")
    rule: dict[str, dict[str, float]] = {}
    for level in LEVELS:
        relative, absolute = defaults[level]
        given = override.get(level, {})
        if not isinstance(given, dict) or set(given) - {"relative", "absolute"}:
            raise _invalid(f"rules.{metric}.{level}", 'must be an object with "relative" and/or "absolute"')
        rule[level] = {
            "relative": _number(f"rules.{metric}.{level}.relative", given.get("relative", relative)),
            "absolute": _number(f"rules.{metric}.{level}.absolute", given.get("absolute", absolute)),
        }
    for part in ("relative", "absolute"):
        values = [rule[level][part] for level in LEVELS]
        if values != sorted(values):
            raise _invalid(
                f"rules.{metric}", f"{part} must not decrease from floor to P0 (got {', '.join(map(str, values))})"
            )
    return rule


def _bounded(field: str, value: Any, lo: float, hi: float, kind: type[int] | type[float]) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind | int) or not lo <= value <= hi:
        raise _invalid(field, f"must be a {kind.__name__} in [{lo}, {hi}] (got {_shown(value)})")
    return kind(value)


def resolve(options: Any) -> dict[str, Any]:
    """The effective options (defaults merged with the caller's), or VALIDATION_ERROR naming the bad field."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise _invalid("", "must be an object")
    unknown = sorted(set(options) - {*DEFAULT_OPTIONS, "rules"})
    if unknown:
        raise _invalid(_name(unknown[0]), "unknown option")
    merged = {**DEFAULT_OPTIONS, **{k: v for k, v in options.items() if k != "rules"}}
    grade_gone = merged["grade_gone"]
    if not isinstance(grade_gone, bool):
        raise _invalid("grade_gone", "must be true or false")
    rules = options.get("rules", {})
    if not isinstance(rules, dict):
        raise _invalid("rules", "must be an object keyed by metric")
    unknown = sorted(set(rules) - set(DEFAULT_RULES))
    if unknown:
        raise _invalid(f"rules.{_name(unknown[0])}", f"unknown metric; supported: {', '.join(DEFAULT_RULES)}")
    return {
        "confidence": _bounded("confidence", merged["confidence"], 0.5, 0.999, float),
        "min_samples": _bounded("min_samples", merged["min_samples"], 1, 1000, int),
        "grade_gone": grade_gone,
        "max_changes": _bounded("max_changes", merged["max_changes"], 1, 5000, int),
        "rules": {m: {"unit": DEFAULT_RULES[m][0], **_metric_rule(m, rules.get(m, {}))} for m in sorted(DEFAULT_RULES)},
    }


def level_reached(rule: dict[str, Any], relative: float | None, delta: float) -> str | None:
    """The highest level (floor < P2 < P1 < P0) whose relative and absolute steps the change meets.

    `relative` None (no baseline) is graded on the absolute change alone. Both are compared as reported
    (delta to 3 decimals, relative to 4), so a value doubled exactly is +100 % even after rounding."""
    reached = None
    size = round(abs(delta), 3)
    ratio = None if relative is None else round(abs(relative), 4)
    for level in LEVELS:
        step = rule[level]
        if size >= step["absolute"] and (ratio is None or ratio >= step["relative"]):
            reached = level
        else:
            break
    return reached


def grade_starts(rule: dict[str, Any], baseline: float | None) -> dict[str, float]:
    """Per grade, the candidate value at which it starts (for bar charts): both steps met above the baseline."""
    out = {}
    for grade in GRADES:
        step = rule[grade]
        if baseline is None:
            out[grade] = round(step["absolute"], 3)
        else:
            out[grade] = round(max(baseline * (1 + step["relative"]), baseline + step["absolute"]), 3)
    return out
