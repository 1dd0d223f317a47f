"""The Durable management API (`/runtime/webhooks/durabletask/...`) is never open: the system key or the
master key is required even when no function key is configured, as the extension requires its system key
on Azure; the durable client binding still carries the key, so the real DurableOrchestrationClient works."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.e2e.durable.conftest import FIXTURE_APP, MGMT, DurableHost, key


def _calls(iid: str) -> list[tuple[str, str, dict]]:
    """One request per management route (method, path, request options)."""
    json_body = {"content": b"{}", "headers": {"content-type": "application/json"}}
    return [
        (
            "POST",
            f"{MGMT}/orchestrators/fan_out",
            {"content": b'{"key": "x", "n": 1}', "headers": {"content-type": "application/json"}},
        ),
        ("POST", f"{MGMT}/orchestrators/fan_out/{iid}-forged", json_body),
        ("GET", f"{MGMT}/instances", {"params": {"showInput": "true"}}),
        ("GET", f"{MGMT}/instances/{iid}", {}),
        ("POST", f"{MGMT}/instances/{iid}/raiseEvent/approval", json_body),
        ("POST", f"{MGMT}/instances/{iid}/terminate", {"params": {"reason": "x"}}),
        ("DELETE", f"{MGMT}/instances/{iid}", {}),
    ]


def _refused_everywhere(base_url: str, iid: str, **auth: dict) -> list[str]:
    """The routes that did NOT answer 401 (empty when every route refused)."""
    leaks = []
    for method, path, options in _calls(iid):
        headers = {**options.get("headers", {}), **auth.get("headers", {})}
        r = httpx.request(
            method,
            base_url + path,
            params={**options.get("params", {}), **auth.get("params", {})},
            content=options.get("content"),
            headers=headers,
            timeout=30,
        )
        if r.status_code != 401:
            leaks.append(f"{method} {path}: {r.status_code}")
    return leaks


def test_system_key_alone_protects_the_management_api(durable: DurableHost) -> None:
    # The session's fixture host has DEVHOST_SYSTEM_KEY and no function, host or master key.
    iid = durable.start("fan_out", {"key": key(), "n": 2})
    assert durable.wait(iid)["runtimeStatus"] == "Completed"
    assert _refused_everywhere(durable.url, iid) == []
    assert _refused_everywhere(durable.url, iid, headers={"x-functions-key": "wrong"}) == []
    assert _refused_everywhere(durable.url, iid, params={"code": durable.system_key + "x"}) == []
    # The key works as a header and as `code=`; the instance was untouched by the refused calls.
    assert durable.mgmt.get(f"{MGMT}/instances/{iid}").json()["runtimeStatus"] == "Completed"
    assert (
        httpx.get(f"{durable.url}{MGMT}/instances/{iid}", params={"code": durable.system_key}, timeout=30).status_code
        == 200
    )
    assert not durable.mgmt.get(f"{MGMT}/instances/{iid}-forged").is_success  # the refused forged start created nothing


def test_real_client_carries_the_system_key(durable: DurableHost) -> None:
    # /api/client/* is an anonymous fixture function using the real DurableOrchestrationClient.
    started = durable.client("start_new", name="fan_out", input={"key": key(), "n": 1})
    assert started.status_code == 202, started.text
    status_url = started.json()["statusQueryGetUri"]
    assert f"code={durable.system_key}" in status_url
    assert durable.wait(started.json()["id"])["runtimeStatus"] == "Completed"
    assert httpx.get(status_url, timeout=30).status_code == 200
    assert httpx.get(status_url.split("?")[0], timeout=30).status_code == 401


@pytest.fixture(scope="module")
def unset_key_host(start_host, durable_env) -> DurableHost:
    env = {
        **durable_env,
        "FIREBREAK_TASK_HUB": f"keys{uuid.uuid4().hex[:6]}",
        "DEVHOST_SYSTEM_KEY": None,
        "DEVHOST_MASTER_KEY": "mk-" + uuid.uuid4().hex,
    }
    return start_host(dict(env.items()), ready=False, app_dir=FIXTURE_APP)


def test_without_a_configured_system_key_a_random_one_guards_and_the_master_key_works(unset_key_host) -> None:
    base, master = unset_key_host.base_url, unset_key_host.env["DEVHOST_MASTER_KEY"]
    assert _refused_everywhere(base, "nope") == []
    with httpx.Client(base_url=base, headers={"x-functions-key": master}, timeout=30) as mgmt:
        r = mgmt.post(
            f"{MGMT}/orchestrators/fan_out",
            content=b'{"key": "m", "n": 1}',
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 202
        # The URLs it hands back carry the per-start random system key, which works too.
        status_url = r.json()["statusQueryGetUri"]
        assert "code=" in status_url
        assert master not in status_url
    assert httpx.get(status_url, timeout=30).status_code in (200, 202)
