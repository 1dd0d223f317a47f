"""Memory that only grows: a process whose logged memory use climbs steadily to its limit before it fails leaks
(a cache without bounds, objects that are never released); raising the limit only delays the next failure."""

from __future__ import annotations

import re
from itertools import pairwise

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import Finding

_SAMPLE = re.compile(
    r"(?i)\b(?:memory|heap|mem|rss)[\w\"' .]{0,30}?[:=]\s?[\"']?(\d{1,9}(?:\.\d{1,3})?)\s?(%|[KMG]i?B?)?(?![\w.])"
)
_MIN_SAMPLES = 4


def _samples(text: str) -> list[tuple[float, str, str]]:
    """(value, unit, line) of each log line that states a memory use, in order (one per line)."""
    out: list[tuple[float, str, str]] = []
    for line in text[-200_000:].splitlines()[-3_000:]:
        m = _SAMPLE.search(line[:600])
        if m:
            out.append((float(m.group(1)), (m.group(2) or "").upper(), line.strip()))
    return out


def memory_growth(ctx: Context) -> list[Finding]:
    """A log whose memory figures climb steadily (most steps up, the last well above the first)."""
    out: list[Finding] = []
    for rec in ctx.logs:
        samples = _samples(rec.output)
        unit = samples[-1][1] if samples else ""
        samples = [s for s in samples if s[1] == unit]
        if len(samples) < _MIN_SAMPLES:
            continue
        values = [v for v, _, _ in samples]
        ups = sum(b >= a for a, b in pairwise(values))
        if values[0] <= 0 or values[-1] < values[0] * 1.3 or ups < 0.8 * (len(values) - 1):
            continue
        pod = str(rec.args.get("name") or "the container")
        first, last = samples[0], samples[-1]
        out.append(
            Finding(
                rule="memory_growth",
                subject=pod,
                cause=f"The memory use pod {pod} logs climbs steadily ({first[0]:g}{unit} to {last[0]:g}{unit} over "
                f"{len(samples)} readings) until it fails: memory that only grows is a leak (an unbounded cache, "
                "objects never released), so a larger limit only delays the next failure.",
                evidence=[ev(rec, first[2]), ev(rec, last[2])],
                remediation=[
                    (
                        "Find what holds the memory (a heap dump or profile taken as it climbs: the largest retained "
                        "objects) and bound or release it; raise the limit only as a stopgap."
                    )
                ],
                confidence=0.65,
            )
        )
    return out
