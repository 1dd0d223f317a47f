"""Durable runs belong to whoever started them: status and cancel for the owner only, no management URL or
key in any answer, no secret in the task hub, and a start that did not come from the app does nothing.

Hosts here are configured like Azure where it matters: function keys and an explicit system key.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from shared.app.capabilities import catalogue
from shared.app.wiring import load_settings
from shared.core.settings import Settings
from shared.perf.artifacts import workspace_prefix
from shared.storage.blob import BlobStore
from shared.storage.cosmos import CosmosDatabase
from tests.support.mcp_http import mcp_client
from tests.support.target_site import target_site

FUNCTION_KEY, SYSTEM_KEY = "fk-runs-test", "sk-runs-system-key-7c1d"
MGMT = "/runtime/webhooks/durabletask"
LOCAL_PROBES = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
LEAKS = ("/runtime/webhooks", "code=", SYSTEM_KEY)


def principal(workspace: str, user: str = "alice") -> dict[str, str]:
    return {"x-functions-key": FUNCTION_KEY, "x-dev-workspace": workspace, "x-dev-user": user}


def new_ws(tag: str) -> str:
    return f"ws-{tag}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def site():
    with target_site() as (s, _):
        yield s


@pytest.fixture(scope="module")
def keyed(start_host: Callable[..., HostProcess]) -> HostProcess:
    """Function keys enforced, the system key set explicitly, and every real collect.run continued under Durable."""
    return start_host(
        {
            **LOCAL_PROBES,
            "DEVHOST_FUNCTION_KEY": FUNCTION_KEY,
            "DEVHOST_SYSTEM_KEY": SYSTEM_KEY,
            "FIREBREAK_PERF_COLLECT_INLINE_SECONDS": "1",
        }
    )


@pytest.fixture(scope="module")
def inline(start_host: Callable[..., HostProcess]) -> HostProcess:
    """The same keys, collect.run inline (the default budget)."""
    return start_host({**LOCAL_PROBES, "DEVHOST_FUNCTION_KEY": FUNCTION_KEY, "DEVHOST_SYSTEM_KEY": SYSTEM_KEY})


def assert_no_leak(text: str) -> None:
    for needle in LEAKS:
        assert needle not in text, f"{needle!r} in {text[:500]}"


def run_status(host: HostProcess, run_id: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(f"{host.base_url}/api/runs/{run_id}", headers=headers, timeout=30)


def wait_final(host: HostProcess, run_id: str, headers: dict[str, str], timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        r = run_status(host, run_id, headers)
        assert r.status_code == 200, r.text
        assert_no_leak(r.text)
        if r.json()["state"] not in ("pending", "running") or time.monotonic() > deadline:
            return r.json()
        time.sleep(0.2)


def wait_instance(host: HostProcess, instance_id: str, timeout: float = 60) -> dict:
    """The management API's view (system key), for instances the app never answers for."""
    deadline = time.monotonic() + timeout
    while True:
        r = httpx.get(
            f"{host.base_url}{MGMT}/instances/{instance_id}",
            params={"code": SYSTEM_KEY, "showHistory": "true", "showHistoryOutput": "true"},
            timeout=30,
        )
        if r.status_code != 202 or time.monotonic() > deadline:
            return r.json()
        time.sleep(0.2)


def scrub(body: dict, run_id: str) -> dict:
    """An error envelope without what legitimately differs between two calls (the id asked for, the correlation id)."""
    text = json.dumps(body).replace(run_id, "<id>")
    data = json.loads(text)
    data["error"].pop("correlation_id")
    return data


def test_only_the_owner_reads_and_cancels_a_run_over_http(keyed: HostProcess) -> None:
    a, b = principal(new_ws("a")), principal(new_ws("b"))
    r = httpx.post(f"{keyed.base_url}/api/diagnostics", headers=a, timeout=30)
    assert r.status_code == 202, r.text
    assert_no_leak(r.text + json.dumps(dict(r.headers)))
    run_id = r.json()["run_id"]
    assert r.headers["Location"] == r.json()["status_url"] == f"/api/runs/{run_id}"

    done = wait_final(keyed, run_id, a)
    assert done["state"] == "completed"
    assert done["kind"] == "diagnostics"
    assert done["output"]["status"] == "ok"
    assert done["progress"] == {"stage": "done", "checks": 8}
    assert done["error"] is None

    unknown = uuid.uuid4().hex
    for who in (b, principal(a["x-dev-workspace"], "mallory")):  # another workspace; another user of the same workspace
        theirs, nobody = run_status(keyed, run_id, who), run_status(keyed, unknown, who)
        assert theirs.status_code == nobody.status_code == 404
        assert scrub(theirs.json(), run_id) == scrub(nobody.json(), unknown)
        cancel = httpx.post(f"{keyed.base_url}/api/runs/{run_id}/cancel", headers=who, timeout=30)
        assert cancel.status_code == 404
        assert scrub(cancel.json(), run_id) == scrub(nobody.json(), unknown)
    assert run_status(keyed, "not-a-run-id", b).json()["error"]["code"] == "NOT_FOUND"

    # The owner's run is untouched by the attempts; cancelling a finished run is a clear CONFLICT.
    assert run_status(keyed, run_id, a).json()["state"] == "completed"
    conflict = httpx.post(f"{keyed.base_url}/api/runs/{run_id}/cancel", headers=a, timeout=30)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["details"]["state"] == "completed"


async def test_only_the_owner_reads_and_cancels_a_run_over_mcp(keyed: HostProcess, site) -> None:
    a, b = principal(new_ws("a")), principal(new_ws("b"))
    args = {
        "base_url": site.url,
        "url_paths": ["/slow?ms=400"],
        "sample_count": 20,
        "concurrency": 1,
        "timeout_ms": 2000,
        "warmup_count": 0,
    }
    async with mcp_client(keyed, a) as client:
        started = await client.call_tool("collect.run", args)
        assert not started.is_error
        assert started.structured_content["state"] == "running"
        assert_no_leak(json.dumps(started.structured_content) + json.dumps([c.model_dump() for c in started.content]))
        run_id = started.structured_content["run_id"]

        async with mcp_client(keyed, b) as other:
            for tool in ("get_run_status", "cancel_run"):
                theirs = await other.call_tool(tool, {"run_id": run_id})
                nobody = await other.call_tool(tool, {"run_id": uuid.uuid4().hex})
                assert theirs.is_error
                assert nobody.is_error
                assert (
                    theirs.structured_content["error"]["code"]
                    == nobody.structured_content["error"]["code"]
                    == "NOT_FOUND"
                )

        mine = await client.call_tool("get_run_status", {"run_id": run_id})
        assert not mine.is_error
        assert mine.structured_content["state"] in ("pending", "running")
        cancelled = await client.call_tool("cancel_run", {"run_id": run_id, "reason": "enough"})
        assert not cancelled.is_error
        assert cancelled.structured_content["state"] == "cancelled"
        again = await client.call_tool("cancel_run", {"run_id": run_id})  # idempotent on a cancelled run
        assert not again.is_error
        assert again.structured_content["state"] == "cancelled"
        for result in (mine, cancelled, again):
            assert_no_leak(json.dumps(result.structured_content))
    status = await asyncio.to_thread(wait_instance, keyed, run_id)
    assert status["runtimeStatus"] == "Terminated"


def _task_hub_text(host: HostProcess) -> str:
    """Every blob of the host's task hub container (instances: history, input, output, custom status)."""

    async def read() -> str:
        from azure.storage.blob.aio import BlobServiceClient

        service = BlobServiceClient.from_connection_string(host.env["AzureWebJobsStorage"])
        try:
            container = service.get_container_client(f"durable-{host.env['FIREBREAK_TASK_HUB'].lower()}"[:63])
            parts = [
                (await (await container.download_blob(blob.name)).readall()).decode()
                async for blob in container.list_blobs()
            ]
            return "\n".join(parts)
        finally:
            await service.close()

    return asyncio.run(read())


def _workspace_blobs(host: HostProcess, workspace: str) -> dict[str, str]:
    async def read() -> dict[str, str]:
        store = BlobStore(Settings.from_env(host.env))

        async def text(name: str) -> str:
            data = await store.get(name)
            assert data is not None, f"{name} was listed but is gone"
            return data.decode()

        try:
            return {n: await text(n) async for n in store.list(workspace_prefix(workspace) + "/")}
        finally:
            await store.close()

    return asyncio.run(read())


def _runs_container_text(host: HostProcess, run_id: str) -> tuple[str, bool]:
    """(the run record as stored, whether its secrets document still exists)."""

    async def read() -> tuple[str, bool]:
        db = CosmosDatabase(load_settings(host.env), catalogue().containers.values())
        try:
            c = await db.container("runs")
            return json.dumps(await c.read(run_id, run_id)), (
                await c.read(f"secrets-{run_id}", f"secrets-{run_id}")
            ) is not None
        finally:
            await db.close()

    return asyncio.run(read())


def test_planted_secrets_never_reach_the_task_hub_the_bundle_or_an_answer(keyed: HostProcess, site) -> None:
    a = principal(new_ws("sec"))
    tag = uuid.uuid4().hex[:10]
    auth, api_key, token = f"Bearer SECRET-AUTH-{tag}", f"SECRET-KEY-{tag}", f"SECRET-TOK-{tag}"
    body = {
        "base_url": site.url,
        "url_paths": ["/health", f"/slow?ms=5&token={token}"],
        "sample_count": 2,
        "warmup_count": 1,
        "timeout_ms": 2000,
        "headers": {"Authorization": auth, "X-Api-Key": api_key},
        "headers_allowlist": ["authorization", "x-api-key"],
        "redaction_rules": {"strip_query_params": True},
    }
    site.requests.clear()
    r = httpx.post(f"{keyed.base_url}/api/tools/collect.run", json=body, headers=a, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "running", r.text
    assert_no_leak(r.text)
    run_id = r.json()["run_id"]
    diag = httpx.post(f"{keyed.base_url}/api/diagnostics", headers=a, timeout=30).json()["run_id"]

    done = wait_final(keyed, run_id, a)
    assert done["state"] == "completed", done
    assert wait_final(keyed, diag, a)["state"] == "completed"
    # The probes did use the secrets: the site saw both headers and the query string.
    # (The MCP test's cancelled run may still finish the probe activity it was in: its path is /slow?ms=400.)
    seen = [q for q in site.requests if q["path"] in ("/health", f"/slow?ms=5&token={token}")]
    assert len(seen) == 6
    assert all(q["headers"].get("authorization") == auth and q["headers"].get("x-api-key") == api_key for q in seen)
    assert sum(q["path"] == f"/slow?ms=5&token={token}" for q in seen) == 3

    hub = _task_hub_text(keyed)
    # both instances are there to scan
    assert run_id in hub
    assert diag in hub
    bundle = _workspace_blobs(keyed, a["x-dev-workspace"])
    assert any(n.endswith("/manifest.json") for n in bundle)
    assert any(n.endswith("/timings.json") for n in bundle)
    manifest = json.loads(next(v for n, v in bundle.items() if n.endswith("/manifest.json")))
    assert manifest["headers"] == ["authorization", "x-api-key"] or sorted(manifest["headers"]) == [
        "Authorization",
        "X-Api-Key",
    ]
    record, secrets_left = _runs_container_text(keyed, run_id)
    assert not secrets_left  # dropped when the run finished
    for where, text in {
        "task hub": hub,
        "bundle": json.dumps(bundle),
        "run record": record,
        "status": json.dumps(done),
        "host log": keyed.log(),
    }.items():
        for secret in (f"SECRET-AUTH-{tag}", api_key, token):
            assert secret not in text, f"{secret} found in the {where}"


def _collect_inline(host: HostProcess, headers: dict[str, str], site_url: str) -> str:
    r = httpx.post(
        f"{host.base_url}/api/tools/collect.run",
        json={"base_url": site_url, "url_paths": ["/health"], "sample_count": 1, "warmup_count": 0},
        headers=headers,
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "completed", r.text
    return r.json()["bundle_id"]


def test_a_forged_start_with_another_workspace_does_nothing(inline: HostProcess, site) -> None:
    # Inline collect runs build the victim's state; the forgery goes through the management API.
    host = inline
    victim = principal(new_ws("victim"))
    first = _collect_inline(host, victim, site.url)
    before = _workspace_blobs(host, victim["x-dev-workspace"])
    site.requests.clear()

    forged_plan = {
        "workspace_id": victim["x-dev-workspace"],
        "bundle_id": "bundle_20260101_000000_0123456789",
        "created_at": "2026-01-01T00:00:00+00:00",
        "base_url": site.url,
        "url_paths": ["/health"],
        "headers": {},
        "probe": {"sample_count": 1, "concurrency": 1, "timeout_ms": 1000, "warmup_count": 0},
        "redaction_rules": {"strip_query_params": True, "redact_url_userinfo": True},
        "recorded": {"base_url": site.url, "headers": {}, "headers_dropped": []},
        "inventory": [],
        "retention": {"keep_last_n": 1, "ttl_days": None},
    }
    forged = {}
    for name, payload in (
        ("perf_collect_orchestrator", {"plan": forged_plan, "run_id": first, "correlation_id": "forged"}),
        ("diagnostics_orchestrator", {"checks": ["cosmos_read_write"], "run_id": uuid.uuid4().hex}),
    ):
        r = httpx.post(
            f"{host.base_url}{MGMT}/orchestrators/{name}", params={"code": SYSTEM_KEY}, json=payload, timeout=30
        )
        assert r.status_code == 202, r.text
        forged[name] = wait_instance(host, r.json()["id"])

    for name, status in forged.items():
        assert status["runtimeStatus"] == "Failed", (name, status)
        assert "not started by the app" in json.dumps(status), status
        scheduled = {e.get("Name") for e in status.get("historyEvents", []) if e.get("EventType") == "TaskScheduled"}
        assert scheduled <= {"perf_collect_claim", "runs_claim"}, scheduled  # nothing after the refused claim
    assert [q for q in site.requests if q["path"] == "/health"] == []  # no probe
    assert _workspace_blobs(host, victim["x-dev-workspace"]) == before  # nothing written, nothing pruned
    assert any(first in n for n in before)


def test_restarting_a_finished_run_by_its_instance_id_does_nothing(keyed: HostProcess, site) -> None:
    a = principal(new_ws("replay"))
    r = httpx.post(
        f"{keyed.base_url}/api/tools/collect.run",
        json={"base_url": site.url, "url_paths": ["/health"], "sample_count": 2, "warmup_count": 0},
        headers=a,
        timeout=60,
    )
    run_id = r.json()["run_id"]
    done = wait_final(keyed, run_id, a)
    assert done["state"] == "completed"
    site.requests.clear()
    again = httpx.post(
        f"{keyed.base_url}{MGMT}/orchestrators/perf_collect_orchestrator/{run_id}",
        params={"code": SYSTEM_KEY},
        json={},
        timeout=30,
    )
    assert again.status_code == 202
    status = wait_instance(keyed, run_id)
    assert status["runtimeStatus"] == "Failed"
    assert "already claimed" in json.dumps(status)
    assert [q for q in site.requests if q["path"] == "/health"] == []
    after = run_status(keyed, run_id, a).json()
    # the record keeps the real outcome
    assert after["state"] == "completed"
    assert after["output"] == done["output"]


def test_a_run_that_needs_secrets_without_the_key_is_not_configured(
    start_host: Callable[..., HostProcess], site
) -> None:
    host = start_host({**LOCAL_PROBES, "FIREBREAK_PERF_COLLECT_INLINE_SECONDS": "1", "FIREBREAK_SECRETS_KEY": None})
    headers = {"x-dev-workspace": new_ws("nokey")}
    body = {
        "base_url": site.url,
        "url_paths": ["/health"],
        "sample_count": 1,
        "warmup_count": 0,
        "headers": {"x-api-key": "k"},
        "headers_allowlist": ["x-api-key"],
    }
    r = httpx.post(f"{host.base_url}/api/tools/collect.run", json=body, headers=headers, timeout=60)
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "NOT_CONFIGURED"
    assert "FIREBREAK_SECRETS_KEY" in r.json()["error"]["message"]
    # Without secrets the same run needs no key.
    plain = httpx.post(
        f"{host.base_url}/api/tools/collect.run", json={**body, "headers": {}}, headers=headers, timeout=60
    ).json()
    assert plain["state"] == "running"
    assert wait_final(host, plain["run_id"], headers)["state"] == "completed"


@pytest.mark.parametrize(
    "change",
    [
        {"url_paths": ["/日本"]},
        {"url_paths": ["/a b"]},
        {"headers": {"x-a": "日本"}},
        {"headers": {"x-a": "v\r\nx-b: 1"}},
        {"headers": {"x-a\n": "v"}},
    ],
)
def test_non_ascii_paths_and_header_values_are_a_validation_error(inline: HostProcess, site, change: dict) -> None:
    site.requests.clear()
    body = {
        "base_url": site.url,
        "url_paths": ["/"],
        "sample_count": 1,
        "warmup_count": 0,
        "headers_allowlist": ["x-a"],
        **change,
    }
    r = httpx.post(
        f"{inline.base_url}/api/tools/collect.run", json=body, headers=principal(new_ws("ascii")), timeout=60
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "VALIDATION_ERROR", r.text
    assert [
        q for q in site.requests if q["path"] != "/slow?ms=400"
    ] == []  # (the cancelled MCP run may still be finishing its probe)
