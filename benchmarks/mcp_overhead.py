"""MCP overhead: `tools/call health.check` via /api/mcp vs `POST /api/tools/health.check`, medians of N, same host."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx

BUDGET = 1.3
ACCEPT = {"accept": "application/json, text/event-stream"}


def _modern_call(i: int) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "health.check", "arguments": {}, "_meta": meta},
    }


def run(base_url: str, calls: int = 200) -> list[dict[str, Any]]:
    results = []
    with httpx.Client(base_url=base_url, timeout=30) as http:
        variants: dict[str, Callable[[int], httpx.Response]] = {
            # 2026-07-28 routes on headers that must mirror the body: Mcp-Method and Mcp-Name.
            "mcp_2026-07-28": lambda i: http.post(
                "/api/mcp",
                json=_modern_call(i),
                headers={
                    **ACCEPT,
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": "health.check",
                },
            ),
            "mcp_2025-06-18": lambda i: http.post(
                "/api/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "health.check", "arguments": {}},
                },
                headers={**ACCEPT, "mcp-protocol-version": "2025-06-18"},
            ),
        }

        def direct(i: int) -> httpx.Response:
            return http.post("/api/tools/health.check", json={})

        for i in range(20):  # warm-up: clients, containers, first-call imports
            direct(i), [v(i) for v in variants.values()]
        timings: dict[str, list[float]] = {"http": [], **{k: [] for k in variants}}
        for i in range(calls):  # interleaved rounds so machine noise hits every variant alike
            for name, call in [("http", direct), *variants.items()]:
                started = time.perf_counter()
                r = call(i)
                timings[name].append(time.perf_counter() - started)
                assert r.status_code == 200, r.text[:300]
                assert '"status":"ok"' in r.text.replace(" ", ""), r.text[:300]
        base = statistics.median(timings["http"])
        for name in variants:
            median = statistics.median(timings[name])
            results.append(
                {
                    "name": f"mcp_overhead_{name}",
                    "baseline_median_ms": round(base * 1000, 3),
                    "mcp_median_ms": round(median * 1000, 3),
                    "ratio": round(median / base, 3),
                    "budget": BUDGET,
                    "ok": median / base <= BUDGET,
                    "calls": calls,
                }
            )
    return results
