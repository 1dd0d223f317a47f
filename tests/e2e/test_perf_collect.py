"""collect.run against a real site on 127.0.0.1: phases, header allow-list, redaction, the URL guard,
bundles that artifacts.ingest takes, and the Durable continuation of long runs."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from mcp import Client

from devhost.processes import HostProcess
from shared.core.settings import Settings
from shared.perf.artifacts import artifact_blob
from shared.storage.blob import BlobStore
from tests.support.target_site import target_site

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY = FIXTURES / "spx" / "spx-full-20261122_030646-vm-31166-1804289383"
LOCAL_PROBES = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


def ws() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-collect-{uuid.uuid4().hex[:8]}"}


def call(host: HostProcess, tool: str, body: dict, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=120)


def upload(host: HostProcess, headers: dict[str, str], name: str, path: Path) -> None:
    r = httpx.post(
        f"{host.base_url}/api/artifacts", params={"name": name}, content=path.read_bytes(), headers=headers, timeout=60
    )
    assert r.status_code == 201, r.text


def read_bundle(host: HostProcess, headers: dict[str, str], name: str) -> dict:
    """A bundle file as stored in Blob (read with our BlobStore against the same Azurite)."""

    async def read() -> dict:
        store = BlobStore(Settings.from_env(host.env))
        try:
            data = await store.get(artifact_blob(headers["x-dev-workspace"], name))
            assert data is not None, name
            return json.loads(data)
        finally:
            await store.close()

    return asyncio.run(read())


@pytest.fixture(scope="module")
def site():
    with target_site() as (s, _):
        yield s


@pytest.fixture(scope="module")
def probe_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host(LOCAL_PROBES)


def test_collect_inline_then_ingest(probe_host: HostProcess, site) -> None:
    headers = ws()
    upload(probe_host, headers, f"spx/run1/{TINY.name}.json", Path(f"{TINY}.json"))
    upload(probe_host, headers, f"spx/run1/{TINY.name}.txt.gz", Path(f"{TINY}.txt.gz"))
    upload(probe_host, headers, "db/slow.log", FIXTURES / "slowlog" / "small.log")
    site.requests.clear()
    body = {
        "correlation_id": "corr-col-001",
        "spx_dirs": ["spx/run1"],
        "slow_log_path": "db/slow.log",
        "base_url": site.url,
        "url_paths": ["/health", "/slow?ms=150&customer_id=42", "/boom"],
        "headers_allowlist": ["x-request-id"],
        "headers": {"x-request-id": "demo-run-123", "authorization": "Bearer sekrit"},
        "sample_count": 3,
        "concurrency": 2,
        "timeout_ms": 3000,
        "warmup_count": 1,
    }
    r = call(probe_host, "collect.run", body, headers)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["state"] == "completed"
    assert out["correlation_id"] == "corr-col-001"
    assert out["artifact_counts"] == {"spx_files": 2, "inventory_items": 3, "timing_samples": 9}
    # What the site saw: GET only, the allow-listed header, never the other one; 4 requests per path.
    assert len(site.requests) == 12
    assert all(q["headers"].get("x-request-id") == "demo-run-123" for q in site.requests)
    assert not any("authorization" in q["headers"] for q in site.requests)
    assert (
        sum(q["path"] == "/slow?ms=150&customer_id=42" for q in site.requests) == 4
    )  # the probe sends the query; the record drops it

    artifacts = out["ingest_artifacts"]
    assert artifacts[-1] == {"blob": f"bundles/{out['bundle_id']}/timings.json"}
    val = call(probe_host, "artifacts.validate", {"artifacts": artifacts}, headers).json()
    timings = next(x for x in val["results"] if x["detected_type"] == "ttfb_timings")
    assert val["counts"]["failed"] == 0
    assert timings["metadata"]["samples"] == 12
    ing = call(probe_host, "artifacts.ingest", {"artifacts": artifacts}, headers).json()
    ana = call(
        probe_host, "analysis.run", {"normalized_snapshot_id": ing["normalized_snapshot_id"], "top_n": 20}, headers
    ).json()
    ttfb = {a["subject"]: a["value_ms"] for a in ana["aggregates"]["endpoint_ttfb_ms"]}
    assert set(ttfb) == {"GET /health", "GET /slow", "GET /boom"}
    assert ttfb["GET /slow"] >= 150 > ttfb["GET /health"]


def test_recorded_samples_have_ordered_phases_and_redactions(probe_host: HostProcess, site) -> None:
    headers = ws()
    body = {
        "spx_dirs": [],
        "base_url": site.url,
        "url_paths": ["/health?token=abc", "/slow?ms=1000"],
        "headers_allowlist": ["x-api-key"],
        "headers": {"x-api-key": "k-123"},
        "sample_count": 2,
        "timeout_ms": 300,
        "warmup_count": 0,
    }
    out = call(probe_host, "collect.run", body, headers).json()
    timings = httpx.post(
        f"{probe_host.base_url}/api/tools/artifacts.validate",
        json={"artifacts": out["ingest_artifacts"]},
        headers=headers,
        timeout=60,
    ).json()
    assert timings["counts"]["ok"] == 1
    samples = read_bundle(probe_host, headers, out["ingest_artifacts"][-1]["blob"])["samples"]
    manifest = read_bundle(probe_host, headers, f"bundles/{out['bundle_id']}/manifest.json")
    fast = [s for s in samples if s["url_path"] == "/health"]
    assert len(fast) == 2
    assert all(s["status"] == 200 and s["error"] is None for s in fast)
    for s in fast:
        t = s["timings_ms"]
        assert t["tls"] is None
        assert 0 <= t["dns"] <= t["connect"] <= t["ttfb"] <= t["total"]
    slow = [s for s in samples if s["url_path"] == "/slow"]
    assert all(s["error"] == "timeout after 300 ms" and s["status"] is None for s in slow)
    assert manifest["url_paths"] == ["/health", "/slow"]
    assert manifest["headers"] == ["x-api-key"]
    assert "token=abc" not in json.dumps(manifest) + json.dumps(samples)
    assert "k-123" not in json.dumps(manifest)


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("http://127.0.0.1:9/", "https"),
        ("https://127.0.0.1:9/", "non-public"),
        ("https://169.254.169.254/latest/meta-data", "non-public"),
        ("https://user:pw@example.com/", "credentials"),
        ("ftp://example.com/", "https"),
        ("https://[::1]:9/", "non-public"),
    ],
)
def test_outbound_guard_refuses_before_probing(host: HostProcess, base_url: str, problem: str) -> None:
    headers = ws()
    r = call(host, "collect.run", {"base_url": base_url, "url_paths": ["/"], "spx_dirs": []}, headers)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert problem in r.json()["error"]["message"]
    assert call(host, "artifacts.validate", {"artifacts": [{"blob": "bundles"}]}, headers).json()["counts"]["ok"] == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sample_count", 21),
        ("concurrency", 5),
        ("timeout_ms", 199),
        ("timeout_ms", 15001),
        ("warmup_count", 6),
        ("url_paths", ["no-slash"]),
        ("url_paths", []),
        ("headers", {"bad header": "x"}),
        ("output_dir", "../x"),
    ],
)
def test_collect_ranges_are_validated(host: HostProcess, field: str, value) -> None:
    body = {"base_url": "https://example.com", "url_paths": ["/"], field: value}
    r = call(host, "collect.run", body, ws())
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"


@pytest.fixture(scope="module")
def durable(start_host: Callable[..., HostProcess]) -> HostProcess:
    """A host whose inline budget is 1 s, so any real collect.run continues as an orchestration."""
    return start_host({**LOCAL_PROBES, "FIREBREAK_PERF_COLLECT_INLINE_SECONDS": "1"})


def wait_done(host: HostProcess, status_url: str, headers: dict[str, str] | None = None) -> dict:
    """Poll the app's run status route until the run's state is final."""
    deadline = time.monotonic() + 120
    while True:
        status = httpx.get(host.base_url + status_url, headers=headers, timeout=30).json()
        if status["state"] not in ("pending", "running") or time.monotonic() > deadline:
            return status
        time.sleep(0.5)


async def test_long_runs_continue_as_an_orchestration_over_mcp_too(durable: HostProcess, site) -> None:
    async with Client(f"{durable.base_url}/api/mcp") as client:
        result = await client.call_tool(
            "collect.run",
            {
                "correlation_id": "corr-col-mcp",
                "base_url": site.url,
                "url_paths": ["/health"],
                "sample_count": 2,
                "warmup_count": 0,
            },
        )
        out = result.structured_content
        assert not result.is_error
        assert out["state"] == "running"
        assert out["correlation_id"] == "corr-col-mcp"
        assert out["status_url"] == f"/api/runs/{out['run_id']}"
        status = await asyncio.to_thread(wait_done, durable, out["status_url"])
        assert status["state"] == "completed"
        assert status["output"]["artifact_counts"]["timing_samples"] == 2
        assert status["output"]["correlation_id"] == "corr-col-mcp"
        # The same status through the get_run_status tool.
        again = await client.call_tool("get_run_status", {"run_id": out["run_id"]})
        assert not again.is_error
        assert again.structured_content["output"] == status["output"]


def test_long_runs_continue_as_an_orchestration(durable: HostProcess, site) -> None:
    headers = ws()
    body = {
        "base_url": site.url,
        "url_paths": ["/health", "/slow?ms=50"],
        "sample_count": 3,
        "timeout_ms": 2000,
        "warmup_count": 1,
    }
    out = call(durable, "collect.run", body, headers).json()
    assert out["state"] == "running"
    assert out["run_id"]
    assert out["ingest_artifacts"] == []
    assert "instance_id" not in out
    status = wait_done(durable, out["status_url"], headers)
    assert status["state"] == "completed", status
    result = status["output"]
    assert result["bundle_id"] == out["bundle_id"]
    assert result["artifact_counts"]["timing_samples"] == 6
    assert status["progress"] == {"stage": "done", "paths_done": 2, "paths_total": 2}
    ing = call(durable, "artifacts.ingest", {"artifacts": result["ingest_artifacts"]}, headers)
    assert ing.status_code == 200
    assert ing.json()["counts"]["endpoints"] == 2


def test_https_probes_measure_the_tls_handshake(start_host: Callable[..., HostProcess], tmp_path: Path) -> None:
    with target_site(tls_dir=tmp_path) as (tls_site, cert):
        secure = start_host({"FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "SSL_CERT_FILE": str(cert)})
        headers = ws()
        out = call(
            secure,
            "collect.run",
            {"base_url": tls_site.url, "url_paths": ["/health"], "sample_count": 2, "warmup_count": 0},
            headers,
        ).json()
        assert out["state"] == "completed", out
        ing = call(secure, "artifacts.ingest", {"artifacts": out["ingest_artifacts"]}, headers).json()
        ana = call(secure, "analysis.run", {"normalized_snapshot_id": ing["normalized_snapshot_id"]}, headers).json()
        [endpoint] = ana["aggregates"]["endpoint_ttfb_ms"]
        assert endpoint["subject"] == "GET /health"
        assert len(tls_site.requests) == 2
        for sample in read_bundle(secure, headers, out["ingest_artifacts"][-1]["blob"])["samples"]:
            t = sample["timings_ms"]
            assert sample["status"] == 200
            assert 0 <= t["dns"] <= t["connect"] <= t["tls"] <= t["ttfb"] <= t["total"]
