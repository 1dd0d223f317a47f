"""The Entra-shaped test double keeps Entra's rules, so tests that pass against it exercise them: discovery only at
Entra's URL, PKCE S256, single-use codes, rotating refresh tokens, loopback redirects of registered clients."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.fake_entra import FakeEntra

REDIRECT = "http://127.0.0.1:40001/callback"


@pytest.fixture(scope="module")
def entra() -> Iterator[FakeEntra]:
    double = FakeEntra(identifier_uris=["https://fb.example.net/api/mcp"])
    yield double
    double.close()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize(entra: FakeEntra, challenge: str, **overrides: str) -> dict[str, list[str]]:
    query = {
        "client_id": entra.public_client_id,
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "https://fb.example.net/api/mcp/user_impersonation offline_access",
        "resource": "https://fb.example.net/api/mcp",
        "state": "st",
        **overrides,
    }
    r = httpx.get(f"{entra.origin}/{entra.tenant}/oauth2/v2.0/authorize", params=query)
    assert r.status_code == 302, r.text
    return parse_qs(urlsplit(r.headers["location"]).query)


def token(entra: FakeEntra, **form: str) -> httpx.Response:
    return httpx.post(
        f"{entra.origin}/{entra.tenant}/oauth2/v2.0/token", data={"client_id": entra.public_client_id, **form}
    )


def test_discovery_answers_only_at_entras_url(entra: FakeEntra) -> None:
    tenant = entra.tenant
    assert httpx.get(f"{entra.origin}/{tenant}/v2.0/.well-known/openid-configuration").json()["issuer"] == entra.issuer
    for probe in (
        f"/.well-known/oauth-authorization-server/{tenant}/v2.0",
        f"/.well-known/openid-configuration/{tenant}/v2.0",
    ):
        assert httpx.get(f"{entra.origin}{probe}").status_code == 404
    assert (
        "registration_endpoint"
        not in httpx.get(f"{entra.origin}/{tenant}/v2.0/.well-known/openid-configuration").json()
    )


def test_codes_are_single_use_and_bound_to_the_verifier(entra: FakeEntra) -> None:
    verifier, challenge = pkce()
    code = authorize(entra, challenge)["code"][0]
    wrong = token(entra, grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier="x" * 64)
    assert wrong.json()["error"] == "invalid_grant"
    code = authorize(entra, challenge)["code"][0]
    good = token(entra, grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier)
    assert good.status_code == 200, good.text
    again = token(entra, grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier)
    assert again.json()["error"] == "invalid_grant"


def test_refresh_tokens_rotate(entra: FakeEntra) -> None:
    verifier, challenge = pkce()
    code = authorize(entra, challenge)["code"][0]
    first = token(
        entra, grant_type="authorization_code", code=code, redirect_uri=REDIRECT, code_verifier=verifier
    ).json()
    second = token(entra, grant_type="refresh_token", refresh_token=first["refresh_token"]).json()
    assert second["refresh_token"] != first["refresh_token"]
    assert (
        token(entra, grant_type="refresh_token", refresh_token=first["refresh_token"]).json()["error"]
        == "invalid_grant"
    )


@pytest.mark.parametrize(
    ("override", "error"),
    [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"resource": "https://fb.example.net/api/mcp/"}, "invalid_target"),
        ({"scope": "api://another-app/user_impersonation"}, "invalid_target"),
        ({"scope": "openid offline_access"}, "invalid_target"),
    ],
)
def test_entras_authorize_rules(entra: FakeEntra, override: dict[str, str], error: str) -> None:
    back = authorize(entra, pkce()[1], **override)
    assert back["error"] == [error]
    assert back["state"] == ["st"]


@pytest.mark.parametrize(
    "override",
    [{"client_id": "unregistered"}, {"redirect_uri": "https://evil.example/callback"}],
)
def test_unknown_clients_and_foreign_redirects_are_not_redirected_to(
    entra: FakeEntra, override: dict[str, str]
) -> None:
    query = {"client_id": entra.public_client_id, "redirect_uri": REDIRECT, "response_type": "code", **override}
    r = httpx.get(f"{entra.origin}/{entra.tenant}/oauth2/v2.0/authorize", params=query)
    assert r.status_code == 400
    assert "location" not in r.headers
