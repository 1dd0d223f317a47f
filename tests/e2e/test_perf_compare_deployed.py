"""analysis.compare and comparison reports on a host configured as on Azure: dev mode off, function keys on.

Each caller is an API key of its own workspace; artifacts arrive through POST /api/artifacts (local paths
are off), and every read of another workspace's snapshots, reports or profiles is NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from shared.tools.deps import Deps
from tests.unit.perf.compare_fixtures import FRAMEWORK, SMALL_LOG, SPX_DIR, TIMINGS, spx_pair, timings_scaled

FUNCTION_KEY = "deployed-host-key"


@pytest.fixture(scope="module")
def deployed(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host(
        {
            "FIREBREAK_DEV_MODE": "false",
            "FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "false",
            "DEVHOST_FUNCTION_KEY": FUNCTION_KEY,
        }
    )


def _caller(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}", "x-functions-key": FUNCTION_KEY}


def _ingest(host: HostProcess, headers: dict[str, str], files: list[Path], prefix: str) -> str:
    refs = []
    for path in files:
        name = f"{prefix}/{path.name}"
        r = httpx.post(
            f"{host.base_url}/api/artifacts",
            params={"name": name},
            content=path.read_bytes(),
            headers=headers,
            timeout=60,
        )
        assert r.status_code == 201, r.text
        refs.append({"blob": name})
    r = _tool(host, "artifacts.ingest", {"artifacts": refs}, headers)
    assert r.status_code == 200, r.text
    return str(r.json()["normalized_snapshot_id"])


def _tool(host: HostProcess, name: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/{name}", json=body, headers=headers, timeout=120)


@pytest.fixture
async def api_keys(deps: Deps) -> AsyncIterator[tuple[str, str]]:
    """An API key in each of two workspaces (revoked afterwards)."""
    minted = [await deps.api_keys.mint("ws-cmp-owner", "olga"), await deps.api_keys.mint("ws-cmp-intruder", "ivan")]
    yield minted[0].key, minted[1].key
    for m in minted:
        await deps.api_keys.revoke(m.key_id)


def test_compare_as_deployed_is_keyed_and_isolated(
    deployed: HostProcess, api_keys: tuple[str, str], tmp_path: Path
) -> None:
    owner_key, intruder_key = api_keys
    owner, intruder = _caller(owner_key), _caller(intruder_key)
    spx = spx_pair(SPX_DIR, FRAMEWORK)
    base = _ingest(deployed, owner, [*spx, SMALL_LOG, TIMINGS], "base")
    cand = _ingest(deployed, owner, [*spx, SMALL_LOG, timings_scaled(tmp_path, "/api/orders", 1.5)], "cand")
    mine = _ingest(deployed, intruder, [TIMINGS], "mine")
    body = {"baseline_snapshot_id": base, "candidate_snapshot_id": cand}

    # Without a principal nothing runs; the function key is not one (app routes are anonymous at the host).
    assert _tool(deployed, "analysis.compare", body, {"x-functions-key": FUNCTION_KEY}).status_code == 401
    assert _tool(deployed, "analysis.compare", body, {}).status_code == 401

    compared = _tool(deployed, "analysis.compare", body, owner)
    assert compared.status_code == 200, compared.text
    assert compared.json()["worst_severity"] in ("P0", "P1", "P2")
    exported = _tool(deployed, "report.export", {"normalized_snapshot_id": cand, "baseline_snapshot_id": base}, owner)
    assert exported.status_code == 200, exported.text
    report = exported.json()
    run = _tool(deployed, "runs.get", {"snapshot_id": cand}, owner).json()
    profile_urls = [u for p in run["profiles"] for u in p["downloads"].values()]
    assert profile_urls
    urls = [*report["downloads"].values(), *profile_urls]
    for url in urls:
        assert httpx.get(f"{deployed.base_url}{url}", headers=owner, timeout=30).status_code == 200, url

    # The intruder: its own id beside the owner's, the owner's ids alone, the owner's files: all NOT_FOUND,
    # answered the same as an id nobody has.
    nobody = "0" * 64
    for other in (
        {"baseline_snapshot_id": base, "candidate_snapshot_id": mine},
        {"baseline_snapshot_id": mine, "candidate_snapshot_id": cand},
        {"baseline_snapshot_id": nobody, "candidate_snapshot_id": mine},
    ):
        r = _tool(deployed, "analysis.compare", other, intruder)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "NOT_FOUND"
    r = _tool(deployed, "report.export", {"normalized_snapshot_id": mine, "baseline_snapshot_id": base}, intruder)
    assert r.status_code == 404
    for url in urls:
        assert httpx.get(f"{deployed.base_url}{url}", headers=intruder, timeout=30).status_code == 404, url
    assert all(
        r["report_id"] != report["report_id"]
        for r in _tool(deployed, "runs.get", {"snapshot_id": mine}, intruder).json()["reports"]
    )

    # Neither key ever reaches a response or the host's log.
    log = deployed.log()
    for key in api_keys:
        secret = key.split("_", 2)[2]
        assert secret not in log
        assert secret not in compared.text
        assert secret not in exported.text
