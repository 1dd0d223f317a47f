"""Settings of the NeuBird capability (FIREBREAK_NEUBIRD_*, and the NEUBIRD_* names NeuBird's own tools use).

Credentials are the deployment's: one NeuBird account the app logs in with (a Key Vault reference on
Azure). Without NEUBIRD_BASE_URL, NEUBIRD_EMAIL and NEUBIRD_PASSWORD every neubird_* tool answers
NOT_CONFIGURED and the rest of the app is unaffected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr

from shared.core.settings import SettingsError, SettingsSection

NOT_CONFIGURED_SETTINGS = ("NEUBIRD_BASE_URL", "NEUBIRD_EMAIL", "NEUBIRD_PASSWORD")


class NeubirdSettings(SettingsSection):
    env_prefix = "neubird_"
    env_aliases: ClassVar[Mapping[str, str]] = {
        "base_url": "NEUBIRD_BASE_URL",
        "email": "NEUBIRD_EMAIL",
        "password": "NEUBIRD_PASSWORD",
        "default_project_uuid": "NEUBIRD_DEFAULT_PROJECT_UUID",
        "default_organization_uuid": "NEUBIRD_DEFAULT_ORGANIZATION_UUID",
        "default_timeframe": "NEUBIRD_DEFAULT_TIMEFRAME",
        "enable_streaming": "NEUBIRD_ENABLE_STREAMING",
        "max_poll_attempts": "NEUBIRD_MAX_POLL_ATTEMPTS",
        "poll_interval_ms": "NEUBIRD_POLL_INTERVAL_MS",
    }

    # -- the account ---------------------------------------------------------------------------------------
    base_url: str | None = Field(
        None, description="The NeuBird API, e.g. https://prod.app.neubird.ai/api (also read from NEUBIRD_BASE_URL)."
    )
    email: str | None = Field(None, description="The NeuBird account's email (alias NEUBIRD_EMAIL).", repr=False)
    password: SecretStr | None = Field(
        None, description="The NeuBird account's password (alias NEUBIRD_PASSWORD; a Key Vault reference on Azure)."
    )
    workspaces: str = Field(
        "*",
        description="Comma-separated workspace ids that may use the deployment's NeuBird account ('*': every "
        "workspace). Others get FORBIDDEN. Sessions a workspace creates stay its own either way.",
    )
    allowed_hosts: str = Field(
        "*.app.neubird.ai",
        description="Comma-separated host patterns neubird_switch_instance may point the account's credentials at "
        "(`*.` matches one or more labels; `host:port` pins a port). NEUBIRD_BASE_URL's host is always allowed.",
    )

    # -- defaults a caller can change with neubird_configure_defaults ---------------------------------------
    default_project_uuid: str | None = Field(None, description="Project used when a tool gets none.")
    default_organization_uuid: str = Field("ORGANIZATION_NAME_ROOT", description="Organization sent to NeuBird.")
    default_timeframe: str = Field("last 1 hour", description="Timeframe of an investigation that names none.")
    # The spec's stream_updates defaults to false; a deployment or a caller (neubird_configure_defaults) can turn it on.
    enable_streaming: bool = Field(False, description="Report stream progress (MCP progress) while waiting.")

    # -- waiting and resilience -------------------------------------------------------------------------------
    max_poll_attempts: int = Field(30, ge=1, le=10_000, description="Status polls of a waiting investigation.")
    poll_interval_ms: int = Field(2000, ge=50, le=600_000, description="Milliseconds between status polls.")
    sync_wait_seconds: float = Field(
        200.0,
        gt=0,
        le=220,
        description="Longest a tool waits inside one HTTP request (Functions ends responses at 230 s); longer "
        "waits continue as a Durable run the caller polls.",
    )
    request_timeout_seconds: float = Field(30.0, gt=0, le=300, description="Timeout of one NeuBird API call.")
    stream_idle_seconds: float = Field(
        60.0, gt=0, le=900, description="A prompt stream silent this long (no event, no keepalive) is dropped."
    )
    max_attempts: int = Field(4, ge=1, le=10, description="Attempts per API call on 429/5xx/connection errors.")
    max_retry_wait_seconds: float = Field(
        20.0, gt=0, le=300, description="Longest single backoff wait, Retry-After included."
    )
    max_response_bytes: int = Field(
        16 * 1024 * 1024, ge=64 * 1024, le=64 * 1024 * 1024, description="Largest NeuBird response body read."
    )
    projects_cache_seconds: int = Field(300, ge=0, le=86_400, description="How long a project list is reused.")
    completed_cache_seconds: int = Field(
        3600, ge=0, le=86_400, description="How long a completed investigation's results are reused."
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.email and self.password and self.password.get_secret_value())

    def admits(self, workspace_id: str) -> bool:
        names = {w.strip() for w in self.workspaces.split(",") if w.strip()}
        return "*" in names or workspace_id in names

    def host_patterns(self) -> tuple[str, ...]:
        return tuple(p.strip().lower() for p in self.allowed_hosts.split(",") if p.strip())

    def refuse_unsafe(self, *, running_on_azure: bool) -> None:
        if running_on_azure and self.base_url and not self.base_url.lower().startswith("https://"):
            raise SettingsError("NEUBIRD_BASE_URL must be an https URL on Azure.")
