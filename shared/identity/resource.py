"""What the app is as an OAuth protected resource: its trusted issuers, its resource URL, its scope, and the
Protected Resource Metadata (RFC 9728) that MCP clients discover through the 401 challenge.

Everything comes from settings (FIREBREAK_ENTRA_*, FIREBREAK_PUBLIC_BASE_URL), never from a request: a Host
header chosen by an attacker must not end up in metadata clients cache.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from shared.core.errors import NotFound
from shared.core.settings import Settings, TrustedIssuer

# Where the app serves its Protected Resource Metadata, below the Functions route prefix "api" (host.json): a
# function cannot answer at the site root, and clients find it through the challenge's resource_metadata.
METADATA_PATH = "/api/.well-known/oauth-protected-resource"
MCP_PATH = "/api/mcp"
MICROSOFT_LOGIN = "https://login.microsoftonline.com"


class ProtectedResourceMetadata(BaseModel):
    """RFC 9728 §2: the fields MCP clients read (the MCP SDK checks `resource` is a parent of the server URL)."""

    resource: str
    authorization_servers: list[str] = Field(min_length=1)
    scopes_supported: list[str]
    bearer_methods_supported: list[str] = ["header"]
    resource_name: str = "Firebreak"


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def tenant_of(issuer: str) -> str:
    """The tenant segment of a v2.0 issuer (`https://login.microsoftonline.com/<tid>/v2.0`), else ''."""
    segments = [s for s in urlsplit(issuer).path.split("/") if s]
    return segments[-2] if len(segments) >= 2 and segments[-1] == "v2.0" else ""


def jwks_url_of(issuer: TrustedIssuer) -> str:
    """The issuer's key set: the configured URL, else Entra's shape `<issuer without /v2.0>/discovery/v2.0/keys`
    (the same for login.microsoftonline.com and External ID's ciamlogin.com)."""
    if issuer.jwks_url:
        return issuer.jwks_url
    base = issuer.issuer.rstrip("/")
    return base.removesuffix("/v2.0") + "/discovery/v2.0/keys"


def primary_issuer(settings: Settings) -> TrustedIssuer | None:
    """The workforce tenant from FIREBREAK_ENTRA_TENANT_ID / _ISSUER / _AUDIENCE / _JWKS_URL, if configured."""
    audiences = _split(settings.entra_audience)
    if not audiences:
        return None
    issuer = settings.entra_issuer or (
        f"{MICROSOFT_LOGIN}/{settings.entra_tenant_id}/v2.0" if settings.entra_tenant_id else None
    )
    if not issuer:
        return None
    tenant = settings.entra_tenant_id or tenant_of(issuer)
    if not tenant:
        return None
    return TrustedIssuer(issuer=issuer, tenant_id=tenant, audiences=audiences, jwks_url=settings.entra_jwks_url)


def trusted_issuers(settings: Settings) -> list[TrustedIssuer]:
    """Every issuer whose tokens are accepted, the primary (workforce) tenant first."""
    primary = primary_issuer(settings)
    return [*([primary] if primary else []), *settings.entra_trusted_issuers]


def resource_url(settings: Settings) -> str | None:
    """The MCP resource: FIREBREAK_ENTRA_RESOURCE, else <FIREBREAK_PUBLIC_BASE_URL>/api/mcp."""
    if settings.entra_resource:
        return settings.entra_resource
    return f"{settings.public_base_url}{MCP_PATH}" if settings.public_base_url else None


def challenge_scope(settings: Settings) -> str | None:
    """The full scope clients ask for: FIREBREAK_ENTRA_CHALLENGE_SCOPE, else <resource>/<FIREBREAK_ENTRA_SCOPE>
    (scope and resource then name the same identifier URI, which Entra requires: AADSTS9010010)."""
    if settings.entra_challenge_scope:
        return settings.entra_challenge_scope
    resource = resource_url(settings)
    return f"{resource}/{settings.entra_scope}" if resource else None


def metadata_url(settings: Settings) -> str | None:
    """Where the metadata is served (the challenge's resource_metadata), from the configured public origin."""
    if not primary_issuer(settings):
        return None
    base = settings.public_base_url
    if not base and settings.entra_resource:
        parts = urlsplit(settings.entra_resource)
        base = f"{parts.scheme}://{parts.netloc}"
    return f"{base}{METADATA_PATH}" if base else None


def protected_resource_metadata(settings: Settings) -> ProtectedResourceMetadata:
    """The document, or NotFound (404) saying which settings turn it on."""
    issuer = primary_issuer(settings)
    resource = resource_url(settings)
    scope = challenge_scope(settings)
    if issuer is None or resource is None or scope is None:
        raise NotFound(
            "Protected Resource Metadata is not configured: this app does not take Entra ID sign-in",
            recovery_suggestions=[
                (
                    "Set FIREBREAK_ENTRA_TENANT_ID and FIREBREAK_ENTRA_AUDIENCE (the API app registration's client"
                    " id), and FIREBREAK_PUBLIC_BASE_URL (https://<host>) or FIREBREAK_ENTRA_RESOURCE."
                ),
                "Or call with a workspace API key: 'Authorization: Bearer fbk_...'.",
            ],
        )
    return ProtectedResourceMetadata(resource=resource, authorization_servers=[issuer.issuer], scopes_supported=[scope])
