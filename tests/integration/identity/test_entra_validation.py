"""The Entra validator against the Entra-shaped double (real HTTP for the key set): more than one trusted issuer,
the tenant -> workspace binding, the client allow-list, app roles, and the bounds on fetching the key set."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from shared.core.errors import ServiceUnavailable, Unauthorized
from shared.core.settings import Settings
from shared.identity.challenge import InsufficientScope, InvalidToken
from shared.identity.entra import EntraValidator
from shared.identity.jwks import JwksCache, UnknownSigningKey, fetch_jwks
from tests.support.fake_entra import FakeEntra


@pytest.fixture(scope="module")
def workforce() -> Iterator[FakeEntra]:
    double = FakeEntra(tenant="workforce-tid")
    yield double
    double.close()


@pytest.fixture(scope="module")
def external() -> Iterator[FakeEntra]:
    """An External ID (CIAM) tenant for the phone, with its own app registration."""
    double = FakeEntra(tenant="ciam-tid")
    yield double
    double.close()


def settings_for(workforce: FakeEntra, external: FakeEntra | None = None, **values: str) -> Settings:
    env = dict(workforce.settings())
    if external is not None:
        env["FIREBREAK_ENTRA_TRUSTED_ISSUERS"] = json.dumps(
            [{"issuer": external.issuer, "tenant_id": external.tenant, "audiences": [external.audience]}]
        )
    return Settings.from_env({**env, **values})


async def test_both_trusted_issuers_sign_in_each_with_its_audience(workforce: FakeEntra, external: FakeEntra) -> None:
    validator = EntraValidator(settings_for(workforce, external))
    staff = await validator.principal(workforce.token(oid="staff-1"))
    phone = await validator.principal(external.token(oid="phone-1"))
    assert (staff.workspace_id, staff.user_id) == ("workforce-tid", "staff-1")
    assert (phone.workspace_id, phone.user_id) == ("ciam-tid", "phone-1")
    # Each issuer only with its own audience: the workforce app id is no audience for the CIAM issuer.
    with pytest.raises(InvalidToken):
        await validator.principal(external.token(aud=workforce.audience))


async def test_a_tenant_can_be_bound_to_a_workspace(workforce: FakeEntra) -> None:
    validator = EntraValidator(
        settings_for(workforce, FIREBREAK_ENTRA_TENANT_WORKSPACES="workforce-tid=ws-ops, other=ws-x")
    )
    assert (await validator.principal(workforce.token())).workspace_id == "ws-ops"


async def test_only_allowed_clients_when_listed(workforce: FakeEntra) -> None:
    validator = EntraValidator(settings_for(workforce, FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS=workforce.public_client_id))
    assert (await validator.principal(workforce.token())).source == "entra"
    with pytest.raises(InvalidToken, match="client application"):
        await validator.principal(workforce.token(azp="00000000-0000-0000-0000-000000000001"))


async def test_app_only_tokens_need_a_configured_role(workforce: FakeEntra) -> None:
    token = workforce.app_only_token(["Tools.Execute.All"])
    with pytest.raises(InvalidToken, match="app-only"):
        await EntraValidator(settings_for(workforce)).principal(token)
    admitted = EntraValidator(settings_for(workforce, FIREBREAK_ENTRA_APP_ROLES="Tools.Execute.All"))
    assert (await admitted.principal(token)).source == "entra"
    with pytest.raises(InvalidToken):
        await admitted.principal(workforce.app_only_token(["Other.Role"]))


async def test_the_required_scope_is_configurable(workforce: FakeEntra) -> None:
    validator = EntraValidator(settings_for(workforce, FIREBREAK_ENTRA_SCOPE="Mcp.Tools"))
    with pytest.raises(InsufficientScope):
        await validator.principal(workforce.token())
    assert (await validator.principal(workforce.token(scp="user_impersonation Mcp.Tools"))).source == "entra"


async def test_a_token_is_never_accepted_when_entra_is_off(workforce: FakeEntra) -> None:
    with pytest.raises(Unauthorized, match="not configured"):
        await EntraValidator(Settings.from_env({})).principal(workforce.token())


def test_unknown_kids_fetch_the_key_set_at_most_once_per_cooldown(workforce: FakeEntra) -> None:
    now = [1000.0]
    cache = JwksCache(workforce.jwks_url, max_age_s=3600, cooldown_s=30, monotonic=lambda: now[0])
    assert cache.key(workforce.kid).key_id == workforce.kid
    for made_up in range(50):
        with pytest.raises(UnknownSigningKey):
            cache.key(f"made-up-{made_up}")
    assert cache.fetches == 1  # inside the cooldown: no fetch at all
    now[0] += 31
    for made_up in range(50):
        with pytest.raises(UnknownSigningKey):
            cache.key(f"made-up-again-{made_up}")
    assert cache.fetches == 2  # one fetch for the whole flood after the cooldown


def test_a_retired_key_is_gone_after_the_sets_age(workforce: FakeEntra) -> None:
    now = [0.0]
    cache = JwksCache(workforce.jwks_url, max_age_s=600, cooldown_s=3600, monotonic=lambda: now[0])
    old = workforce.kid
    assert cache.key(old).key_id == old
    workforce.rotate()
    workforce.retire(old)
    assert cache.key(old).key_id == old  # still inside the set's age
    now[0] += 600
    with pytest.raises(UnknownSigningKey):
        cache.key(old)
    assert cache.key(workforce.kid).key_id == workforce.kid


def test_an_unreachable_issuer_is_503_and_not_asked_again_before_the_cooldown() -> None:
    calls: list[str] = []

    def down(url: str) -> dict:
        calls.append(url)
        return fetch_jwks("http://127.0.0.1:9/keys")  # nothing listens on the discard port

    now = [0.0]
    cache = JwksCache("http://127.0.0.1:9/keys", max_age_s=3600, cooldown_s=30, fetch=down, monotonic=lambda: now[0])
    for _ in range(3):
        with pytest.raises(ServiceUnavailable):
            cache.key("any")
    assert len(calls) == 1
