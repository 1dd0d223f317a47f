"""Workspace API keys: random, shown once, stored as a SHA-256 hash and looked up by key id."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime

from shared.identity.models import ApiKeyDoc, MintedKey, Principal
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosDatabase

API_KEYS_CONTAINER = ContainerSpec(
    "api_keys", "/id", "Workspace API keys: key id, SHA-256 of the secret, principal; point-read by key id."
)

PREFIX = "fbk_"
_KEY = re.compile(r"^fbk_([0-9a-f]{16})_([A-Za-z0-9_-]{32,128})$")
# A verified key is trusted this long without a read: a key revoked from another worker or the CLI
# stops working within this bound (a revoke in this worker drops it at once).
CACHE_SECONDS = 5.0


def _digest(secret: str) -> str:
    # The secret is 256 random bits, so a plain hash is as strong as a slow KDF here and keeps lookups cheap.
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def looks_like_api_key(token: str) -> bool:
    return token.startswith(PREFIX)


class ApiKeyStore:
    """Mints and verifies keys; verified keys are cached briefly so a hot client costs no extra read."""

    def __init__(self, cosmos: CosmosDatabase, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._cosmos = cosmos
        self._monotonic = monotonic
        self._cache: dict[str, tuple[float, Principal]] = {}

    async def mint(self, workspace_id: str, user_id: str, name: str = "") -> MintedKey:
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        doc = ApiKeyDoc(
            id=key_id,
            workspace_id=workspace_id,
            user_id=user_id,
            name=name,
            secret_sha256=_digest(secret),
            created_at=datetime.now(UTC).isoformat(),
        )
        container = await self._cosmos.container(API_KEYS_CONTAINER.name)
        await container.create(doc.model_dump())
        return MintedKey(key=f"{PREFIX}{key_id}_{secret}", key_id=key_id, workspace_id=workspace_id, user_id=user_id)

    async def revoke(self, key_id: str) -> bool:
        container = await self._cosmos.container(API_KEYS_CONTAINER.name)
        doc = await container.read(key_id, key_id)
        if doc is None:
            return False
        doc["revoked"] = True
        await container.replace(doc)
        self._cache = {k: v for k, v in self._cache.items() if v[1].key_id != key_id}
        return True

    async def verify(self, key: str) -> Principal | None:
        """The key's principal, or None for a malformed, unknown, revoked or wrong key."""
        match = _KEY.match(key)
        if not match:
            return None
        cache_key = _digest(key)
        hit = self._cache.get(cache_key)
        now = self._monotonic()
        if hit and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        key_id, secret = match.groups()
        container = await self._cosmos.container(API_KEYS_CONTAINER.name)
        raw = await container.read(key_id, key_id)
        if raw is None:
            return None
        doc = ApiKeyDoc.model_validate(raw)
        if doc.revoked or not hmac.compare_digest(doc.secret_sha256, _digest(secret)):
            return None
        principal = Principal(workspace_id=doc.workspace_id, user_id=doc.user_id, source="api_key", key_id=key_id)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[cache_key] = (now, principal)
        return principal
