"""collector-v1 timing files: validation and per-endpoint aggregates."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.perf.parsers.timings import TimingsFile, aggregate_timings


def sample(
    path: str, ttfb: float, total: float, status: int | None = 200, error: str | None = None, warmup: bool = False
) -> dict:
    return {
        "url_path": path,
        "status": status,
        "error": error,
        "warmup": warmup,
        "timings_ms": {"dns": 1.0, "connect": 2.0, "tls": 5.0, "ttfb": ttfb, "total": total},
    }


def test_aggregates_per_endpoint() -> None:
    doc = TimingsFile.model_validate(
        {
            "format": "collector-v1",
            "samples": [
                sample("/health", 900, 950, warmup=True),  # warm-up: left out
                *[sample("/health", t, t + 5) for t in (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)],
                sample("/api/orders", 400, 420),
                sample("/api/orders", 800, 830, status=503),
                sample("/api/orders", 0, 0, status=None, error="timeout"),
            ],
        }
    )
    by_endpoint = {e["endpoint"]: e for e in aggregate_timings(doc)}
    health = by_endpoint["GET /health"]
    assert health["samples"] == 10
    assert health["error_rate"] == 0.0
    assert health["phases_ms"]["ttfb"] == {"p50": 50.0, "p95": 100.0, "max": 100.0}
    orders = by_endpoint["GET /api/orders"]
    assert orders["samples"] == 3
    assert orders["errors"] == 2
    assert orders["error_rate"] == pytest.approx(0.6667, abs=1e-4)
    assert orders["statuses"] == {"200": 1, "503": 1, "error": 1}
    assert orders["phases_ms"]["ttfb"]["max"] == 800.0  # the timed-out sample has no timings to count
    assert [e["endpoint"] for e in aggregate_timings(doc)] == ["GET /api/orders", "GET /health"]


@pytest.mark.parametrize(
    "doc",
    [
        {"format": "collector-v2", "samples": []},
        {"format": "collector-v1"},
        {"format": "collector-v1", "samples": [{"url_path": "/", "method": "POST"}]},
        {"format": "collector-v1", "samples": [{"url_path": "/", "timings_ms": {"ttfb": -1}}]},
        {"format": "collector-v1", "samples": [{"url_path": "", "status": 200}]},
        {"format": "collector-v1", "samples": [{"url_path": "/", "status": 999}]},
    ],
)
def test_invalid_files_are_rejected(doc: dict) -> None:
    with pytest.raises(ValidationError):
        TimingsFile.model_validate(doc)
