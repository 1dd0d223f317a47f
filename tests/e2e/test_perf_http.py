"""Perf over the wire: uploads (raw, multipart, upload URL), the spec's examples over MCP, downloads, errors."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from mcp import Client

from devhost.processes import HostProcess

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY = FIXTURES / "spx" / "spx-full-20261122_030646-vm-31166-1804289383"
SLOW = FIXTURES / "slowlog" / "small.log"
TIMINGS = FIXTURES / "perf" / "timings.json"


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-perf-{uuid.uuid4().hex[:8]}"}


def call(host: HostProcess, tool: str, body: dict, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def paths_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    """A local run that accepts the spec's `{"path": ...}` artifacts."""
    return start_host({"FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "true"})


def test_upload_raw_and_multipart_then_ingest_and_download(host: HostProcess) -> None:
    headers = ws()
    raw = httpx.post(
        f"{host.base_url}/api/artifacts",
        params={"name": "logs/small.log"},
        content=SLOW.read_bytes(),
        headers=headers,
        timeout=60,
    )
    assert raw.status_code == 201, raw.text
    [item] = raw.json()["artifacts"]
    assert item["blob"] == "logs/small.log"
    assert item["detected_type"] == "mysql_slow_log"
    assert item["size_bytes"] == SLOW.stat().st_size
    files = [
        ("file", (f"{TINY.name}.json", Path(f"{TINY}.json").read_bytes())),
        ("file", (f"{TINY.name}.txt.gz", Path(f"{TINY}.txt.gz").read_bytes())),
        ("file", ("timings.json", TIMINGS.read_bytes())),
    ]
    multi = httpx.post(f"{host.base_url}/api/artifacts", files=files, headers=headers, timeout=60)
    assert multi.status_code == 201, multi.text
    blobs = [a["blob"] for a in multi.json()["artifacts"]]
    assert blobs == [f"{TINY.name}.json", f"{TINY.name}.txt.gz", "timings.json"]
    refs = [{"blob": b} for b in ["logs/small.log", *blobs]]
    ingest = call(host, "artifacts.ingest", {"artifacts": refs, "environment_hints": {"env": "test"}}, headers)
    assert ingest.status_code == 200, ingest.text
    sid = ingest.json()["normalized_snapshot_id"]
    report = call(host, "report.export", {"normalized_snapshot_id": sid}, headers).json()
    for name, url in report["downloads"].items():
        got = httpx.get(f"{host.base_url}{url}", headers=headers, timeout=30)
        assert got.status_code == 200
        assert got.content
        if name.endswith(".md"):
            assert got.text == report["markdown"]
            assert got.headers["content-type"].startswith("text/markdown")
        if name.endswith(".svg"):
            assert got.headers["content-type"].startswith("image/svg+xml")
            assert "default-src 'none'" in got.headers["content-security-policy"]
    # Another workspace can neither download the report nor read the snapshot.
    other = ws()
    md_url = report["downloads"]["report_" + report["report_id"] + ".md"]
    assert httpx.get(f"{host.base_url}{md_url}", headers=other, timeout=30).status_code == 404
    assert call(host, "runs.get", {"snapshot_id": sid}, other).status_code == 404


def test_upload_url_round_trip(host: HostProcess) -> None:
    headers = ws()
    got = call(host, "create_upload_url", {"name": "big/small.log"}, headers).json()
    assert got["upload_url"]
    assert got["method"] == "PUT"
    put = httpx.put(got["upload_url"], content=SLOW.read_bytes(), headers=got["headers"], timeout=60)
    assert put.status_code == 201, put.text
    r = call(host, "artifacts.validate", {"artifacts": [{"blob": "big/small.log"}]}, headers).json()
    assert r["counts"] == {"ok": 1, "failed": 0}


@pytest.mark.parametrize(
    ("query", "body", "content_type", "status"),
    [
        ({}, b"# Time: 2026-01-01T00:00:00Z\n", "application/octet-stream", 400),  # no name
        ({"name": "../x.log"}, b"# Time: 2026-01-01T00:00:00Z\n", "application/octet-stream", 400),
        ({"name": "empty.log"}, b"", "application/octet-stream", 400),
        ({"name": "junk.bin"}, bytes(range(256)) * 10, "application/octet-stream", 400),
        (
            {},
            b'--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nnot a file\r\n--x--\r\n',
            "multipart/form-data; boundary=x",
            400,
        ),
        ({}, b"garbage", "multipart/form-data; boundary=", 400),
    ],
)
def test_bad_uploads_are_400_with_the_envelope(
    host: HostProcess, query: dict, body: bytes, content_type: str, status: int
) -> None:
    workspace = ws()
    r = httpx.post(
        f"{host.base_url}/api/artifacts",
        params=query,
        content=body,
        headers={**workspace, "content-type": content_type},
        timeout=30,
    )
    assert r.status_code == status
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert r.json()["error"]["correlation_id"]
    listed = call(
        host, "artifacts.validate", {"artifacts": [{"blob": query.get("name", "x.log").replace("../", "")}]}, workspace
    ).json()
    assert listed["counts"]["ok"] == 0


def test_local_paths_are_refused_unless_allowed(start_host: Callable[..., HostProcess]) -> None:
    deployed_like = start_host({"FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "false"})
    r = call(deployed_like, "artifacts.validate", {"artifacts": [{"path": str(SLOW)}]}, ws()).json()
    assert r["counts"]["failed"] == 1
    assert "local paths are not accepted" in r["results"][0]["errors"][0]


async def test_spec_examples_over_mcp(paths_host: HostProcess) -> None:
    """The spec's request for each tool (paths of our fixtures), over MCP, with its correlation_id."""
    artifacts = [{"path": f"{TINY}.json"}, {"path": f"{TINY}.txt.gz"}, {"path": str(SLOW)}, {"path": str(TIMINGS)}]
    async with Client(f"{paths_host.base_url}/api/mcp") as client:
        val = (
            await client.call_tool("artifacts.validate", {"correlation_id": "corr-val-001", "artifacts": artifacts})
        ).structured_content
        assert val["counts"] == {"ok": 4, "failed": 0}
        assert [(r["detected_type"], r["detected_version"]) for r in val["results"]] == [
            ("spx", "spx-json-v2"),
            ("spx", "spx-text-gz-v1"),
            ("mysql_slow_log", "mysql-slowlog-v1"),
            ("ttfb_timings", "collector-v1"),
        ]
        assert all(r["metadata"]["pair_status"] == "paired" for r in val["results"][:2])

        ing = (
            await client.call_tool(
                "artifacts.ingest",
                {
                    "correlation_id": "corr-ing-001",
                    "artifacts": artifacts,
                    "environment_hints": {"env": "staging", "app": "checkout"},
                },
            )
        ).structured_content
        sid = ing["normalized_snapshot_id"]
        assert len(sid) == 64
        assert set(ing["counts"]) >= {"endpoints", "queries", "spans"}
        assert {s["type"] for s in ing["sources"]} == {"spx", "mysql_slow_log", "ttfb_timings"}
        assert all(len(s["sha256"]) == 64 for s in ing["sources"])
        alias = (await client.call_tool("ingest.bundle", {"artifacts": artifacts})).structured_content
        assert alias["normalized_snapshot_id"] == sid

        ana = (
            await client.call_tool(
                "analysis.run", {"correlation_id": "corr-ana-001", "normalized_snapshot_id": sid, "top_n": 5}
            )
        ).structured_content
        assert ana["correlation_id"] == "corr-ana-001"
        assert ana["summary"]["top_n"] == 5
        assert len(ana["open_questions"]) == 5
        assert ana["ranking_thresholds"]["endpoint_ttfb_ms"] == {
            "P0": 1500,
            "P1": 800,
            "P2": 300,
            "source": "default_conservative",
        }
        overrides = {
            "endpoint_ttfb_ms": {"P0": 1200, "P1": 700, "P2": 250},
            "endpoint_wall_ms": {"P0": 1800, "P1": 900, "P2": 350},
            "query_total_time_ms": {"P0": 8000, "P1": 2500, "P2": 900},
            "span_self_ms": {"P0": 700, "P1": 280, "P2": 90},
            "span_total_ms": {"P0": 1200, "P1": 600, "P2": 220},
        }
        ana2 = (
            await client.call_tool(
                "analysis.run",
                {"correlation_id": "corr-ana-002", "normalized_snapshot_id": sid, "top_n": 5, "thresholds": overrides},
            )
        ).structured_content
        assert ana2["open_questions"] == []
        assert all(v["source"] == "provided" for v in ana2["ranking_thresholds"].values())

        rep = (
            await client.call_tool(
                "report.export", {"correlation_id": "corr-rep-001", "normalized_snapshot_id": sid, "top_n": 5}
            )
        ).structured_content
        assert rep["correlation_id"] == "corr-rep-001"
        assert rep["markdown"].startswith("# Executive Summary")
        assert len(rep["report_id"]) == 16
        assert rep["markdown_path"].endswith(f"report_{rep['report_id']}.md")
        assert rep["report"]["open_questions"] == ana["open_questions"]

        runs = (await client.call_tool("runs.list", {})).structured_content
        assert sid in [r["normalized_snapshot_id"] for r in runs["runs"]]
        got = (await client.call_tool("runs.get", {"snapshot_id": sid})).structured_content
        assert rep["report_id"] in [r["report_id"] for r in got["reports"]]

        bad = await client.call_tool(
            "analysis.run",
            {
                "correlation_id": "corr-bad-001",
                "normalized_snapshot_id": sid,
                "thresholds": {"span_self_ms": {"P0": 1, "P1": 2, "P2": 3}},
            },
        )
        assert bad.is_error
        assert bad.structured_content["error"]["code"] == "VALIDATION_ERROR"
        assert bad.structured_content["error"]["correlation_id"] == "corr-bad-001"
        missing = await client.call_tool("analysis.run", {"normalized_snapshot_id": "0" * 64})
        assert missing.is_error
        assert missing.structured_content["error"]["code"] == "NOT_FOUND"
        broken = await client.call_tool(
            "artifacts.ingest", {"correlation_id": "corr-ing-bad", "artifacts": [{"path": f"{TINY}.json"}]}
        )
        error = broken.structured_content["error"]
        assert broken.is_error
        assert error["code"] == "VALIDATION_ERROR"
        assert error["details"]["results"][0]["metadata"]["pair_status"] == "partial"
    assert json.dumps(rep["report"])  # the JSON report is plain JSON


def test_profile_exports_download_as_speedscope_and_collapsed_stacks_from_the_owner_only(host: HostProcess) -> None:
    headers = ws()
    files = [
        ("file", (f"{TINY.name}.json", Path(f"{TINY}.json").read_bytes())),
        ("file", (f"{TINY.name}.txt.gz", Path(f"{TINY}.txt.gz").read_bytes())),
    ]
    up = httpx.post(f"{host.base_url}/api/artifacts", files=files, headers=headers, timeout=60)
    assert up.status_code == 201, up.text
    refs = [{"blob": a["blob"]} for a in up.json()["artifacts"]]
    sid = call(host, "artifacts.ingest", {"artifacts": refs}, headers).json()["normalized_snapshot_id"]
    run = call(host, "runs.get", {"snapshot_id": sid}, headers).json()
    [profile] = run["profiles"]
    downloads = profile["downloads"]
    assert set(downloads) == {"collapsed", "speedscope"}
    scope = httpx.get(f"{host.base_url}{downloads['speedscope']}", headers=headers, timeout=30)
    assert scope.status_code == 200, scope.text
    assert scope.headers["content-type"].startswith("application/json")
    doc = scope.json()
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    [sampled] = doc["profiles"]
    assert sampled["type"] == "sampled"
    assert sampled["unit"] == "nanoseconds"
    assert len(sampled["samples"]) == len(sampled["weights"]) > 0
    frames = len(doc["shared"]["frames"])
    assert all(0 <= f < frames for sample in sampled["samples"] for f in sample)
    folded = httpx.get(f"{host.base_url}{downloads['collapsed']}", headers=headers, timeout=30)
    assert folded.status_code == 200
    lines = folded.text.splitlines()
    # Both exports carry the same call paths' self times: their totals agree (collapsed rounds each path).
    assert abs(sum(int(line.rsplit(" ", 1)[1]) for line in lines) - sum(sampled["weights"])) <= len(lines)
    # Another workspace, a made-up name, a path escape or a malformed id: 404 in the envelope, never the file.
    for path, who in [
        (downloads["speedscope"], ws()),
        (f"/api/perf/snapshots/{sid}/profile_9.speedscope.json", headers),
        (f"/api/perf/snapshots/{sid}/metadata.json", headers),
        (f"/api/perf/snapshots/{sid}/..%2Fsnapshot.json", headers),
        (f"/api/perf/snapshots/{sid[:-1]}X/profile_1.speedscope.json", headers),
    ]:
        r = httpx.get(f"{host.base_url}{path}", headers=who, timeout=30)
        assert r.status_code == 404, (path, r.status_code, r.text[:200])
        assert r.json()["error"]["code"] == "NOT_FOUND"
