"""The confirmation token of the two-step `bulk_delete_tasks` (issue #14; not wired to a tool yet).

Step one (require_confirmation=true) deletes nothing and issues a token bound to the user and to the exact
set of task ids it previewed, valid for a few minutes. Step two deletes only with a token whose MAC matches
that user and that same set (order does not matter; one id more or less is a different set). The token
carries a random nonce so the store can refuse a second use (single use is the store's job: it records
spent nonces); `verify` returns the nonce for that. Pure code: the key and the clock are passed in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shared.core.errors import Conflict, ValidationFailed

DEFAULT_TTL = timedelta(minutes=5)
_MAX_TOKEN = 512


@dataclass(frozen=True)
class Confirmation:
    token: str
    expires_at: datetime
    nonce: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, user_id: str, task_ids: Sequence[str], payload: str) -> bytes:
    ids = "\n".join(sorted(set(task_ids)))
    message = "\x1f".join(("bulk_delete_tasks", user_id, ids, payload)).encode()
    return hmac.new(key, message, hashlib.sha256).digest()


def issue(
    key: bytes, user_id: str, task_ids: Sequence[str], now: datetime, ttl: timedelta = DEFAULT_TTL
) -> Confirmation:
    """A token for deleting exactly `task_ids` of `user_id` until now + ttl."""
    expires = now.astimezone(UTC) + ttl
    nonce = secrets.token_urlsafe(12)
    payload = _b64(json.dumps({"exp": int(expires.timestamp()), "n": nonce}, separators=(",", ":")).encode())
    return Confirmation(f"{payload}.{_b64(_mac(key, user_id, task_ids, payload))}", expires, nonce)


def _invalid(problem: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        "confirmation_token",
        problem,
        f"confirmation_token: {problem}",
        suggestions=["Call bulk_delete_tasks with require_confirmation=true again and confirm the new preview."],
    )


def verify(key: bytes, token: str, user_id: str, task_ids: Sequence[str], now: datetime) -> str:
    """The token's nonce when it confirms deleting exactly `task_ids` of `user_id` now; else an error.

    A token of another user, of another set (the tasks changed since the preview) or with edited claims is
    VALIDATION_ERROR with one wording for all three, so it tells an attacker nothing; an expired one says so
    (CONFLICT): the user just has to preview again.
    """
    if not isinstance(token, str) or not 0 < len(token) <= _MAX_TOKEN or token.count(".") != 1:
        raise _invalid("is not a token this server issued")
    payload, mac = token.split(".")
    try:
        given = _unb64(mac)
        claims = json.loads(_unb64(payload))
        expires = datetime.fromtimestamp(int(claims["exp"]), UTC)
        nonce = str(claims["n"])
    except (ValueError, KeyError, TypeError, OverflowError):
        raise _invalid("is not a token this server issued") from None
    if not hmac.compare_digest(given, _mac(key, user_id, task_ids, payload)):
        raise _invalid("does not confirm deleting these tasks (they changed since the preview, or it is not yours)")
    if now.astimezone(UTC) >= expires:
        raise Conflict(
            "The confirmation expired.",
            details={"expired_at": expires.isoformat()},
            recovery_suggestions=["Preview again with require_confirmation=true and confirm within 5 minutes."],
        )
    return nonce


def peek_nonce(token: str) -> str | None:
    """The nonce a token claims, unverified (to find its pending record); None if it is not token-shaped."""
    if not isinstance(token, str) or not 0 < len(token) <= _MAX_TOKEN or token.count(".") != 1:
        return None
    try:
        nonce = json.loads(_unb64(token.split(".")[0]))["n"]
    except (ValueError, KeyError, TypeError):
        return None
    if (
        not isinstance(nonce, str)
        or not 0 < len(nonce) <= 64
        or not all((c.isascii() and c.isalnum()) or c in "-_" for c in nonce)
    ):
        return None
    return nonce
