"""A host serving the Durable fixture app, with its own task hub and side-effect directory."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest

from devhost.processes import HostProcess
from devhost.stack import ROOT

FIXTURE_APP = ROOT / "tests" / "fixtures" / "durable_app"
MGMT = "/runtime/webhooks/durabletask"
# The management API always needs the system key (or the master key): the fixture hosts pin it.
SYSTEM_KEY = f"sk-{uuid.uuid4().hex}"


class DurableHost:
    """Helpers over one fixture host: start instances, poll them, read side effects."""

    def __init__(self, host: HostProcess, side_effects: Path) -> None:
        self.host = host
        self.url = host.base_url
        self.side_effects = side_effects
        self.system_key = host.env["DEVHOST_SYSTEM_KEY"]
        # Management API calls go through this client, which presents the system key.
        self.mgmt = httpx.Client(base_url=self.url, headers={"x-functions-key": self.system_key}, timeout=30)

    def start(self, name: str, payload=None, instance_id: str | None = None) -> str:
        path = f"{MGMT}/orchestrators/{name}" + (f"/{instance_id}" if instance_id else "")
        r = self.mgmt.post(
            path,
            content=json.dumps(payload) if payload is not None else b"",
            headers={"content-type": "application/json"},
            timeout=30,
        )
        assert r.status_code == 202, r.text
        return r.json()["id"]

    def status(self, instance_id: str, **query) -> httpx.Response:
        params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in query.items()}
        return self.mgmt.get(f"{MGMT}/instances/{instance_id}", params=params)

    def wait(self, instance_id: str, timeout: float = 60, **query) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.status(instance_id, **query)
            if r.status_code != 202:
                return r.json()
            time.sleep(0.1)
        raise AssertionError(f"{instance_id} still running after {timeout}s: {r.json()}\n{self.host.log()[-3000:]}")

    def wait_status(self, instance_id: str, predicate, timeout: float = 30, **query) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.status(instance_id, **query).json()
            if predicate(body):
                return body
            time.sleep(0.05)
        raise AssertionError(f"condition not met for {instance_id}: {body}")

    def effects(self, key: str) -> list[dict]:
        path = self.side_effects / f"{key}.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def client(self, op: str, **args) -> httpx.Response:
        return httpx.post(f"{self.url}/api/client/{op}", json=args, timeout=60)


@pytest.fixture(scope="session")
def durable_env(app_env, tmp_path_factory) -> dict[str, str]:
    side_effects = tmp_path_factory.mktemp("durable-effects")
    return {
        **app_env,
        "FIREBREAK_TASK_HUB": f"hub{uuid.uuid4().hex[:8]}",
        "DURABLE_TEST_DIR": str(side_effects),
        "DEVHOST_SYSTEM_KEY": SYSTEM_KEY,
    }


def start_fixture_host(start_host, env: dict[str, str]) -> DurableHost:
    host = start_host(env, ready=False, app_dir=FIXTURE_APP)
    return DurableHost(host, Path(env["DURABLE_TEST_DIR"]))


@pytest.fixture(scope="session")
def durable(start_host, durable_env) -> DurableHost:
    return start_fixture_host(start_host, durable_env)


def key() -> str:
    return uuid.uuid4().hex[:12]
