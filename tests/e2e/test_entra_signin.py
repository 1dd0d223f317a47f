"""Entra ID sign-in end to end (issue #29): a real MCP client (the Python SDK's OAuthClientProvider) discovers the
Protected Resource Metadata from the 401 challenge, signs in at the Entra-shaped double (authorize with PKCE, token)
and lists and calls tools; forged, foreign, expired and under-scoped tokens are refused with the envelope and the
right WWW-Authenticate; the REST routes take the same token and take the caller only from it."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from devhost.processes import HostProcess, free_port
from tests.support.fake_entra import FakeEntra

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
REDIRECT = "http://127.0.0.1:33418/callback"


@dataclass
class SignInHost:
    host: HostProcess
    entra: FakeEntra
    resource: str
    metadata_url: str
    scope: str


def start_signin_host(start_host: Callable[..., HostProcess], **extra: str) -> Iterator[SignInHost]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    resource = f"{base}/api/mcp"
    entra = FakeEntra(tenant=f"tenant-{uuid.uuid4().hex[:8]}", identifier_uris=[resource, "api://firebreak-e2e"])
    host = start_host(
        {
            "FIREBREAK_DEV_MODE": "false",
            "FIREBREAK_PUBLIC_BASE_URL": base,
            # An unknown kid may refetch the key set at once: the rotation test needs no clock.
            "FIREBREAK_ENTRA_JWKS_REFETCH_COOLDOWN_S": "0",
            **entra.settings(),
            **extra,
        },
        port=port,
    )
    try:
        yield SignInHost(
            host, entra, resource, f"{base}/api/.well-known/oauth-protected-resource", f"{resource}/user_impersonation"
        )
    finally:
        entra.close()


@pytest.fixture(scope="module")
def signin(start_host: Callable[..., HostProcess]) -> Iterator[SignInHost]:
    yield from start_signin_host(start_host)


def mcp_post(s: SignInHost, token: str | None) -> httpx.Response:
    headers = {**MCP_HEADERS, **({"authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(s.resource, json=TOOLS_LIST, headers=headers, timeout=60)


def challenge_params(response: httpx.Response) -> dict[str, str]:
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    params = {}
    for part in value[len("Bearer ") :].split(", "):
        name, _, quoted = part.partition("=")
        params[name] = quoted.strip('"')
    return params


def test_metadata_is_served_from_settings(signin: SignInHost) -> None:
    r = httpx.get(signin.metadata_url, timeout=30)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "resource": signin.resource,
        "authorization_servers": [signin.entra.issuer],
        "scopes_supported": [signin.scope],
        "bearer_methods_supported": ["header"],
        "resource_name": "Firebreak",
    }


def test_the_served_openapi_document_names_the_tenants_sign_in_urls(signin: SignInHost) -> None:
    r = httpx.get(signin.resource.removesuffix("/mcp") + "/openapi.json", timeout=30)
    assert r.status_code == 200
    flow = r.json()["components"]["securitySchemes"]["entraId"]["flows"]["authorizationCode"]
    authority = signin.entra.issuer.removesuffix("/v2.0")
    assert flow["authorizationUrl"] == f"{authority}/oauth2/v2.0/authorize"
    assert flow["tokenUrl"] == f"{authority}/oauth2/v2.0/token"


def test_metadata_is_404_in_the_envelope_when_entra_is_off(host: HostProcess) -> None:
    r = httpx.get(f"{host.base_url}/api/.well-known/oauth-protected-resource", timeout=30)
    assert r.status_code == 404
    error = r.json()["error"]
    assert error["code"] == "NOT_FOUND"
    assert any("FIREBREAK_ENTRA_AUDIENCE" in s for s in error["recovery_suggestions"])


def test_no_credentials_is_a_challenge_pointing_at_the_metadata(signin: SignInHost) -> None:
    r = mcp_post(signin, None)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "UNAUTHORIZED"
    assert challenge_params(r) == {
        "realm": "firebreak",
        "resource_metadata": signin.metadata_url,
        "scope": signin.scope,
    }


async def test_the_sdk_signs_in_and_lists_and_calls_tools(signin: SignInHost) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider, TokenStorage
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthToken,
    )
    from pydantic import AnyUrl

    class MemoryStorage(TokenStorage):
        """A pre-registered public client (Entra has no dynamic registration)."""

        def __init__(self, client_id: str) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = OAuthClientInformationFull(
                client_id=client_id, token_endpoint_auth_method="none", redirect_uris=[AnyUrl(REDIRECT)]
            )

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    got: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:  # the browser: the double consents at once
        async with httpx2.AsyncClient() as c:
            r = await c.get(url)
        assert r.status_code == 302, r.text
        query = parse_qs(urlsplit(r.headers["location"]).query)
        assert "error" not in query, query
        got.update(code=query["code"][0], state=query["state"][0])

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=got["code"], state=got["state"])

    user = f"oid-{uuid.uuid4().hex[:8]}"
    signin.entra.sign_in.oid = user
    storage = MemoryStorage(signin.entra.public_client_id)
    auth = OAuthClientProvider(
        server_url=signin.resource,
        client_metadata=OAuthClientMetadata(redirect_uris=[AnyUrl(REDIRECT)], token_endpoint_auth_method="none"),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    before = len(signin.entra.requests)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60)) as http,
        Client(streamable_http_client(signin.resource, http_client=http)) as client,
    ):
        tools = await client.list_tools()
        me = await client.call_tool("whoami", {})
    assert "whoami" in {t.name for t in tools.tools}
    assert me.structured_content == {"workspace_id": signin.entra.tenant, "user_id": user, "source": "entra"}
    seen = signin.entra.requests[before:]
    tenant = signin.entra.tenant
    assert f"GET /{tenant}/v2.0/.well-known/openid-configuration" in seen
    assert f"POST /{tenant}/oauth2/v2.0/token" in seen
    authorize = next(r for r in seen if r.startswith(f"GET /{tenant}/oauth2/v2.0/authorize"))
    sent = parse_qs(urlsplit(authorize.split(" ", 1)[1]).query)
    assert sent["resource"] == [signin.resource]
    assert signin.scope in sent["scope"][0].split()
    assert sent["code_challenge_method"] == ["S256"]
    assert storage.tokens is not None


def test_a_resource_outside_the_identifier_uris_is_invalid_target(signin: SignInHost) -> None:
    """AADSTS9010010: the double refuses a resource the app registration does not list, as Entra does."""
    query = {
        "client_id": signin.entra.public_client_id,
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "code_challenge": "x" * 43,
        "code_challenge_method": "S256",
        "scope": signin.scope,
        "resource": signin.resource + "/",
        "state": "s1",
    }
    r = httpx.get(f"{signin.entra.origin}/{signin.entra.tenant}/oauth2/v2.0/authorize", params=query)
    assert r.status_code == 302
    back = parse_qs(urlsplit(r.headers["location"]).query)
    assert back["error"] == ["invalid_target"]
    assert back["state"] == ["s1"]


ATTACKS: dict[str, Callable[[FakeEntra, FakeEntra], str]] = {
    "another-audience": lambda e, _o: e.token(aud=str(uuid.uuid4())),
    "audience-as-uri": lambda e, _o: e.token(aud="api://firebreak-e2e"),
    "another-tenant-same-issuer": lambda e, _o: e.token(tid="other-tenant"),
    "another-issuer": lambda _e, other: other.token(aud=_e.audience),
    "claims-another-issuer": lambda e, _o: e.token(iss="https://login.microsoftonline.com/other/v2.0"),
    "expired": lambda e, _o: e.token(exp=1_700_000_000, nbf=1_699_990_000, iat=1_699_990_000),
    "not-yet-valid": lambda e, _o: e.token(nbf=4_102_444_800),
    "no-exp": lambda e, _o: e.token(exp=None),
    "no-nbf": lambda e, _o: e.token(nbf=None),
    "v1-token": lambda e, _o: e.token(ver="1.0"),
    "alg-none": lambda e, _o: e.alg_none_token(),
    "hs256-with-the-public-key": lambda e, _o: e.hs256_with_public_key_token(),
    "unknown-key": lambda e, _o: e.unknown_key_token(),
    "forged-kid": lambda e, _o: e.forged_kid_token(),
    "no-kid": lambda e, _o: e.no_kid_token(),
    "app-only": lambda e, _o: e.app_only_token(),
    "no-user": lambda e, _o: e.token(oid=None),
    "not-a-jwt": lambda _e, _o: "eyJhbGciOiJSUzI1NiJ9.not-a-jwt.at-all",
}


@pytest.fixture(scope="module")
def other_entra() -> Iterator[FakeEntra]:
    other = FakeEntra(tenant="attacker-tenant")
    yield other
    other.close()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_forged_and_foreign_tokens_are_401_invalid_token(
    signin: SignInHost, other_entra: FakeEntra, attack: str
) -> None:
    token = ATTACKS[attack](signin.entra, other_entra)
    r = mcp_post(signin, token)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "UNAUTHORIZED"
    params = challenge_params(r)
    assert params["error"] == "invalid_token"
    assert params["resource_metadata"] == signin.metadata_url
    signature = token.rsplit(".", 1)[-1] or token
    assert token not in r.text
    assert signature not in r.text
    assert signature not in r.headers["www-authenticate"]
    assert token not in signin.host.log()


def test_a_token_without_the_scope_is_403_insufficient_scope(signin: SignInHost) -> None:
    r = mcp_post(signin, signin.entra.token(scp="Files.Read"))
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "FORBIDDEN"
    params = challenge_params(r)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == signin.scope


def test_the_rest_routes_take_the_same_token_and_the_caller_only_from_it(signin: SignInHost) -> None:
    alice, bob = (signin.entra.token(oid=f"oid-{n}-{uuid.uuid4().hex[:6]}") for n in ("alice", "bob"))
    # Headers that name another caller are ignored: only the token says who this is.
    spoof = {"x-dev-user": "mallory", "x-dev-workspace": "ws-mallory", "x-ms-client-principal-id": "mallory"}
    url = f"{signin.host.base_url}/api/tasks"
    made = httpx.post(url, json={"title": "Renew passport"}, headers={"authorization": f"Bearer {alice}", **spoof})
    assert made.status_code == 201, made.text
    task_id = made.json()["task"]["id"]
    mine = httpx.get(url, headers={"authorization": f"Bearer {alice}"})
    assert [t["id"] for t in mine.json()["tasks"]] == [task_id]
    theirs = httpx.get(f"{url}/{task_id}", headers={"authorization": f"Bearer {bob}"})
    assert theirs.status_code == 404
    refused = httpx.get(url, headers={"authorization": f"Bearer {signin.entra.token(aud='api://elsewhere')}"})
    assert refused.status_code == 401
    assert challenge_params(refused)["error"] == "invalid_token"


@pytest.fixture(scope="module")
def rotating(start_host: Callable[..., HostProcess]) -> Iterator[SignInHost]:
    yield from start_signin_host(start_host)


def test_a_key_the_issuer_retired_stops_validating(rotating: SignInHost) -> None:
    entra = rotating.entra
    old_token = entra.token()
    assert mcp_post(rotating, old_token).status_code == 200  # the app now holds the old key
    old_kid = entra.kid
    entra.rotate()
    entra.retire(old_kid)
    # A token under the new kid makes the app fetch the key set again; the old key is no longer in it.
    assert mcp_post(rotating, entra.token()).status_code == 200
    r = mcp_post(rotating, old_token)
    assert r.status_code == 401
    assert challenge_params(r)["error"] == "invalid_token"


def test_no_token_reaches_the_logs(signin: SignInHost, other_entra: FakeEntra) -> None:
    tokens: list[Any] = [signin.entra.token(), signin.entra.token(aud="nope"), signin.entra.alg_none_token()]
    for token in tokens:
        mcp_post(signin, token)
    log = signin.host.log()
    for token in tokens:
        assert token.split(".")[1] not in log


ROOT = Path(__file__).resolve().parents[2]
NODE22 = ROOT / "node_modules" / ".bin" / "node"  # npm's node@22 package; the machine's Node 20 is too old
INSPECTOR_CLI = ROOT / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"


def inspector_tools_list(s: SignInHost, *headers: str) -> subprocess.CompletedProcess[str]:
    args = [str(NODE22), str(INSPECTOR_CLI), s.resource, "--transport", "http", "--method", "tools/list"]
    for header in headers:
        args += ["--header", header]
    # cwd: 1.0.3 looks for its package.json relative to the working directory (existsSync) but imports it relative
    # to the module, so it only starts from its own build folder when installed alone.
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False, cwd=INSPECTOR_CLI.parent)


def test_the_mcp_inspector_cli_lists_tools_with_the_token(signin: SignInHost) -> None:
    done = inspector_tools_list(signin, f"Authorization: Bearer {signin.entra.token()}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "whoami" in {tool["name"] for tool in json.loads(done.stdout)["tools"]}
    refused = inspector_tools_list(signin, f"Authorization: Bearer {signin.entra.token(aud='api://elsewhere')}")
    assert refused.returncode != 0
