"""Unresolved Key Vault references through the real host: the app serves, and health names the settings.

On Azure a reference the platform cannot resolve yet (the identity's role not propagated on the first start) is
passed to the worker as its literal text; it used to fail settings parsing, and with it every request, as a 500.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from devhost.processes import HostProcess
from shared.app.infra_spec import SECRET_SETTINGS

REFERENCE = "@Microsoft.KeyVault(VaultName=kv-firebreak;SecretName={name})"
# Every secret setting, and non-secret ones whose validators reject the text (a URL, a number).
UNRESOLVED = sorted(SECRET_SETTINGS | {"FIREBREAK_PUBLIC_BASE_URL", "FIREBREAK_RUN_RECORD_TTL_DAYS"})


@pytest.fixture(scope="module")
def unresolved_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({name: REFERENCE.format(name=name.lower().replace("_", "-")) for name in UNRESOLVED})


def test_health_check_names_each_unresolved_setting(unresolved_host: HostProcess) -> None:
    r = httpx.post(f"{unresolved_host.base_url}/api/tools/health.check", json={}, timeout=30)
    assert r.status_code == 200
    report = r.json()
    assert report["status"] == "degraded"
    assert all(store["ok"] for store in report["stores"])  # the stores work: only the settings are wrong
    assert [problem.split(":")[0] for problem in report["settings"]] == UNRESOLVED
    assert (
        "FIREBREAK_SECRETS_KEY: Key Vault reference not resolved — check the app identity's Key Vault Secrets User"
        in report["settings"][UNRESOLVED.index("FIREBREAK_SECRETS_KEY")]
    )
    assert "Key Vault" in report["next_action"]
    assert "kv-firebreak" not in r.text


def test_anonymous_probe_is_ready_and_counts_without_naming(unresolved_host: HostProcess) -> None:
    r = httpx.get(f"{unresolved_host.base_url}/api/health", timeout=30)
    assert r.status_code == 200
    assert r.json()["status"] == "ready"
    assert r.json()["unresolved_settings"] == len(UNRESOLVED)
    assert "FIREBREAK_" not in r.text


def test_tools_still_answer_over_http_and_mcp(unresolved_host: HostProcess) -> None:
    base = unresolved_host.base_url
    assert httpx.post(f"{base}/api/tools/whoami", json={}, timeout=30).status_code == 200
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    r = httpx.post(f"{base}/api/mcp", json=call, headers=headers, timeout=30)
    assert r.status_code == 200
    assert '"isError":false' in r.text.replace(" ", "")


def test_the_log_warns_once_per_setting_by_name_only(unresolved_host: HostProcess) -> None:
    httpx.post(f"{unresolved_host.base_url}/api/tools/whoami", json={}, timeout=30)
    log = unresolved_host.log()
    for name in UNRESOLVED:
        assert log.count(f"{name}: Key Vault reference not resolved") == 1
    assert "kv-firebreak" not in log
