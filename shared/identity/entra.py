"""Validate Entra ID (Azure AD) bearer tokens: signature from the tenant's JWKS, audience, issuer, expiry."""

from __future__ import annotations

import asyncio
from typing import Any

import jwt

from shared.core.errors import Unauthorized
from shared.core.settings import Settings
from shared.identity.models import Principal


class EntraValidator:
    """Checks a JWT against the configured tenant; the JWKS is fetched once and cached by PyJWT."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._jwks: Any = None

    @property
    def configured(self) -> bool:
        """Audience, keys and issuer all known: a token is never accepted without its issuer checked."""
        s = self._settings
        return bool(s.entra_audience and (s.entra_jwks_url or s.entra_tenant_id) and self._issuer())

    def _jwks_client(self) -> Any:
        if self._jwks is None:
            s = self._settings
            url = s.entra_jwks_url or f"https://login.microsoftonline.com/{s.entra_tenant_id}/discovery/v2.0/keys"
            self._jwks = jwt.PyJWKClient(url, cache_keys=True, lifespan=3600, timeout=5)
        return self._jwks

    def _issuer(self) -> str | None:
        s = self._settings
        if s.entra_issuer:
            return s.entra_issuer
        return f"https://login.microsoftonline.com/{s.entra_tenant_id}/v2.0" if s.entra_tenant_id else None

    def _validate_sync(self, token: str) -> dict[str, Any]:
        signing_key = self._jwks_client().get_signing_key_from_jwt(token)
        return jwt.decode(
            token,
            signing_key.key,
            algorithms=["RS256"],
            audience=self._settings.entra_audience,
            issuer=self._issuer(),
            options={"require": ["exp", "aud", "iss"]},
            leeway=60,
        )

    async def principal(self, token: str) -> Principal:
        if not self.configured:
            raise Unauthorized(
                "A bearer token was sent but Entra ID validation is not configured",
                recovery_suggestions=[
                    (
                        "Use a workspace API key (fbk_...) or configure FIREBREAK_ENTRA_AUDIENCE with"
                        " FIREBREAK_ENTRA_TENANT_ID (or _JWKS_URL and _ISSUER)."
                    )
                ],
            )
        try:
            # PyJWKClient fetches with urllib (blocking); keep it off the event loop.
            claims = await asyncio.to_thread(self._validate_sync, token)
        except (jwt.PyJWTError, ValueError) as exc:
            raise Unauthorized(
                f"Bearer token rejected: {type(exc).__name__}",
                recovery_suggestions=["Acquire a fresh token for this app's audience."],
            ) from None
        workspace = claims.get(self._settings.entra_workspace_claim)
        user = claims.get("oid") or claims.get("sub")
        if not workspace or not user:
            raise Unauthorized(f"Token lacks the '{self._settings.entra_workspace_claim}' or 'oid'/'sub' claim")
        return Principal(workspace_id=str(workspace), user_id=str(user), source="entra")
