"""The NeuBird account and its tokens: who logs in, and the process-wide token cache every client shares.

Contract section 3: a token is cached per (base URL, email), both compared case-insensitively and the URL
without its trailing '/', until 5 minutes before the JWT's `exp` (payload decoded without verification);
[GAP, chosen here] a token without `exp` is kept 55 minutes, one that expires sooner than 10 minutes is kept
half its life. The organization learnt with a token is cached with it. Logging in and dropping a refused token
is the client's part (client.py); this module holds no I/O.

Secrets: neither the password nor a token appears in a repr.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from shared.neubird.settings import NeubirdSettings

_REFRESH_MARGIN_S = 300.0
_NO_EXP_LIFETIME_S = 55 * 60.0


class Credentials:
    """The account the client logs in with; its repr shows neither the email nor the password."""

    __slots__ = ("email", "password")

    def __init__(self, email: str, password: SecretStr | str) -> None:
        self.email = email
        self.password = password if isinstance(password, SecretStr) else SecretStr(password)

    def __repr__(self) -> str:
        return "Credentials(email='**********', password='**********')"

    __str__ = __repr__

    @classmethod
    def from_settings(cls, settings: NeubirdSettings) -> Credentials:
        return cls(settings.email or "", settings.password or SecretStr(""))


@dataclass
class CachedToken:
    """A token, when to stop using it, and the organization learnt with it (`org_known`: GET /v1/user was read)."""

    token: str = field(repr=False)
    expires_at: float
    org_uuid: str | None = None
    org_known: bool = False


class TokenCache:
    """Process-wide tokens keyed by (base URL, email); thread-safe (connection.Runtime holds the process's one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], CachedToken] = {}
        self._login_locks: dict[tuple[str, str, int], asyncio.Lock] = {}

    @staticmethod
    def _key(base_url: str, email: str) -> tuple[str, str]:
        return base_url.rstrip("/").lower(), email.strip().lower()

    def get(self, base_url: str, email: str, now: float) -> CachedToken | None:
        with self._lock:
            entry = self._entries.get(self._key(base_url, email))
            return entry if entry is not None and entry.expires_at > now else None

    def login_lock(self, base_url: str, email: str) -> asyncio.Lock:
        """The lock one login of (base URL, email) holds on this event loop: concurrent calls of every client
        sharing this cache wait for one login instead of each logging in (a stampede after an expiry)."""
        key = (*self._key(base_url, email), id(asyncio.get_running_loop()))
        with self._lock:
            found = self._login_locks.get(key)
            if found is None:
                found = self._login_locks[key] = asyncio.Lock()
            return found

    def put(self, base_url: str, email: str, entry: CachedToken) -> None:
        with self._lock:
            self._entries[self._key(base_url, email)] = entry

    def drop(self, base_url: str, email: str, token: str | None = None) -> None:
        """Forget the key's token (only if it is still `token`, when given: a newer login is kept)."""
        with self._lock:
            key = self._key(base_url, email)
            entry = self._entries.get(key)
            if entry is not None and (token is None or entry.token == token):
                del self._entries[key]

    def set_org(self, base_url: str, email: str, token: str, org_uuid: str | None) -> None:
        with self._lock:
            entry = self._entries.get(self._key(base_url, email))
            if entry is not None and entry.token == token:
                entry.org_uuid, entry.org_known = org_uuid, True

    def clear(self, base_url: str | None = None) -> None:
        """Forget every token of `base_url` (an instance switch), or all of them."""
        with self._lock:
            if base_url is None:
                self._entries.clear()
            else:
                wanted = base_url.rstrip("/").lower()
                for key in [k for k in self._entries if k[0] == wanted]:
                    del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __repr__(self) -> str:
        return f"TokenCache({len(self)} tokens)"


def token_expiry(token: str, now: float) -> float:
    """When to stop using `token`: 5 minutes before its JWT `exp` (unverified), 55 minutes when it has none."""
    exp: Any = None
    parts = token.split(".")
    if len(parts) == 3:
        try:
            payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
            claims = json.loads(payload)
            exp = claims.get("exp") if isinstance(claims, dict) else None
        except (ValueError, RecursionError, binascii.Error, UnicodeDecodeError):
            exp = None
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        return now + _NO_EXP_LIFETIME_S
    life = float(exp) - now
    if life <= 0:
        return now  # already expired: usable for nothing, the next call logs in again
    return now + max(life - _REFRESH_MARGIN_S, life / 2)
