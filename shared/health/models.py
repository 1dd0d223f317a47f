"""Shapes of health reports and of the diagnostics report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from shared.tools.checks import CheckResult
from shared.tools.registry import ToolInput, ToolOutput


class HealthCheckRequest(ToolInput):
    include_versions: bool = Field(True, description="List the versions of the runtime and key packages.")


class StoreCheck(ToolOutput):
    name: str = Field(
        description=(
            "The check: cosmos / blob write a probe and read it back; capabilities add their own"
            " (perf_runs, perf_artifacts: the perf index and Blob prefix answer)."
        )
    )
    ok: bool
    latency_ms: float | None = Field(None, description="How long the check took.")
    error: str | None = Field(None, description="Why the store did not answer (no secrets).")


class DependencyStatus(ToolOutput):
    configured: bool
    mode: str = Field(description="What the app does with it: e.g. 'llm' or 'rule_based' for the LLM.")


class IntegrationStatus(ToolOutput):
    name: str = Field(description="The outside service's setup check, e.g. neubird_setup.")
    detail: str = Field(description="Configured (for which host) or not, and which settings to set.")


class HealthReport(ToolOutput):
    status: Literal["ok", "degraded"] = Field(
        description="'ok' when every store answered and every app setting resolved, else 'degraded'."
    )
    version: str
    build_commit: str
    environment: str
    dev_mode: bool
    uptime_s: float
    stores: list[StoreCheck]
    llm: DependencyStatus
    integrations: list[IntegrationStatus] = Field(
        default_factory=list, description="Outside services capabilities use (NeuBird, ...): configured or not."
    )
    versions: dict[str, str] = Field(default_factory=dict, description="Python and package versions.")
    settings: list[str] = Field(
        default_factory=list,
        description="App settings that need attention, each by name with what to check: a Key Vault reference the "
        "platform could not resolve is read as unset (features that need it answer NOT_CONFIGURED).",
    )
    next_action: str = Field(description="What to do about this report.")


class ReadinessReport(ToolOutput):
    status: Literal["ready", "starting"]
    stores: list[StoreCheck]
    unresolved_settings: int = Field(
        0,
        description="How many app settings are Key Vault references the platform could not resolve (read as "
        "unset): health.check names them. A count only: this route is anonymous.",
    )


class WhoAmIRequest(ToolInput):
    pass


class WhoAmI(ToolOutput):
    workspace_id: str = Field(description="The workspace all your data is partitioned by.")
    user_id: str
    source: str = Field(description="How you were identified: entra, appservice, api_key or dev.")


class DiagnosticsReport(BaseModel):
    status: Literal["ok", "degraded"]
    checks: list[CheckResult]
    failed: list[str] = Field(default_factory=list, description="Names of the checks that failed.")
    next_action: str
