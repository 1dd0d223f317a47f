"""Typed settings read from the environment (app settings on Azure, local.settings.json / .env locally)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, Field, field_validator


def _csv(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)  # type: ignore[arg-type]


class SettingsError(ValueError):
    """Settings that must not run together; the message names the setting to change."""


class Settings(BaseModel):
    """Every knob of the app. Built once per worker process by `Settings.from_env()`, never at import time."""

    model_config = {"frozen": True, "extra": "ignore"}

    environment: str = Field("azure", description="'local' for the offline stack, 'azure' when deployed.")
    dev_mode: bool = Field(False, description="Resolve unauthenticated callers to the dev principal. Local only.")
    dev_workspace: str = "dev-workspace"
    dev_user: str = "dev-user"
    build_commit: str = Field("unknown", description="The commit the build came from (set by CI or deployment).")
    build_version: str = "0.1.0"
    log_level: str = "INFO"

    cosmos_endpoint: str | None = None
    cosmos_key: str | None = Field(None, description="Account key; absent means managed identity (DefaultAzureCredential).")
    cosmos_database: str = "firebreak"
    cosmos_verify_tls: bool = True
    cosmos_local_compat: bool = Field(False, description="Work around the local Cosmos-API server's gaps (see storage/cosmos_compat.py).")
    create_resources: bool = Field(False, description="Create the Cosmos database, containers and the blob container on first use (local); bicep creates them in Azure.")

    blob_connection_string: str | None = None
    blob_account_url: str | None = Field(None, description="https://<account>.blob.core.windows.net for managed identity.")
    blob_container: str = "firebreak"

    mcp_allowed_hosts: list[str] = Field(default_factory=list, description="Host header values the MCP endpoint accepts (DNS-rebinding guard).")
    mcp_allowed_origins: list[str] = Field(default_factory=list)
    max_request_bytes: int = Field(4 * 1024 * 1024, description="Largest JSON body accepted by tool and MCP routes.")
    health_cache_seconds: float = Field(10.0, ge=0, description="The anonymous GET /api/health reuses a ready answer this long per worker (a failure at most 2 s).")

    trust_appservice_auth: bool = Field(False, description="Trust X-MS-CLIENT-PRINCIPAL headers (only behind App Service authentication).")
    entra_tenant_id: str | None = None
    entra_audience: str | None = None
    entra_issuer: str | None = None
    entra_jwks_url: str | None = None
    entra_workspace_claim: str = "tid"

    llm_endpoint: str | None = Field(None, description="Azure OpenAI endpoint or any OpenAI-compatible base URL.")
    llm_model: str | None = None
    neubird_base_url: str | None = None

    perf_allow_local_paths: bool = Field(False, description="Accept artifacts as {\"path\": ...} on this machine's disk (local runs only; Azure uses Blob).")
    perf_max_artifact_bytes: int = Field(512 * 1024 * 1024, description="Largest artifact accepted by POST /api/artifacts and by ingest.")
    perf_keep_last_n: int = Field(50, ge=1, description="Snapshots kept per workspace (oldest removed first, with their reports).")
    perf_ttl_days: int | None = Field(None, ge=1, description="Snapshots older than this are removed; empty keeps them.")
    perf_collect_inline_seconds: float = Field(60.0, gt=0, description="collect.run answers inline when its worst case fits; longer runs continue as a Durable orchestration.")
    perf_upload_url_minutes: int = Field(15, ge=1, le=24 * 60, description="Lifetime of the upload URLs artifacts.upload_url hands out.")
    perf_max_statement_bytes: int = Field(1024 * 1024, ge=1024, le=64 * 1024 * 1024, description="Slow-log statements keep this many bytes (longer ones are marked truncated; their class is that of the kept text).")
    perf_max_request_bytes: int = Field(1024 * 1024 * 1024, ge=1, description="Total artifact bytes one artifacts.validate or artifacts.ingest call may read.")
    perf_workspace_quota_bytes: int = Field(10 * 1024**3, ge=1, description="Stored artifact bytes per workspace above which artifacts.upload_url refuses new URLs (RATE_LIMITED).")
    perf_max_upload_urls: int = Field(20, ge=1, description="Upload URLs a workspace may hold unexpired at once (artifacts.upload_url answers RATE_LIMITED beyond).")

    secrets_key: str | None = Field(None, description="Base64 of 32 random bytes: the AES-256-GCM key of run secrets (collect.run header values) at rest.")
    run_secrets_ttl_seconds: int = Field(6 * 3600, ge=60, description="How long a run's encrypted secrets live; a run still going after that fails its probes.")
    run_record_ttl_days: int = Field(30, ge=1, description="How long run records (status, owner, output) are kept (Cosmos TTL on Azure).")

    outbound_allow_http: bool = Field(False, description="Let caller-chosen outbound URLs use plain http (the guard requires https otherwise).")
    outbound_allowed_hosts: list[str] = Field(default_factory=list, description="Hosts or CIDRs that caller-chosen URLs may reach although private, loopback or link-local.")

    @field_validator("mcp_allowed_hosts", "mcp_allowed_origins", "outbound_allowed_hosts", mode="before")
    @classmethod
    def _split(cls, value: object) -> list[str]:
        return _csv(value)

    @field_validator("perf_ttl_days", mode="before")
    @classmethod
    def _empty_none(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_endpoint and self.llm_model)

    @property
    def neubird_configured(self) -> bool:
        return bool(self.neubird_base_url)

    @property
    def is_local(self) -> bool:
        return self.environment == "local"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read `FIREBREAK_*` and the platform's own variables; unknown keys are ignored."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        for name in cls.model_fields:
            key = f"FIREBREAK_{name.upper()}"
            if key in env:
                values[name] = env[key]
        # Platform names that Azure sets or that users know from the docs.
        aliases = {
            "cosmos_endpoint": "COSMOS_ENDPOINT",
            "cosmos_key": "COSMOS_KEY",
            "blob_connection_string": "AzureWebJobsStorage",  # a connection string locally; identity-based on Azure
            "llm_endpoint": "AZURE_OPENAI_ENDPOINT",
            "llm_model": "AZURE_OPENAI_DEPLOYMENT",
            "neubird_base_url": "NEUBIRD_BASE_URL",
            "build_commit": "FIREBREAK_BUILD_COMMIT",
        }
        for name, key in aliases.items():
            if name not in values and env.get(key):
                values[name] = env[key]
        if "llm_endpoint" not in values and env.get("OPENAI_BASE_URL"):
            values["llm_endpoint"] = env["OPENAI_BASE_URL"]
            values.setdefault("llm_model", env.get("OPENAI_MODEL", ""))
        if "blob_account_url" not in values and env.get("AzureWebJobsStorage__blobServiceUri"):
            values["blob_account_url"] = env["AzureWebJobsStorage__blobServiceUri"]
        settings = cls.model_validate(values)
        settings.refuse_unsafe(running_on_azure=bool(env.get("WEBSITE_INSTANCE_ID")))
        return settings

    def refuse_unsafe(self, *, running_on_azure: bool) -> None:
        """Raise SettingsError for combinations that would open the app: dev mode on Azure, Entra without an issuer."""
        if self.dev_mode and running_on_azure:
            raise SettingsError(
                "FIREBREAK_DEV_MODE=true is refused on Azure (WEBSITE_INSTANCE_ID is set): it would answer every "
                "unauthenticated caller as the dev principal. Remove FIREBREAK_DEV_MODE from the app settings."
            )
        if self.entra_audience and not (self.entra_issuer or self.entra_tenant_id):
            raise SettingsError(
                "Entra ID validation is on (FIREBREAK_ENTRA_AUDIENCE is set) but no issuer is known: set "
                "FIREBREAK_ENTRA_TENANT_ID (issuer https://login.microsoftonline.com/<tenant>/v2.0) or FIREBREAK_ENTRA_ISSUER."
            )
