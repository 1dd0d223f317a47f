"""Typed settings read from the environment (app settings on Azure, local.settings.json / .env locally).

The settings loader: `Settings.from_env` reads every variable once per worker process (the platform's, its
LLM section's, each capability's section's, and the hosting plan's markers) and the rest of shared/ is given
the result; tests/unit/core/test_no_environ_reads.py keeps other modules from reading the environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from shared.core.allow_list import parse_entries
from shared.core.hosting import ON_AZURE, running_on_azure
from shared.core.keyvault_references import without_unresolved
from shared.core.llm_settings import LlmSettings
from shared.core.settings_section import SectionT, SettingsError, SettingsSection
from shared.core.telemetry_settings import TelemetrySettings

__all__ = ["LlmSettings", "SectionT", "Settings", "SettingsError", "SettingsSection"]


def _csv(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    raise ValueError("expected a comma-separated string or a list")


class TrustedIssuer(BaseModel):
    """One more token issuer the app trusts (FIREBREAK_ENTRA_TRUSTED_ISSUERS), with its own audiences."""

    model_config = {"frozen": True, "extra": "forbid"}

    issuer: str = Field(min_length=1, description="The exact `iss` of its v2.0 tokens.")
    tenant_id: str = Field(min_length=1, description="The `tid` its tokens must carry.")
    audiences: list[str] = Field(min_length=1, description="Accepted `aud` values (the API app's client id).")
    jwks_url: str | None = Field(
        None, description="Its signing keys; default <issuer without /v2.0>/discovery/v2.0/keys."
    )


class Settings(SettingsSection):
    """The platform's knobs plus every capability's section. Built once per worker process by
    `shared.app.wiring.load_settings()` (`Settings.from_env(env, sections=...)`), never at import time."""

    env_aliases: ClassVar[Mapping[str, str]] = {
        "cosmos_endpoint": "COSMOS_ENDPOINT",
        "cosmos_key": "COSMOS_KEY",
        "blob_connection_string": "AzureWebJobsStorage",  # a connection string locally; identity-based on Azure
    }

    # The platform's own sections, read with every Settings (capabilities' sections come from the catalogue).
    platform_sections: ClassVar[tuple[type[SettingsSection], ...]] = (LlmSettings, TelemetrySettings)

    # Read by hand in from_env, plus every name the platform's sections read: the catalogue's clash check
    # takes this list with Settings' own fields, so no capability reads an LLM variable by accident.
    extra_env_names: ClassVar[tuple[str, ...]] = (
        "AzureWebJobsStorage__blobServiceUri",
        *(
            name
            for section in platform_sections
            for name in (*section.env_names().values(), *section.env_aliases.values(), *section.extra_env_names)
        ),
    )

    # Not read from a variable of their own: set by from_env (never by an app setting).
    derived_fields: ClassVar[frozenset[str]] = frozenset({"sections", "running_on_azure", "unresolved_references"})

    sections: tuple[SettingsSection, ...] = Field(
        (), exclude=True, description="The platform's and the capabilities' sections (not read from the environment)."
    )
    running_on_azure: bool = Field(
        False,
        exclude=True,
        description="Set when settings load from the hosting plan's variables (shared/core/hosting.py); refuses "
        "dev mode and stdio MCP servers.",
    )
    unresolved_references: tuple[str, ...] = Field(
        (),
        exclude=True,
        description="Names of the app settings that arrived as unresolved Key Vault references (read as unset; "
        "health.check names them). Names only: never the reference text.",
    )

    environment: str = Field("azure", description="'local' for the offline stack, 'azure' when deployed.")
    dev_mode: bool = Field(False, description="Resolve unauthenticated callers to the dev principal. Local only.")
    dev_workspace: str = Field("dev-workspace", description="The dev principal's workspace (dev mode only).")
    dev_user: str = Field("dev-user", description="The dev principal's user (dev mode only).")
    build_commit: str = Field("unknown", description="The commit the build came from (set by CI or deployment).")
    build_version: str = Field("0.1.0", description="The app version health.check reports.")
    log_level: str = Field("INFO", description="Python log level of the app's loggers.")

    cosmos_endpoint: str | None = Field(None, description="The Cosmos DB account endpoint.")
    cosmos_key: str | None = Field(
        None, description="Account key; absent means managed identity (DefaultAzureCredential)."
    )
    cosmos_database: str = Field("firebreak", description="The Cosmos DB database.")
    cosmos_verify_tls: bool = Field(
        True, description="Verify the Cosmos endpoint's TLS certificate (the local server's is self-signed)."
    )
    cosmos_local_compat: bool = Field(
        False, description="Work around the local Cosmos-API server's gaps (see storage/cosmos_compat.py)."
    )
    create_resources: bool = Field(
        False,
        description="Create the Cosmos database, containers and the blob container on first use (local); "
        "bicep creates them in Azure.",
    )

    blob_connection_string: str | None = Field(
        None,
        description="Blob storage connection string (locally Azurite); on Azure use blob_account_url and the "
        "managed identity.",
    )
    blob_account_url: str | None = Field(
        None, description="https://<account>.blob.core.windows.net for managed identity."
    )
    blob_container: str = Field("firebreak", description="Blob container for artifacts, reports and large payloads.")
    store_timeout_s: float = Field(
        5.0,
        gt=0,
        le=120,
        description="Seconds a Cosmos DB or Blob request may wait to connect, and for each read of its answer, with "
        "one retry: a store that is down or hung answers callers 503 SERVICE_UNAVAILABLE (Retry-After) within "
        "about twice this (10 s at 5), instead of holding them for minutes.",
    )

    mcp_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values every route accepts (comma separated, host:* allowed; DNS-rebinding "
        "guard). WEBSITE_HOSTNAME is always added, loopback only locally; list a custom domain, Front "
        "Door or APIM host here (else 421).",
    )
    mcp_allowed_origins: list[str] = Field(
        default_factory=list,
        description="Origin header values every route accepts (comma separated); https://$WEBSITE_HOSTNAME "
        "is always added.",
    )
    max_request_bytes: int = Field(4 * 1024 * 1024, description="Largest JSON body accepted by tool and MCP routes.")
    mcp_call_deadline_s: float = Field(
        228.0,
        gt=0,
        le=3600,
        description="Seconds an MCP tools/call may run before it is stopped with an error result: a backstop "
        "just under the Functions HTTP limit of 230 s, above the tools' own budgets (NeuBird waits end by 225 s).",
    )
    mcp_send_timeout_s: float = Field(
        10.0,
        gt=0,
        le=120,
        description="Seconds one streamed MCP notification may wait for a client that does not read before the "
        "call is ended.",
    )
    mcp_log_level: str = Field(
        "info",
        pattern="^(debug|info|notice|warning|error|critical|alert|emergency)$",
        description="Lowest MCP log-notification level sent to handshake-version clients (stateless: their "
        "logging/setLevel cannot reach later calls); 2026-07-28 clients choose per call in _meta.",
    )

    trust_appservice_auth: bool = Field(
        False, description="Trust X-MS-CLIENT-PRINCIPAL headers (only behind App Service authentication)."
    )
    entra_tenant_id: str | None = Field(
        None, description="Entra ID tenant: the issuer is https://login.microsoftonline.com/<tenant>/v2.0."
    )
    entra_audience: str | None = Field(
        None,
        description="Entra ID token audience: the API app registration's client id (comma separated for several); "
        "setting it turns token validation on.",
    )
    entra_issuer: str | None = Field(None, description="Entra ID issuer, when not derived from the tenant.")
    entra_jwks_url: str | None = Field(None, description="Signing keys URL, when not discovered from the issuer.")
    entra_workspace_claim: str = Field("tid", description="The token claim that names the caller's workspace.")
    entra_tenant_workspaces: dict[str, str] = Field(
        default_factory=dict,
        description="Bind a tenant to an existing workspace: comma-separated tid=workspace_id pairs; a tenant not "
        "listed uses its entra_workspace_claim.",
    )
    entra_scope: str = Field(
        "user_impersonation",
        min_length=1,
        description="The delegated scope every Entra token's scp must contain (a token without it is 403 "
        "insufficient_scope).",
    )
    entra_app_roles: list[str] = Field(
        default_factory=list,
        description="App roles that admit an app-only token (roles, no scp; comma separated); empty: app-only tokens "
        "are refused.",
    )
    entra_allowed_client_ids: list[str] = Field(
        default_factory=list,
        description="Client applications (azp) whose tokens are accepted (comma separated); empty: any client the "
        "tenant lets obtain a token for the API.",
    )
    entra_trusted_issuers: list[TrustedIssuer] = Field(
        default_factory=list,
        description='More trusted issuers as a JSON list of {"issuer", "tenant_id", "audiences", "jwks_url"?} (an '
        "External ID tenant for the phone); the tenant of FIREBREAK_ENTRA_TENANT_ID/_ISSUER comes first.",
    )
    entra_resource: str | None = Field(
        None,
        description="The protected resource clients ask tokens for (Protected Resource Metadata `resource`; one of "
        "the app registration's identifierUris); default <FIREBREAK_PUBLIC_BASE_URL>/api/mcp.",
    )
    entra_challenge_scope: str | None = Field(
        None,
        description="The full scope named in 401 challenges and the metadata's scopes_supported; default "
        "<resource>/<FIREBREAK_ENTRA_SCOPE>.",
    )
    entra_jwks_max_age_s: float = Field(
        3600.0,
        ge=1,
        le=86400,
        description="Seconds a fetched signing-key set is trusted; after that it is fetched again and a key removed "
        "from it stops validating.",
    )
    entra_jwks_refetch_cooldown_s: float = Field(
        30.0,
        ge=0,
        le=3600,
        description="Least seconds between two fetches of the key set triggered by a token with an unknown kid.",
    )
    public_base_url: str | None = Field(
        None,
        description="The app's public origin (https://<host>): the MCP resource and the metadata URL in 401 "
        "challenges are built from it, never from a request's Host. Default https://$WEBSITE_HOSTNAME on Azure; set "
        "it for a custom domain or Front Door.",
    )

    outbound_allow_http: bool = Field(
        False, description="Let caller-chosen outbound URLs use plain http (the guard requires https otherwise)."
    )
    outbound_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Non-public hosts every feature's outbound URLs may reach (comma separated: host, host:port, "
        "CIDR, 10.0.0.5:8443, [fd00::5]:443; no port: every port). Kept for compatibility: prefer the "
        "per-feature FIREBREAK_OUTBOUND_<FEATURE>_ALLOWED_HOSTS with ports.",
    )
    outbound_runbooks_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Non-public hosts runbook URLs (and their redirects, the S3 endpoint) may reach, besides "
        "FIREBREAK_OUTBOUND_ALLOWED_HOSTS (same entry forms; give a port).",
    )
    outbound_collect_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Non-public hosts collect.run's base_url may reach, besides FIREBREAK_OUTBOUND_ALLOWED_HOSTS "
        "(same entry forms; give a port).",
    )
    outbound_neubird_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Non-public hosts NEUBIRD_BASE_URL and neubird_switch_instance instances may reach, besides "
        "FIREBREAK_OUTBOUND_ALLOWED_HOSTS (same entry forms; give a port; FIREBREAK_NEUBIRD_ALLOWED_HOSTS "
        "still decides which instances get the credentials).",
    )
    outbound_mcp_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Non-public hosts the investigations' MCP servers may be at, besides "
        "FIREBREAK_OUTBOUND_ALLOWED_HOSTS (same entry forms; give a port).",
    )

    @field_validator("entra_app_roles", "entra_allowed_client_ids", mode="before")
    @classmethod
    def _split_entra(cls, value: object) -> list[str]:
        return _csv(value)

    @field_validator("entra_tenant_workspaces", mode="before")
    @classmethod
    def _pairs(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        pairs = [entry.partition("=") for entry in _csv(value)]
        if any(not key.strip() or not sep or not val.strip() for key, sep, val in pairs):
            raise ValueError("expected comma-separated tid=workspace_id pairs")
        return {key.strip(): val.strip() for key, _, val in pairs}

    @field_validator("entra_trusted_issuers", mode="before")
    @classmethod
    def _issuers(cls, value: object) -> object:
        if value is None or value == "":
            return []
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise ValueError("expected a JSON list of issuers") from None
        return value

    @field_validator("public_base_url", "entra_resource", mode="after")
    @classmethod
    def _absolute_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError("expected an absolute http(s) URL without query or fragment")
        return value.rstrip("/")

    @field_validator("mcp_allowed_hosts", "mcp_allowed_origins", mode="before")
    @classmethod
    def _split(cls, value: object) -> list[str]:
        return _csv(value)

    @field_validator(
        "outbound_allowed_hosts",
        "outbound_runbooks_allowed_hosts",
        "outbound_collect_allowed_hosts",
        "outbound_neubird_allowed_hosts",
        "outbound_mcp_allowed_hosts",
        mode="before",
    )
    @classmethod
    def _allow_list(cls, value: object) -> list[str]:
        entries = _csv(value)
        parse_entries(entries)  # a typo fails the worker at start-up with the variable's name
        return entries

    @property
    def llm(self) -> LlmSettings:
        """The platform's LLM section (its defaults, no model, when settings were built by hand)."""
        return self.section(LlmSettings)

    @property
    def llm_configured(self) -> bool:
        return self.llm.configured

    @property
    def is_local(self) -> bool:
        return self.environment == "local"

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, sections: tuple[type[SettingsSection], ...] = ()
    ) -> Settings:
        """Read `FIREBREAK_*` and the platform's own variables, then the platform's sections (the LLM's) and each
        capability's, and the hosting plan's markers (`running_on_azure`); unknown keys are ignored.

        The one place the process environment is read (`env` defaults to it): everything else is given
        the Settings this returns.
        """
        # An unresolved Key Vault reference is unset everywhere below (the hand-read fallbacks too), and named.
        env, unresolved = without_unresolved(os.environ if env is None else env)
        values = cls.values_from_env(env)
        # Platform names that Azure sets or that users know from the docs.
        if "blob_account_url" not in values and env.get("AzureWebJobsStorage__blobServiceUri"):
            values["blob_account_url"] = env["AzureWebJobsStorage__blobServiceUri"]
        # The platform's own name for the app (set by Azure, not by a caller): the default public origin.
        if not values.get("public_base_url") and env.get("WEBSITE_HOSTNAME"):
            values["public_base_url"] = f"https://{env['WEBSITE_HOSTNAME']}"
        kinds = (*cls.platform_sections, *(s for s in sections if s not in cls.platform_sections))
        values["sections"] = tuple(section.from_env(env) for section in kinds)
        values["running_on_azure"] = running_on_azure(env)
        values["unresolved_references"] = unresolved
        settings = cls.validated(values)
        settings.refuse_unsafe(running_on_azure=settings.running_on_azure)
        return settings

    def section(self, kind: type[SectionT]) -> SectionT:
        """A capability's (or the platform's LLM) section; its defaults when it was not collected (settings built by
        hand in tests)."""
        for section in self.sections:
            if isinstance(section, kind):
                return section
        return kind()

    def with_section(self, section: SettingsSection) -> Settings:
        """A copy with `section` in place of the one of its type (tests tune a capability's limits this way)."""
        kept = tuple(s for s in self.sections if type(s) is not type(section))
        return self.model_copy(update={"sections": (*kept, section)})

    def refuse_unsafe(self, *, running_on_azure: bool) -> None:
        """Raise SettingsError for combinations that would open the app: dev mode on Azure, Entra without an issuer,
        and whatever a capability's section refuses."""
        for section in self.sections:
            section.refuse_unsafe(running_on_azure=running_on_azure)
        if self.dev_mode and running_on_azure:
            raise SettingsError(
                f"FIREBREAK_DEV_MODE=true is refused {ON_AZURE}: it would answer every "
                "unauthenticated caller as the dev principal. Remove FIREBREAK_DEV_MODE from the app settings."
            )
        if self.entra_audience and not (self.entra_issuer or self.entra_tenant_id):
            raise SettingsError(
                "Entra ID validation is on (FIREBREAK_ENTRA_AUDIENCE is set) but no issuer is known: set "
                "FIREBREAK_ENTRA_TENANT_ID (issuer https://login.microsoftonline.com/<tenant>/v2.0) or "
                "FIREBREAK_ENTRA_ISSUER."
            )
