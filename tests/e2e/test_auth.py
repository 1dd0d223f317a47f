"""Identity and function keys end to end: no key, wrong key, good key; API keys, Entra tokens, App Service headers."""

from __future__ import annotations

import base64
import json
import time

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from devhost.processes import HostProcess
from shared.tools.deps import Deps
from tests.support.fake_entra import FakeEntra


@pytest.fixture(scope="session")
def entra():
    fake = FakeEntra()
    yield fake
    fake.close()


@pytest.fixture(scope="session")
def prod_host(start_host, entra) -> HostProcess:
    """Dev mode off: every call needs a principal."""
    return start_host({"FIREBREAK_DEV_MODE": "false", **entra.settings()})


@pytest.fixture(scope="session")
def keyed_host(start_host) -> HostProcess:
    """Function keys configured: the host enforces them like Azure does."""
    return start_host(
        {
            "DEVHOST_FUNCTION_KEY": "host-key-1",
            "DEVHOST_MASTER_KEY": "master-key-1",
            "DEVHOST_FUNCTION_KEYS": json.dumps({"mcp": "mcp-only-key"}),
        }
    )


@pytest.fixture(scope="session")
def appservice_host(start_host) -> HostProcess:
    return start_host({"FIREBREAK_DEV_MODE": "false", "FIREBREAK_TRUST_APPSERVICE_AUTH": "true"})


def whoami(host: HostProcess, headers: dict[str, str] | None = None, **kwargs) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/tools/whoami", json={}, headers=headers or {}, **kwargs)


def test_no_credentials_outside_dev_mode_is_401(prod_host: HostProcess) -> None:
    r = whoami(prod_host)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    error = r.json()["error"]
    assert error["code"] == "UNAUTHORIZED"
    assert any("API key" in s for s in error["recovery_suggestions"])


def test_mcp_without_credentials_is_401(prod_host: HostProcess) -> None:
    r = httpx.post(
        f"{prod_host.base_url}/api/mcp",
        headers={"accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(
    "header", ["Bearer fbk_0000000000000000_" + "A" * 43, "Bearer fbk_garbage", "Basic dXNlcjpwYXNz", "Bearer"]
)
def test_wrong_or_malformed_credentials_are_401(prod_host: HostProcess, header: str) -> None:
    r = whoami(prod_host, {"authorization": header})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"


async def test_api_key_resolves_to_its_workspace(prod_host: HostProcess, deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-e2e", "dora", "e2e")
    r = whoami(prod_host, {"authorization": f"Bearer {minted.key}"})
    assert r.status_code == 200
    assert r.json() == {"workspace_id": "ws-e2e", "user_id": "dora", "source": "api_key"}
    await deps.api_keys.revoke(minted.key_id)


async def test_wrong_key_is_401_even_in_dev_mode(host: HostProcess, deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-e2e", "erin")
    assert whoami(host, {"authorization": f"Bearer {minted.key[:-2]}zz"}).status_code == 401
    assert whoami(host).json()["source"] == "dev"


async def test_api_key_over_mcp(prod_host: HostProcess, deps: Deps) -> None:
    from mcp import Client

    minted = await deps.api_keys.mint("ws-mcp", "frank")
    import httpx2

    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {minted.key}"}) as http:
        from mcp.client.streamable_http import streamable_http_client

        async with Client(
            streamable_http_client(f"{prod_host.base_url}/api/mcp", http_client=http), mode="2026-07-28"
        ) as client:
            result = await client.call_tool("whoami", {})
    assert result.structured_content == {"workspace_id": "ws-mcp", "user_id": "frank", "source": "api_key"}


def test_entra_token_resolves_to_tenant_and_object_id(prod_host: HostProcess, entra: FakeEntra) -> None:
    r = whoami(prod_host, {"authorization": f"Bearer {entra.token()}"})
    assert r.status_code == 200
    assert r.json() == {"workspace_id": "tenant-1", "user_id": "user-oid-1", "source": "entra"}


@pytest.mark.parametrize(
    "overrides",
    [
        {"exp": int(time.time()) - 3600},
        {"aud": "api://someone-else"},
        {"iss": "https://login.test/other/v2.0"},
        {"key": rsa.generate_private_key(public_exponent=65537, key_size=2048)},
        {"oid": None, "sub": None},
    ],
    ids=["expired", "wrong-audience", "wrong-issuer", "foreign-signature", "no-user-claim"],
)
def test_bad_entra_tokens_are_401(prod_host: HostProcess, entra: FakeEntra, overrides) -> None:
    r = whoami(prod_host, {"authorization": f"Bearer {entra.token(**overrides)}"})
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"


def test_appservice_headers_only_when_trusted(appservice_host: HostProcess, prod_host: HostProcess) -> None:
    claims = {"claims": [{"typ": "http://schemas.microsoft.com/identity/claims/tenantid", "val": "tenant-as"}]}
    headers = {
        "x-ms-client-principal-id": "as-user",
        "x-ms-client-principal": base64.b64encode(json.dumps(claims).encode()).decode(),
    }
    trusted = whoami(appservice_host, headers)
    assert trusted.status_code == 200
    assert trusted.json() == {"workspace_id": "tenant-as", "user_id": "as-user", "source": "appservice"}
    assert whoami(prod_host, headers).status_code == 401
    assert whoami(appservice_host, {**headers, "x-ms-client-principal": "%%%"}).status_code == 401


def test_app_routes_are_anonymous_at_the_host_even_with_keys_configured(keyed_host: HostProcess) -> None:
    """The function key guards only the host's own endpoints (tests/e2e/durable/test_management_keys.py):
    every app route is anonymous at the host, so a caller without it reaches the app, which authenticates
    the call itself (dev mode on this host; with it off, the app's 401 envelope: the tests above)."""
    base = keyed_host.base_url
    for headers in ({}, {"x-functions-key": "nope"}, {"x-functions-key": "host-key-1"}):
        assert httpx.post(f"{base}/api/tools/health.check", json={}, headers=headers).status_code == 200
    for path in ("/api/tools", "/api/openapi.json", "/api/docs", "/api/health"):
        assert httpx.get(f"{base}{path}").status_code == 200, path
    mcp = httpx.post(
        f"{base}/api/mcp",
        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    )
    assert mcp.status_code == 200


def test_without_credentials_the_app_answers_not_the_host(prod_host: HostProcess) -> None:
    """No bare 401 from the host: the app's envelope and its challenge, on per-tool HTTP and MCP alike."""
    for path in ("/api/tools/health.check", "/api/mcp"):
        r = httpx.post(f"{prod_host.base_url}{path}", json={}, headers={"accept": "application/json"})
        assert r.status_code == 401, path
        assert r.json()["error"]["code"] == "UNAUTHORIZED", path
        assert r.headers["www-authenticate"].startswith("Bearer"), path


def test_routes_are_open_without_configured_keys(host: HostProcess) -> None:
    assert httpx.post(f"{host.base_url}/api/tools/health.check", json={}).status_code == 200


async def test_secrets_never_reach_the_logs(prod_host: HostProcess, entra: FakeEntra, deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-logs", "gina")
    token = entra.token()
    whoami(prod_host, {"authorization": f"Bearer {minted.key}"})
    whoami(prod_host, {"authorization": f"Bearer {token}"})
    whoami(prod_host, {"authorization": f"Bearer {minted.key}x"})
    log = prod_host.log()
    assert minted.key.split("_", 2)[2] not in log
    assert token not in log
    assert '"tool": "whoami"' in log
    assert '"correlation_id": "' in log
