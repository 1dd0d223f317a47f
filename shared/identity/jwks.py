"""An issuer's signing keys (its JWKS), cached with an expiry so a key the issuer removes stops validating.

Why not `jwt.PyJWKClient(cache_keys=True)`: its per-kid cache never expires, so a key rotated out of the issuer's
set would stay trusted until the worker restarts. Here the whole set is replaced on every fetch: after
`max_age_s` (or an unknown kid, at most once per `cooldown_s`) a removed key is gone.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import jwt

from shared.core.errors import ServiceUnavailable

# A JWKS is a few kilobytes; a larger answer is not one (and is not read whole).
MAX_JWKS_BYTES = 256 * 1024
FETCH_TIMEOUT_S = 5.0


class UnknownSigningKey(jwt.InvalidTokenError):
    """The token names a key (kid) its issuer does not publish (any more)."""


def fetch_jwks(url: str) -> dict[str, Any]:
    """GET the key set (blocking: call it off the event loop). Raises OSError or ValueError on failure."""
    request = urllib.request.Request(url, headers={"accept": "application/json"})  # a configured URL
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
        body = response.read(MAX_JWKS_BYTES + 1)
    if len(body) > MAX_JWKS_BYTES:
        raise ValueError("key set larger than the limit")
    data = json.loads(body)
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError("not a JWKS document")
    return data


def rs256_keys(document: dict[str, Any]) -> dict[str, jwt.PyJWK]:
    """kid -> key for every RSA signing key of the set; other keys (encryption, EC, no kid) are left out."""
    keys: dict[str, jwt.PyJWK] = {}
    for entry in document.get("keys", []):
        if not isinstance(entry, dict) or entry.get("kty") != "RSA" or entry.get("use", "sig") != "sig":
            continue
        kid = entry.get("kid")
        if not isinstance(kid, str) or not kid or entry.get("alg", "RS256") != "RS256":
            continue
        try:
            keys[kid] = jwt.PyJWK(entry, algorithm="RS256")
        except jwt.PyJWKError:
            continue
    return keys


class JwksCache:
    """The current key set of one issuer. Thread-safe: validation runs in worker threads.

    `key(kid)` answers from the set while it is younger than `max_age_s`; an older set is fetched again
    (and replaced whole). An unknown kid fetches again only if the last fetch is `cooldown_s` old, so a
    flood of tokens with made-up kids costs at most one fetch per cooldown.
    """

    def __init__(
        self,
        url: str,
        *,
        max_age_s: float,
        cooldown_s: float,
        fetch: Callable[[str], dict[str, Any]] = fetch_jwks,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self._max_age_s = max_age_s
        self._cooldown_s = cooldown_s
        self._fetch = fetch
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._keys: dict[str, jwt.PyJWK] | None = None
        self._fetched_at = 0.0
        self._failure: str | None = None  # why the last fetch failed (None: it worked)
        self.fetches = 0  # how many times the set was fetched (tests bound it)

    def key(self, kid: str) -> jwt.PyJWK:
        with self._lock:
            now = self._monotonic()
            if self._keys is None or now - self._fetched_at >= self._max_age_s:
                self._refresh(now)
            if kid not in self._keys_or_empty() and now - self._fetched_at >= self._cooldown_s:
                self._refresh(now)
            found = self._keys_or_empty().get(kid)
            failure = self._failure
        if found is not None:
            return found
        if failure is not None:
            raise ServiceUnavailable(
                f"The token issuer's signing keys could not be fetched ({failure})",
                retry_after_seconds=max(1, int(self._cooldown_s)),
            )
        raise UnknownSigningKey("the token's kid is not in the issuer's key set")

    def _keys_or_empty(self) -> dict[str, jwt.PyJWK]:
        return self._keys or {}

    def _refresh(self, now: float) -> None:
        # A failed fetch counts too: a failing issuer is not asked again before the cooldown, and the old set
        # is dropped (fail closed) rather than trusted past its age.
        self._fetched_at = now
        self.fetches += 1
        try:
            document = self._fetch(self.url)
        except (OSError, ValueError) as exc:
            self._keys, self._failure = {}, type(exc).__name__
            return
        self._keys, self._failure = rs256_keys(document), None
