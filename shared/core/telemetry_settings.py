"""The platform's telemetry settings (FIREBREAK_TELEMETRY_*): where the app's own spans go, if anywhere.

Application Insights is on when APPLICATIONINSIGHTS_CONNECTION_STRING is set (the bicep sets it with
APPLICATIONINSIGHTS_AUTHENTICATION_STRING for Entra ingestion) and FIREBREAK_TELEMETRY_ENABLED is not false;
shared/core/telemetry.py configures it on the first request, never while the worker indexes.

Whether the worker streams its own telemetry is the worker's setting, read here as the worker reads it
(azure_functions_runtime 1.3.0, handle_event.py worker_init_request / functions_environment_reload_request):
PYTHON_ENABLE_OPENTELEMETRY (OpenTelemetry libraries in the app) or PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY
(the worker configures the Azure Monitor distro itself, otel.py initialize_azure_monitor), each true-like as its
utils/app_setting_manager.is_true_like. Either makes the worker report the WorkerOpenTelemetryEnabled capability;
the host then sets ScriptHost.WorkerOpenTelemetryEnabled (GrpcWorkerChannel) and, in its OpenTelemetry mode, drops
the worker's `Function.*` log records ("we expect the user's own code to be logging these where they want them to
go": Azure/azure-functions-host, OpenTelemetryConfigurationExtensions AddDefaultOpenTelemetryFilters).
The deployment sets only PYTHON_ENABLE_OPENTELEMETRY: with PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY the worker
configures the distro first with its defaults (every HTTP client instrumentation on, which records full URLs with
their query strings), and the app's own configuration can no longer replace that tracer provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, SecretStr

from shared.core.keyvault_references import is_unresolved_reference
from shared.core.settings_section import SettingsSection

# The worker's own switches (see above); a value counts as on as the worker's is_true_like says.
WORKER_TELEMETRY_SETTINGS = ("PYTHON_ENABLE_OPENTELEMETRY", "PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY")
_TRUE_LIKE = frozenset({"1", "true", "t", "yes", "y"})


class TelemetrySettings(SettingsSection):
    """Application Insights for the app's spans (requests, tool calls, activities, outbound calls)."""

    env_prefix = "telemetry_"
    env_aliases: ClassVar[dict[str, str]] = {
        "connection_string": "APPLICATIONINSIGHTS_CONNECTION_STRING",
        "authentication_string": "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
    }
    extra_env_names: ClassVar[tuple[str, ...]] = WORKER_TELEMETRY_SETTINGS
    derived_fields: ClassVar[frozenset[str]] = frozenset({"worker_streams_telemetry"})

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

    worker_streams_telemetry: bool = Field(
        False,
        description="The Functions worker streams its own telemetry (PYTHON_ENABLE_OPENTELEMETRY or "
        "PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY true): the host no longer forwards the app's log records, "
        "so the app exports them itself. No variable of its own: the worker's settings decide.",
    )

    @classmethod
    def values_from_env(cls, env: Mapping[str, str]) -> dict[str, Any]:
        values = super().values_from_env(env)
        values["worker_streams_telemetry"] = any(
            not is_unresolved_reference(env.get(name, "")) and env.get(name, "").strip().lower() in _TRUE_LIKE
            for name in WORKER_TELEMETRY_SETTINGS
        )
        return values

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
