"""Workspace API keys: shown once, stored hashed, verified, revoked."""

from __future__ import annotations

import json

from shared.tools.deps import Deps


async def test_mint_stores_only_the_hash_and_verifies(deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-keys", "alice", "ci")
    stored = await (await deps.cosmos.container("api_keys")).read(minted.key_id, minted.key_id)
    secret = minted.key.split("_", 2)[2]
    assert stored is not None
    assert secret not in json.dumps(stored)
    assert minted.key not in json.dumps(stored)
    assert stored["secret_sha256"]
    assert stored["workspace_id"] == "ws-keys"
    principal = await deps.api_keys.verify(minted.key)
    assert principal is not None
    assert (principal.workspace_id, principal.user_id, principal.source) == ("ws-keys", "alice", "api_key")


async def test_wrong_secret_unknown_id_and_garbage_are_refused(deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-keys", "bob")
    wrong = minted.key[:-4] + ("AAAA" if not minted.key.endswith("AAAA") else "BBBB")
    assert await deps.api_keys.verify(wrong) is None
    assert await deps.api_keys.verify("fbk_0000000000000000_" + "A" * 43) is None
    for garbage in ("fbk_", "fbk_zz_zz", "not-a-key", "fbk_" + "a" * 500):
        assert await deps.api_keys.verify(garbage) is None


async def test_revoked_key_stops_working(deps: Deps) -> None:
    minted = await deps.api_keys.mint("ws-keys", "carol")
    assert await deps.api_keys.verify(minted.key) is not None
    assert await deps.api_keys.revoke(minted.key_id) is True
    assert await deps.api_keys.verify(minted.key) is None
    assert await deps.api_keys.revoke("0000000000000000") is False
