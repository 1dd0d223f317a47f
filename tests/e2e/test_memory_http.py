"""Debug-memory tools over their per-tool HTTP functions: bad input is a 400 that writes nothing."""

from __future__ import annotations

import uuid

import httpx
import pytest

from devhost.processes import HostProcess

ENV = {"os": "linux", "language": "python 3.11"}


@pytest.mark.parametrize(
    ("tool", "body", "field"),
    [
        ("add_incident", {"title": "big steps", "steps": ["x" * 1_000_000], "env": ENV, "worked": True}, "steps"),
        ("add_incident", {"title": "no env", "steps": ["a"], "worked": True}, "env"),
        ("add_incident", {"title": "bad worked", "steps": ["a"], "env": ENV, "worked": "yes"}, "worked"),
        ("add_solution", {"incident_id": "inc_x", "steps": [], "env": ENV}, "steps"),
        ("ranked_solutions", {"query_text": "", "env": ENV}, "query_text"),
        ("record_outcome", {"solution_id": "sol_a_b", "worked": 1, "env": ENV}, "worked"),
        ("ranked_solutions", {"query_text": "redis timeouts", "env": ENV, "limit": True}, "limit"),
        ("list_incidents", {"limit": True}, "limit"),
        (
            "record_outcome",
            {"solution_id": "sol_a_b", "worked": True, "env": ENV, "env_bucket": "garbage"},
            "env_bucket",
        ),
        (
            "add_incident",
            {"title": "t x", "steps": ["a"], "env": ENV, "worked": True, "env_bucket": "garbage"},
            "env_bucket",
        ),
        (
            "add_solution",
            {"incident_id": "inc_x", "steps": ["a"], "env": ENV, "env_bucket": "linux|py3|klingon|any|any"},
            "env_bucket",
        ),
        ("get_incident", {"incident_id": "inc_x/../y"}, "incident_id"),
    ],
)
def test_bad_input_is_400_and_writes_nothing(host: HostProcess, tool: str, body: dict, field: str) -> None:
    workspace = f"ws-http-{uuid.uuid4().hex[:8]}"
    headers = {"x-dev-workspace": workspace}
    r = httpx.post(f"{host.base_url}/api/tools/{tool}", json=body, headers=headers, timeout=30)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert field in [e["field"] for e in r.json()["error"]["details"]["errors"]]
    listed = httpx.post(f"{host.base_url}/api/tools/list_incidents", json={}, headers=headers, timeout=30).json()
    assert listed["incidents"] == []


def test_unknown_ids_are_404(host: HostProcess) -> None:
    headers = {"x-dev-workspace": f"ws-http-{uuid.uuid4().hex[:8]}"}
    r = httpx.post(
        f"{host.base_url}/api/tools/get_incident",
        json={"incident_id": "inc_0000000000000000"},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "NOT_FOUND"
    r = httpx.post(
        f"{host.base_url}/api/tools/record_outcome",
        json={"solution_id": "sol_0000_1111", "worked": True, "env": ENV},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 404
