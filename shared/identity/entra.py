"""Validate Entra ID (workforce or External ID) v2.0 access tokens and map them to a principal.

A token is accepted only if all hold: at most MAX_TOKEN_CHARS; header `alg` RS256 and a `kid`; `iss` exactly one
of the trusted issuers (settings: the tenant of FIREBREAK_ENTRA_TENANT_ID/_ISSUER, plus
FIREBREAK_ENTRA_TRUSTED_ISSUERS); the signature by that issuer's key `kid` (shared/identity/jwks.py: a key
the issuer removed stops validating after the next fetch); `aud` one of that issuer's audiences (the API app's
client id); `exp` and `nbf` present and valid (LEEWAY_S); `ver` "2.0"; `tid` the issuer's tenant; `azp` in
FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS when set; and `scp` holding FIREBREAK_ENTRA_SCOPE (else 403
insufficient_scope), or, for an app-only token (`roles`, no `scp`), one of FIREBREAK_ENTRA_APP_ROLES.

The principal: workspace = FIREBREAK_ENTRA_TENANT_WORKSPACES[tid], else the FIREBREAK_ENTRA_WORKSPACE_CLAIM
claim (tid); user = oid. Error messages name the failed check, never the token or its claims.
"""

from __future__ import annotations

import asyncio
from typing import Any

import jwt
from pydantic import ValidationError

from shared.core.settings import Settings, TrustedIssuer
from shared.identity.challenge import InsufficientScope, InvalidToken
from shared.identity.jwks import JwksCache, UnknownSigningKey
from shared.identity.models import Principal
from shared.identity.resource import challenge_scope, jwks_url_of, trusted_issuers

LEEWAY_S = 60
MAX_TOKEN_CHARS = 16 * 1024
MAX_KID_CHARS = 256
_REQUIRED_CLAIMS = ["exp", "nbf", "iss", "aud", "ver", "tid"]
_FRESH_TOKEN = "Acquire a new access token for this API (sign in again) and retry."


def _rejected(reason: str) -> InvalidToken:
    return InvalidToken(f"Bearer token rejected: {reason}", recovery_suggestions=[_FRESH_TOKEN])


class EntraValidator:
    """Checks bearer JWTs against the trusted issuers; one key cache per issuer, created on first use."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._issuers = {issuer.issuer: issuer for issuer in trusted_issuers(settings)}
        self._keys: dict[str, JwksCache] = {}

    @property
    def configured(self) -> bool:
        """At least one issuer with its tenant and audience known: no token is accepted without those checks."""
        return bool(self._issuers)

    def key_cache(self, issuer: TrustedIssuer) -> JwksCache:
        cache = self._keys.get(issuer.issuer)
        if cache is None:
            s = self._settings
            cache = JwksCache(
                jwks_url_of(issuer), max_age_s=s.entra_jwks_max_age_s, cooldown_s=s.entra_jwks_refetch_cooldown_s
            )
            self._keys.setdefault(issuer.issuer, cache)
        return self._keys[issuer.issuer]

    def _issuer_of(self, token: str) -> TrustedIssuer:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _rejected("not a well-formed JWT") from None
        if header.get("alg") != "RS256":
            raise _rejected("only RS256-signed tokens are accepted")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid or len(kid) > MAX_KID_CHARS:
            raise _rejected("the token header has no key id (kid)")
        claimed = unverified.get("iss")
        issuer = self._issuers.get(claimed) if isinstance(claimed, str) else None
        if issuer is None:
            raise _rejected("the issuer is not trusted by this app")
        return issuer

    def _claims_sync(self, token: str) -> tuple[TrustedIssuer, dict[str, Any]]:
        """The verified claims (blocking: the key set may be fetched)."""
        issuer = self._issuer_of(token)
        kid = str(jwt.get_unverified_header(token)["kid"])
        try:
            key = self.key_cache(issuer).key(kid)
        except UnknownSigningKey:
            raise _rejected("the signing key is not one the issuer publishes") from None
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["RS256"],
                audience=issuer.audiences,
                issuer=issuer.issuer,
                options={"require": _REQUIRED_CLAIMS, "verify_signature": True},
                leeway=LEEWAY_S,
            )
        except jwt.ExpiredSignatureError:
            raise _rejected("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise _rejected("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise _rejected("the token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise _rejected("the issuer is not trusted by this app") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _rejected(f"the token lacks the '{exc.claim}' claim") from None
        except jwt.PyJWTError as exc:
            raise _rejected(type(exc).__name__) from None
        return issuer, claims

    def _check_claims(self, issuer: TrustedIssuer, claims: dict[str, Any]) -> None:
        s = self._settings
        if claims.get("ver") != "2.0":
            raise _rejected("only v2.0 access tokens are accepted (set requestedAccessTokenVersion to 2)")
        if claims.get("tid") != issuer.tenant_id:
            raise _rejected("the token's tenant does not match its issuer")
        client = claims.get("azp") or claims.get("appid")
        if s.entra_allowed_client_ids and client not in s.entra_allowed_client_ids:
            raise _rejected("the client application is not allowed")
        scp = claims.get("scp")
        if isinstance(scp, str) and scp.strip():
            if s.entra_scope not in scp.split():
                scope = challenge_scope(s) or s.entra_scope
                raise InsufficientScope(
                    f"The token does not carry the scope '{s.entra_scope}'",
                    details={"required_scope": scope},
                    recovery_suggestions=[f"Request a token for the scope {scope} and retry."],
                )
            return
        roles = claims.get("roles")
        granted = roles if isinstance(roles, list) else []
        if not s.entra_app_roles or not any(role in s.entra_app_roles for role in granted):
            raise _rejected("app-only tokens (no scp) are not accepted")

    def _principal_of(self, claims: dict[str, Any]) -> Principal:
        s = self._settings
        tenant = str(claims.get("tid", ""))
        workspace = s.entra_tenant_workspaces.get(tenant) or claims.get(s.entra_workspace_claim)
        user = claims.get("oid")
        if not isinstance(workspace, str) or not workspace or not isinstance(user, str) or not user:
            raise _rejected(f"the token lacks the '{s.entra_workspace_claim}' or 'oid' claim")
        try:
            return Principal(workspace_id=workspace, user_id=user, source="entra")
        except ValidationError:
            raise _rejected("the token's workspace or user claim is not a valid id") from None

    def _validate_sync(self, token: str) -> Principal:
        issuer, claims = self._claims_sync(token)
        self._check_claims(issuer, claims)
        return self._principal_of(claims)

    async def principal(self, token: str) -> Principal:
        if not self.configured:
            raise InvalidToken(
                "A bearer token was sent but Entra ID validation is not configured",
                recovery_suggestions=[
                    (
                        "Use a workspace API key (fbk_...) or configure FIREBREAK_ENTRA_AUDIENCE with"
                        " FIREBREAK_ENTRA_TENANT_ID (or _ISSUER)."
                    )
                ],
            )
        if len(token) > MAX_TOKEN_CHARS:
            raise _rejected(f"longer than {MAX_TOKEN_CHARS} characters")
        # The key set is fetched with urllib (blocking): keep it off the event loop.
        return await asyncio.to_thread(self._validate_sync, token)
