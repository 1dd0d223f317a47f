"""The platform's telemetry settings (FIREBREAK_TELEMETRY_*): where the app's own spans go, if anywhere.

Application Insights is on when APPLICATIONINSIGHTS_CONNECTION_STRING is set (the bicep sets it with
APPLICATIONINSIGHTS_AUTHENTICATION_STRING for Entra ingestion) and FIREBREAK_TELEMETRY_ENABLED is not false;
shared/core/telemetry.py configures it on the first request, never while the worker indexes.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SecretStr

from shared.core.settings_section import SettingsSection


class TelemetrySettings(SettingsSection):
    """Application Insights for the app's spans (requests, tool calls, activities, outbound calls)."""

    env_prefix = "telemetry_"
    env_aliases: ClassVar[dict[str, str]] = {
        "connection_string": "APPLICATIONINSIGHTS_CONNECTION_STRING",
        "authentication_string": "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
    }

    enabled: bool = Field(
        True,
        description="Send the app's spans to Application Insights when a connection string is set; false keeps them "
        "off (the Functions host's own telemetry is unaffected).",
    )
    connection_string: SecretStr | None = Field(
        None,
        description="The Application Insights connection string (alias APPLICATIONINSIGHTS_CONNECTION_STRING, which "
        "the host reads too); unset: no spans are made or exported.",
    )
    authentication_string: str | None = Field(
        None,
        description="'Authorization=AAD' (with ';ClientId=<user-assigned identity>') to ingest with the managed "
        "identity (alias APPLICATIONINSIGHTS_AUTHENTICATION_STRING): required when the component refuses "
        "instrumentation keys.",
    )
    sampling_ratio: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Share of traces kept (0-1); unset: the Azure Monitor distro's default sampler.",
    )

    @property
    def configured(self) -> bool:
        return bool(self.enabled and self.connection_string and self.connection_string.get_secret_value().strip())

    def ingestion_identity(self) -> tuple[bool, str | None]:
        """(ingest with Entra ID, the user-assigned identity's client id or None for the system-assigned one)."""
        parts = {
            key.strip().lower(): value.strip()
            for key, _, value in (p.partition("=") for p in (self.authentication_string or "").split(";"))
            if key.strip()
        }
        return parts.get("authorization", "").upper() == "AAD", parts.get("clientid") or None
