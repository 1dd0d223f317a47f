"""The Bearer challenge of 401s and scope 403s, and the protected-resource settings it is built from."""

from __future__ import annotations

import pytest

from shared.core.errors import Forbidden, NotFound, Unauthorized
from shared.core.settings import Settings, SettingsError
from shared.identity.challenge import InsufficientScope, InvalidToken, bearer_challenge
from shared.identity.resource import jwks_url_of, protected_resource_metadata, trusted_issuers

ENTRA = {
    "FIREBREAK_ENTRA_TENANT_ID": "11111111-2222-3333-4444-555555555555",
    "FIREBREAK_ENTRA_AUDIENCE": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
    "FIREBREAK_PUBLIC_BASE_URL": "https://fb.example.net/",
}
METADATA = "https://fb.example.net/api/.well-known/oauth-protected-resource"
SCOPE = "https://fb.example.net/api/mcp/user_impersonation"


def test_without_entra_the_challenge_is_the_realm_alone() -> None:
    assert bearer_challenge(Unauthorized("No credentials"), Settings.from_env({})) == 'Bearer realm="firebreak"'
    assert bearer_challenge(Unauthorized("No credentials"), None) == 'Bearer realm="firebreak"'


def test_with_entra_the_challenge_points_at_the_metadata_and_scope() -> None:
    value = bearer_challenge(Unauthorized("No credentials"), Settings.from_env(ENTRA))
    assert value == f'Bearer realm="firebreak", resource_metadata="{METADATA}", scope="{SCOPE}"'


def test_a_bad_token_adds_invalid_token_with_a_safe_description() -> None:
    value = bearer_challenge(InvalidToken('Bearer token rejected: "expired" \\ é'), Settings.from_env(ENTRA))
    assert value is not None
    assert value.endswith('error="invalid_token", error_description="Bearer token rejected: expired  "')


def test_a_missing_scope_is_insufficient_scope() -> None:
    value = bearer_challenge(InsufficientScope("no scope"), Settings.from_env(ENTRA))
    assert value is not None
    assert f'scope="{SCOPE}"' in value
    assert 'error="insufficient_scope"' in value


def test_other_errors_have_no_challenge() -> None:
    assert bearer_challenge(Forbidden("not yours"), Settings.from_env(ENTRA)) is None
    assert bearer_challenge(NotFound("gone"), Settings.from_env(ENTRA)) is None


def test_the_metadata_comes_from_settings() -> None:
    doc = protected_resource_metadata(Settings.from_env(ENTRA))
    assert doc.resource == "https://fb.example.net/api/mcp"
    assert doc.authorization_servers == [f"https://login.microsoftonline.com/{ENTRA['FIREBREAK_ENTRA_TENANT_ID']}/v2.0"]
    assert doc.scopes_supported == [SCOPE]


def test_the_metadata_is_404_without_a_public_url() -> None:
    settings = Settings.from_env({k: v for k, v in ENTRA.items() if k != "FIREBREAK_PUBLIC_BASE_URL"})
    with pytest.raises(NotFound):
        protected_resource_metadata(settings)


def test_the_jwks_url_follows_entras_shape_for_every_issuer() -> None:
    ciam = '[{"issuer": "https://t1.ciamlogin.com/t1/v2.0", "tenant_id": "t1", "audiences": ["x"]}]'
    issuers = trusted_issuers(Settings.from_env({**ENTRA, "FIREBREAK_ENTRA_TRUSTED_ISSUERS": ciam}))
    assert [jwks_url_of(i) for i in issuers] == [
        f"https://login.microsoftonline.com/{ENTRA['FIREBREAK_ENTRA_TENANT_ID']}/discovery/v2.0/keys",
        "https://t1.ciamlogin.com/t1/discovery/v2.0/keys",
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FIREBREAK_PUBLIC_BASE_URL", "fb.example.net"),
        ("FIREBREAK_PUBLIC_BASE_URL", "https://fb.example.net/?x=1"),
        ("FIREBREAK_ENTRA_TENANT_WORKSPACES", "tid-without-workspace"),
        ("FIREBREAK_ENTRA_TRUSTED_ISSUERS", "not json"),
        ("FIREBREAK_ENTRA_TRUSTED_ISSUERS", '[{"issuer": "https://x/t/v2.0", "tenant_id": "t", "audiences": []}]'),
    ],
)
def test_bad_settings_name_their_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({**ENTRA, name: value})


def test_the_public_origin_defaults_to_the_apps_azure_host_name() -> None:
    env = {k: v for k, v in ENTRA.items() if k != "FIREBREAK_PUBLIC_BASE_URL"}
    settings = Settings.from_env({**env, "WEBSITE_HOSTNAME": "fb-prod.azurewebsites.net"})
    assert protected_resource_metadata(settings).resource == "https://fb-prod.azurewebsites.net/api/mcp"
    explicit = Settings.from_env({**ENTRA, "WEBSITE_HOSTNAME": "fb-prod.azurewebsites.net"})
    assert protected_resource_metadata(explicit).resource == "https://fb.example.net/api/mcp"
