"""Identity hardening: revocation reaches every worker within the cache bound; Entra never skips the issuer."""

from __future__ import annotations

import pytest

from shared.core.errors import Unauthorized
from shared.core.settings import Settings
from shared.identity.api_keys import CACHE_SECONDS, ApiKeyStore
from shared.identity.entra import EntraValidator
from shared.tools.deps import Deps
from tests.support.fake_entra import FakeEntra


class Clock:
    """A monotonic clock the test moves by hand (no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_key_revoked_elsewhere_is_refused_once_the_cache_bound_passes(deps: Deps) -> None:
    """Worker A verified (and cached) a key; the CLI (another process) revokes it; A refuses it within 5 s."""
    clock = Clock()
    worker = ApiKeyStore(deps.cosmos, monotonic=clock)
    minted = await deps.api_keys.mint("ws-revoke", "dana")
    assert await worker.verify(minted.key) is not None
    assert await ApiKeyStore(deps.cosmos).revoke(minted.key_id)  # the CLI's store, not the worker's
    assert CACHE_SECONDS <= 5.0
    clock.now += CACHE_SECONDS + 0.001
    assert await worker.verify(minted.key) is None


async def test_revoke_in_the_same_worker_is_immediate(deps: Deps) -> None:
    worker = ApiKeyStore(deps.cosmos, monotonic=Clock())
    minted = await worker.mint("ws-revoke", "eve")
    assert await worker.verify(minted.key) is not None
    await worker.revoke(minted.key_id)
    assert await worker.verify(minted.key) is None


@pytest.fixture(scope="module")
def entra():
    fake = FakeEntra()
    yield fake
    fake.close()


async def test_entra_without_an_issuer_accepts_no_token(entra: FakeEntra) -> None:
    """Audience and JWKS but no tenant or issuer: no token passes, whoever issued it."""
    settings = Settings.model_validate({"entra_audience": entra.audience, "entra_jwks_url": entra.jwks_url})
    validator = EntraValidator(settings)
    for token in (entra.token(), entra.token(iss="https://attacker.example/v2.0")):
        with pytest.raises(Unauthorized):
            await validator.principal(token)


async def test_entra_checks_the_issuer(entra: FakeEntra) -> None:
    validator = EntraValidator(Settings.from_env(entra.settings()))
    assert (await validator.principal(entra.token())).source == "entra"
    for iss in ("https://attacker.example/v2.0", None):
        with pytest.raises(Unauthorized):
            await validator.principal(entra.token(iss=iss))
