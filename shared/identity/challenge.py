"""The `WWW-Authenticate` answer of every 401 and scope 403 (RFC 6750 §3, RFC 9728 §5.1, MCP authorization).

- No credentials: `Bearer realm="firebreak", resource_metadata="…", scope="…"` (the last two when Entra ID is
  configured; MCP clients start their sign-in from resource_metadata).
- A credential that is wrong (a bad token, a revoked key): the same plus `error="invalid_token"`.
- A good token without the required scope: 403 with `error="insufficient_scope"` and the scope (MCP clients
  then ask for it: step-up).

The body stays the error envelope; error_description repeats the envelope's message, which never holds the
token.
"""

from __future__ import annotations

import re

from shared.core.errors import AppError, Forbidden, Unauthorized
from shared.core.settings import Settings
from shared.identity.resource import challenge_scope, metadata_url, primary_issuer

REALM = "firebreak"
# RFC 6750 error_description: %x20-21 / %x23-5B / %x5D-7E (no quote, no backslash, ASCII only).
_NOT_DESCRIPTION = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")
_MAX_DESCRIPTION = 200


class InvalidToken(Unauthorized):
    """A bearer credential was sent and is wrong: malformed, expired, for another audience or issuer, revoked."""

    bearer_error = "invalid_token"


class InsufficientScope(Forbidden):
    """A valid token that does not carry the scope this API requires."""

    bearer_error = "insufficient_scope"


def _quoted(value: str) -> str:
    return '"' + _NOT_DESCRIPTION.sub("", value) + '"'


def bearer_challenge(error: AppError, settings: Settings | None) -> str | None:
    """The header value for `error`, or None when it needs none (not a 401, nor a scope 403).

    `settings` may be None (the settings themselves failed to load): the plain realm challenge is answered.
    """
    bearer_error = getattr(error, "bearer_error", None)
    if not isinstance(error, Unauthorized) and bearer_error != "insufficient_scope":
        return None
    params = [f"realm={_quoted(REALM)}"]
    metadata = metadata_url(settings) if settings is not None else None
    scope = challenge_scope(settings) if settings is not None and primary_issuer(settings) else None
    if metadata:
        params.append(f"resource_metadata={_quoted(metadata)}")
    if scope:
        params.append(f"scope={_quoted(scope)}")
    if bearer_error:
        params.append(f"error={_quoted(bearer_error)}")
        params.append(f"error_description={_quoted(error.message[:_MAX_DESCRIPTION])}")
    return "Bearer " + ", ".join(params)
