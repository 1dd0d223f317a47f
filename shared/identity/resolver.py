"""Resolve a request's headers to a principal, in the order DESIGN.md fixes."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping

from shared.core.errors import Unauthorized
from shared.core.settings import Settings
from shared.identity.api_keys import ApiKeyStore, looks_like_api_key
from shared.identity.challenge import InvalidToken
from shared.identity.entra import EntraValidator
from shared.identity.models import Principal

_TENANT_CLAIMS = ("http://schemas.microsoft.com/identity/claims/tenantid", "tid")

_HOW_TO_AUTHENTICATE = [
    "Send 'Authorization: Bearer fbk_...' with a workspace API key (mint one with `make api-key`).",
    "Or send an Entra ID access token for this app as 'Authorization: Bearer <jwt>'.",
]


class PrincipalResolver:
    """Entra bearer token, then App Service headers (when trusted), then API key, then dev mode.

    A credential that is presented but wrong is refused outright, never downgraded to dev mode,
    so a typo in a key cannot silently act as the dev principal.
    """

    def __init__(self, settings: Settings, api_keys: ApiKeyStore, entra: EntraValidator) -> None:
        self._settings = settings
        self._api_keys = api_keys
        self._entra = entra

    async def resolve(self, headers: Mapping[str, str]) -> Principal:
        lower = {k.lower(): v for k, v in headers.items()}
        auth = lower.get("authorization", "").strip()
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if auth and not token:
            raise Unauthorized(
                "Authorization header must be 'Bearer <token>'", recovery_suggestions=_HOW_TO_AUTHENTICATE
            )

        if token and not looks_like_api_key(token):
            return await self._entra.principal(token)
        if self._settings.trust_appservice_auth and "x-ms-client-principal-id" in lower:
            return self._appservice(lower)
        if token:
            principal = await self._api_keys.verify(token)
            if principal is None:
                raise InvalidToken("API key is invalid or revoked", recovery_suggestions=_HOW_TO_AUTHENTICATE)
            return principal
        if self._settings.dev_mode:
            # Dev mode may name another workspace so local users can try isolation by hand.
            return Principal(
                workspace_id=lower.get("x-dev-workspace") or self._settings.dev_workspace,
                user_id=lower.get("x-dev-user") or self._settings.dev_user,
                source="dev",
            )
        raise Unauthorized("No credentials: this endpoint needs a principal", recovery_suggestions=_HOW_TO_AUTHENTICATE)

    @staticmethod
    def _appservice(headers: Mapping[str, str]) -> Principal:
        user = headers["x-ms-client-principal-id"]
        workspace = None
        encoded = headers.get("x-ms-client-principal")
        if encoded:
            try:
                claims = json.loads(base64.b64decode(encoded)).get("claims", [])
                by_type = {c.get("typ"): c.get("val") for c in claims if isinstance(c, dict)}
                workspace = next((by_type[t] for t in _TENANT_CLAIMS if by_type.get(t)), None)
            except (ValueError, AttributeError):
                raise Unauthorized("X-MS-CLIENT-PRINCIPAL is not valid base64 JSON") from None
        return Principal(workspace_id=workspace or f"user-{user}", user_id=user, source="appservice")
