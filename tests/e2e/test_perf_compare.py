"""analysis.compare and report.export with a baseline, over MCP and the per-tool HTTP functions of a real host.

The candidate run is the baseline's artifacts with three injected changes (an SPX function's self
time doubled, a slow-log class 3x slower, an endpoint's TTFB up 40 %); both runs go through upload-free
local paths, ingest, and the tools, as an agent would drive them.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp_types import TextContent

from devhost.processes import HostProcess
from tests.unit.perf.compare_fixtures import (
    FRAMEWORK,
    SMALL_LOG,
    SPX_DIR,
    TIMINGS,
    slowlog_classes,
    slowlog_scaled,
    snapshot,
    spx_pair,
    spx_scaled,
    timings_scaled,
)

# small.log's statements take microseconds: steps sized to it (the defaults suit production).
QUERY_STEPS = {
    "floor": {"relative": 0.1, "absolute": 0.001},
    "P2": {"relative": 0.25, "absolute": 0.01},
    "P1": {"relative": 1.0, "absolute": 0.1},
    "P0": {"relative": 5.0, "absolute": 100.0},
}
OPTIONS = {"rules": {"p95_ms": QUERY_STEPS, "total_time_ms": QUERY_STEPS}}
ENDPOINT = "/api/orders"


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-cmp-{uuid.uuid4().hex[:8]}"}


def call(host: HostProcess, tool: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def paths_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({"FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "true"})


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The baseline's and the candidate's artifact paths, and what was injected."""
    tmp = tmp_path_factory.mktemp("compare")
    base_spx = spx_pair(SPX_DIR, FRAMEWORK)
    spans = [s for s in snapshot(base_spx)["spans"] if not s["is_root"]]
    function = max(spans, key=lambda s: (s["self_ms"], s["function"]))["function"]
    counts = slowlog_classes()
    fingerprint = max(counts, key=lambda f: (counts[f], f))
    return {
        "baseline": [*base_spx, SMALL_LOG, TIMINGS],
        "candidate": [
            *spx_scaled(tmp, function, 2.0),
            slowlog_scaled(tmp, fingerprint, 3.0),
            timings_scaled(tmp, ENDPOINT, 1.4),
        ],
        "function": function,
        "fingerprint": fingerprint,
    }


def ingest(host: HostProcess, paths: list[Path], headers: dict[str, str]) -> str:
    r = call(host, "artifacts.ingest", {"artifacts": [{"path": str(p)} for p in paths]}, headers)
    assert r.status_code == 200, r.text
    return str(r.json()["normalized_snapshot_id"])


async def test_compare_finds_each_injected_change_over_mcp(paths_host: HostProcess, runs: dict[str, Any]) -> None:
    headers = ws()
    base, cand = ingest(paths_host, runs["baseline"], headers), ingest(paths_host, runs["candidate"], headers)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{paths_host.base_url}/api/mcp", http_client=http), mode="2026-07-28") as client,
    ):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        hints = listed["analysis.compare"].annotations
        assert hints is not None
        assert hints.read_only_hint is True
        got = await client.call_tool(
            "analysis.compare", {"baseline_snapshot_id": base, "candidate_snapshot_id": cand, "options": OPTIONS}
        )
        result = got.structured_content
        same = (
            await client.call_tool("analysis.compare", {"baseline_snapshot_id": base, "candidate_snapshot_id": base})
        ).structured_content
    assert result["worst_severity"] in ("P0", "P1", "P2")
    slower = {(c["kind"], c["key"].rsplit(" :: ", 1)[-1]) for c in result["changes"] if c["direction"] == "slower"}
    assert ("function", runs["function"]) in slower
    assert ("query", runs["fingerprint"]) in slower
    assert ("endpoint", f"GET {ENDPOINT}") in slower
    assert all(
        c["severity"] for c in result["changes"] if c["key"] == f"GET {ENDPOINT}" and c["metric"] == "ttfb_p95_ms"
    )
    assert result["summary"]["faster"] == 0
    assert "report.export" in result["next_action"]
    # The text an agent reads leads with the headline.
    text = got.content[0]
    assert isinstance(text, TextContent)
    assert result["summary"]["headline"] in text.text
    # A run compared with itself: nothing.
    assert same["changes"] == []
    assert same["worst_severity"] is None
    assert same["summary"]["change_count"] == 0


def test_comparison_report_with_diff_chart_and_differential_flame_graph(
    paths_host: HostProcess, runs: dict[str, Any]
) -> None:
    headers = ws()
    base, cand = ingest(paths_host, runs["baseline"], headers), ingest(paths_host, runs["candidate"], headers)
    body = {"normalized_snapshot_id": cand, "baseline_snapshot_id": base, "compare_options": OPTIONS}
    first = call(paths_host, "report.export", body, headers)
    assert first.status_code == 200, first.text
    report = first.json()
    assert report["report"]["schema"] == "firebreak-perf-comparison-v1"
    assert runs["function"].replace("\\", "\\\\") in report["markdown"]  # Markdown-escaped backslashes
    rid = report["report_id"]
    names = set(report["downloads"])
    assert {
        f"report_{rid}.md",
        f"report_{rid}.json",
        f"report_{rid}_diff.svg",
        f"report_{rid}_diff_flame_1.svg",
    } <= names
    for name, url in report["downloads"].items():
        got = httpx.get(f"{paths_host.base_url}{url}", headers=headers, timeout=30)
        assert got.status_code == 200, name
        if name.endswith(".svg"):
            ET.fromstring(got.content)  # well-formed
            assert f"({name})" in report["markdown"]  # the Markdown links every chart
    # Deterministic: the same comparison gives the same id and bytes.
    again = call(paths_host, "report.export", body, headers).json()
    assert again["report_id"] == rid
    assert again["markdown"] == report["markdown"]
    run = call(paths_host, "runs.get", {"snapshot_id": cand}, headers).json()
    [listed] = [r for r in run["reports"] if r["report_id"] == rid]
    assert listed["kind"] == "comparison"
    assert listed["baseline_snapshot_id"] == base
    # The plain analysis report of the same snapshot is still an analysis report.
    plain = call(paths_host, "report.export", {"normalized_snapshot_id": cand}, headers).json()
    assert plain["report_id"] != rid
    assert plain["markdown"].startswith("# Executive Summary")


def test_compare_refuses_other_workspaces_and_bad_input(paths_host: HostProcess, runs: dict[str, Any]) -> None:
    owner, intruder = ws(), ws()
    base = ingest(paths_host, runs["baseline"], owner)
    mine = ingest(paths_host, runs["candidate"][:2], intruder)
    # Another workspace's id is NOT_FOUND, alone or beside one of the caller's own.
    for body in (
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": mine},
        {"baseline_snapshot_id": mine, "candidate_snapshot_id": base},
    ):
        r = call(paths_host, "analysis.compare", body, intruder)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "NOT_FOUND"
        assert base not in r.text or "No snapshot" in r.text
    r = call(paths_host, "report.export", {"normalized_snapshot_id": mine, "baseline_snapshot_id": base}, intruder)
    assert r.status_code == 404
    # Malformed ids and options: VALIDATION_ERROR, nothing stored.
    bad_bodies: list[dict[str, Any]] = [
        {"baseline_snapshot_id": "../../etc", "candidate_snapshot_id": base},
        {"baseline_snapshot_id": base},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "options": {"confidence": 7}},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "options": {"rules": {"p95_ms": "fast"}}},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "options": {"rules": {"nope": {}}}},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "limit": 0},
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "options": {"x" * 100_000: 1}},
        # JSON integers have no size limit; one beyond a float is a bad option, not an internal error.
        {"baseline_snapshot_id": base, "candidate_snapshot_id": base, "options": {"max_changes": 10**400}},
        {
            "baseline_snapshot_id": base,
            "candidate_snapshot_id": base,
            "options": {"rules": {"count": {"P0": {"absolute": 10**400}}}},
        },
    ]
    for body in bad_bodies:
        r = call(paths_host, "analysis.compare", body, owner)
        assert r.status_code == 400, (body, r.text[:300])
        assert r.json()["error"]["code"] == "VALIDATION_ERROR"
        assert len(r.text) < 4000  # the error names the field; it does not echo a 100 KB key back
    # report.export's comparison-only and analysis-only parameters do not mix (each would be dropped).
    mixed: list[dict[str, Any]] = [
        {"normalized_snapshot_id": base, "compare_options": {"min_samples": 3}},
        {"normalized_snapshot_id": base, "baseline_snapshot_id": base, "top_n": 3},
    ]
    for body in mixed:
        r = call(paths_host, "report.export", body, owner)
        assert r.status_code == 400, (body, r.text[:300])
        assert "baseline_snapshot_id" in r.text
    reports = call(paths_host, "runs.get", {"snapshot_id": base}, owner).json()["reports"]
    assert reports == []
