"""SPX metadata (`spx-json-v2`) checked before anything is sized from it: types, ranges and lengths."""

from __future__ import annotations

import re
from typing import Any

from shared.perf.parsers.spx.trace import MAX_FUNCTIONS

MAX_METRICS = 32
MAX_TEXT_CHARS = 8192
MAX_CALLS = 10**12
_METRIC = re.compile(r"^[a-z][a-z0-9_]{0,15}$")
_TEXT_FIELDS = ("key", "http_method", "http_request_uri", "http_host", "cli_command_line", "host_name")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def problems(doc: dict[str, Any]) -> list[str]:
    """What is wrong with an SPX metadata document (empty when it is usable)."""
    out = []
    metrics = doc.get("enabled_metrics")
    if not isinstance(metrics, list) or not metrics:
        out.append("SPX metadata without enabled_metrics")
    elif (
        len(metrics) > MAX_METRICS
        or not all(isinstance(m, str) and _METRIC.match(m) for m in metrics)
        or len(set(metrics)) != len(metrics)
    ):
        out.append(f'enabled_metrics must be 1 to {MAX_METRICS} distinct metric names such as "wt" or "zm"')
    count = doc.get("called_function_count")
    if count is not None and not (_is_int(count) and 0 <= count <= MAX_FUNCTIONS):
        out.append(f"called_function_count must be a whole number from 0 to {MAX_FUNCTIONS} (got {str(count)[:40]!r})")
    calls = doc.get("recorded_call_count")
    if calls is not None and not (_is_int(calls) and 0 <= calls <= MAX_CALLS):
        out.append(f"recorded_call_count must be a whole number from 0 to {MAX_CALLS} (got {str(calls)[:40]!r})")
    wall = doc.get("wall_time_ms")
    if wall is not None and not (isinstance(wall, (int, float)) and not isinstance(wall, bool) and 0 <= wall < 1e15):
        out.append(f"wall_time_ms must be a non-negative number (got {str(wall)[:40]!r})")
    for name in _TEXT_FIELDS:
        value = doc.get(name)
        if value is not None and not (isinstance(value, (str, int, float)) and len(str(value)) <= MAX_TEXT_CHARS):
            out.append(f"{name} must be text of at most {MAX_TEXT_CHARS} characters")
    return out
