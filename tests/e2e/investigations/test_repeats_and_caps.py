"""Alertmanager resends firing groups: a repeat joins the running investigation; a workspace has an active cap."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support import scenarios
from tests.support.scenario_mcp_server import serve_scenario

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


def group(*pods: str) -> dict[str, Any]:
    """An Alertmanager webhook with one firing KubePodCrashLooping per pod."""
    return {
        "version": "4",
        "status": "firing",
        "receiver": "firebreak",
        "groupKey": '{}:{alertname="KubePodCrashLooping"}',
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": "KubePodCrashLooping", "namespace": "default", "pod": pod},
                "annotations": {"description": f"Pod default/{pod} is crash looping."},
                "startsAt": "2026-11-23T10:00:00Z",
                "fingerprint": f"fp-{pod}",
            }
            for pod in pods
        ],
    }


@pytest.fixture(scope="module")
def host(start_host) -> Iterator[HostProcess]:
    scenario = scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("11_")))
    # Every tool call waits 1.5 s: the investigations are still running when the repeats arrive.
    with serve_scenario(scenario, delay_s=1.5) as mcp:
        yield start_host(
            {
                **LOCAL,
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
                "FIREBREAK_INVESTIGATIONS_MAX_ACTIVE": "3",
            }
        )


def post(host: HostProcess, body: dict[str, Any], ws: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/investigations", json=body, headers=ws, timeout=60)


def listed(host: HostProcess, ws: dict[str, str]) -> list[str]:
    r = httpx.get(f"{host.base_url}/api/investigations", params={"limit": 100}, headers=ws, timeout=30)
    return [i["investigation_id"] for i in r.json()["investigations"]]


def test_a_resent_group_joins_the_running_investigations(host: HostProcess) -> None:
    ws = {"x-dev-workspace": f"ws-rep-{uuid.uuid4().hex[:8]}"}
    first = post(host, group("a-1", "a-2"), ws)
    assert first.status_code == 202, first.text
    ids = [s["investigation_id"] for s in first.json()["started"]]
    assert not any(s["joined"] for s in first.json()["started"])
    again = post(host, group("a-2", "a-1"), ws)
    assert again.status_code == 202, again.text
    assert {s["investigation_id"]: s["joined"] for s in again.json()["started"]} == dict.fromkeys(ids, True)
    assert sorted(listed(host, ws)) == sorted(ids)  # nothing new started
    # The same alert in another workspace is that workspace's own investigation.
    other = {"x-dev-workspace": f"ws-rep-other-{uuid.uuid4().hex[:8]}"}
    theirs = post(host, group("a-1"), other).json()["started"]
    assert theirs[0]["investigation_id"] not in ids
    assert theirs[0]["joined"] is False
    for inv in ids:  # let them go (and free the workspace)
        httpx.post(f"{host.base_url}/api/investigations/{inv}/cancel", json={}, headers=ws, timeout=30)


def test_the_active_cap_refuses_more_and_starts_nothing(host: HostProcess) -> None:
    ws = {"x-dev-workspace": f"ws-cap-{uuid.uuid4().hex[:8]}"}
    assert post(host, group("b-1", "b-2"), ws).status_code == 202
    before = listed(host, ws)
    r = post(host, group("b-3", "b-4"), ws)  # 2 running + 2 new > 3
    assert r.status_code == 429, r.text
    err = r.json()["error"]
    assert err["code"] == "RATE_LIMITED"
    assert err["details"] == {"active": 2, "requested": 2, "max_active": 3}
    assert listed(host, ws) == before
    # A repeat of a running one still answers (it starts nothing), and one more fits.
    assert post(host, group("b-1", "b-3"), ws).status_code == 202
    assert len(listed(host, ws)) == 3
    for inv in listed(host, ws):
        httpx.post(f"{host.base_url}/api/investigations/{inv}/cancel", json={}, headers=ws, timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and post(host, group("b-9"), ws).status_code == 429:
        time.sleep(0.2)
    assert len(listed(host, ws)) == 4  # once cancelled they no longer count


def test_a_repeat_does_not_join_an_investigation_whose_run_was_stopped_as_a_run(host: HostProcess) -> None:
    """Cancelled through /api/runs (not the investigation route): the record is settled, the repeat starts anew."""
    ws = {"x-dev-workspace": f"ws-stale-{uuid.uuid4().hex[:8]}"}
    first = post(host, group("c-1"), ws).json()["started"][0]["investigation_id"]
    r = httpx.post(f"{host.base_url}/api/runs/{first}/cancel", json={}, headers=ws, timeout=30)
    assert r.status_code == 200, r.text
    again = post(host, group("c-1"), ws).json()["started"][0]
    assert again["joined"] is False
    assert again["investigation_id"] != first
    old = httpx.get(f"{host.base_url}/api/investigations/{first}", headers=ws, timeout=30).json()
    assert old["status"] == "cancelled"
    page = httpx.get(f"{host.base_url}/api/investigations", headers=ws, timeout=30).json()["investigations"]
    assert {i["investigation_id"]: i["status"] for i in page}[first] == "cancelled"  # the record was settled
    httpx.post(f"{host.base_url}/api/investigations/{again['investigation_id']}/cancel", json={}, headers=ws)
