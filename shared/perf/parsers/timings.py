"""HTTP timing files (`collector-v1`, written by collect.run) and their per-endpoint aggregates.

A file:
    {"format": "collector-v1", "base_url": "https://shop.example", "created_at": "...",
     "samples": [{"method": "GET", "url_path": "/health", "status": 200, "error": null, "warmup": false,
                  "timings_ms": {"dns": 1.2, "connect": 3.4, "tls": 10.1, "ttfb": 120.5, "total": 130.2}}]}
Phases follow curl's -w fields (time_namelookup, time_connect, time_appconnect, time_starttransfer,
time_total), as durations of each phase's end from the request start. Warm-up samples are kept in the
file but left out of the aggregates. A sample is an error when it has an `error` (no response) or a
5xx status.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field

PHASES = ("dns", "connect", "tls", "ttfb", "total")


class PhaseTimings(BaseModel):
    dns: float | None = Field(None, ge=0)
    connect: float | None = Field(None, ge=0)
    tls: float | None = Field(None, ge=0)
    ttfb: float | None = Field(None, ge=0)
    total: float | None = Field(None, ge=0)


class TimingSample(BaseModel):
    method: Literal["GET"] = "GET"
    url_path: str = Field(min_length=1, max_length=2048)
    status: int | None = Field(None, ge=100, le=599)
    error: str | None = Field(None, max_length=500)
    warmup: bool = False
    timings_ms: PhaseTimings = Field(default_factory=PhaseTimings)


class TimingsFile(BaseModel):
    format: Literal["collector-v1"]
    base_url: str = ""
    created_at: str | None = None
    samples: list[TimingSample] = Field(max_length=100_000)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the samples at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def aggregate_timings(doc: TimingsFile) -> list[dict[str, Any]]:
    """Per endpoint (method + path): samples, error rate, and p50/p95/max of each phase, slowest TTFB first."""
    groups: dict[tuple[str, str], list[TimingSample]] = {}
    for s in doc.samples:
        if not s.warmup:
            groups.setdefault((s.method, s.url_path), []).append(s)
    endpoints = []
    for (method, path), samples in groups.items():
        errors = sum(1 for s in samples if s.error or (s.status or 0) >= 500)
        phases: dict[str, dict[str, float]] = {}
        for phase in PHASES:
            values = [v for s in samples if (v := getattr(s.timings_ms, phase)) is not None and not s.error]
            if values:
                phases[phase] = {
                    "p50": round(percentile(values, 0.5), 3),
                    "p95": round(percentile(values, 0.95), 3),
                    "max": round(max(values), 3),
                }
        statuses: dict[str, int] = {}
        for s in samples:
            key = str(s.status) if s.status else "error"
            statuses[key] = statuses.get(key, 0) + 1
        endpoints.append(
            {
                "endpoint": f"{method} {path}",
                "samples": len(samples),
                "errors": errors,
                "error_rate": round(errors / len(samples), 4),
                "statuses": statuses,
                "phases_ms": phases,
            }
        )
    return sorted(endpoints, key=lambda e: (-e["phases_ms"].get("ttfb", {}).get("p95", 0.0), e["endpoint"]))
