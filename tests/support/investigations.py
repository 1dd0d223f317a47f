"""Driving investigations over HTTP in e2e tests: start one from an alert, poll it until it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from devhost.processes import HostProcess

TERMINAL = ("completed", "failed", "cancelled")


def wait_done(host: HostProcess, inv_id: str, headers: dict[str, str], timeout: float = 180) -> dict[str, Any]:
    """GET the investigation until its status is final; fails the test (with the host's log) past `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        r = httpx.get(f"{host.base_url}/api/investigations/{inv_id}", headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        if body["status"] in TERMINAL:
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"investigation {inv_id} did not finish: {body}\n{host.log()[-3000:]}")
        time.sleep(0.25)


def investigate(host: HostProcess, alert: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """POST the alert (one firing alert), wait for the investigation to end, return its view."""
    r = httpx.post(f"{host.base_url}/api/investigations", json=alert, headers=headers, timeout=60)
    assert r.status_code == 202, r.text
    return wait_done(host, r.json()["started"][0]["investigation_id"], headers)


@dataclass
class Run:
    """The run an activity works for: its id, workspace, starter and stored plan (what the frame loads)."""

    run_id: str
    workspace_id: str
    user_id: str
    plan: dict[str, Any] = field(default_factory=dict)

    async def secrets(self) -> dict[str, Any]:
        return {}
