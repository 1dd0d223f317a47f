"""Shapes of health reports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from shared.tools.registry import ToolInput, ToolOutput


class HealthCheckRequest(ToolInput):
    include_versions: bool = Field(True, description="List the versions of the runtime and key packages.")


class StoreCheck(ToolOutput):
    name: Literal["cosmos", "blob", "perf_runs", "perf_artifacts"] = Field(description="cosmos / blob: write a probe and read it back; perf_runs: the perf run index answers a read; perf_artifacts: the perf Blob prefix can be listed.")
    ok: bool
    latency_ms: float | None = Field(None, description="How long the check took.")
    error: str | None = Field(None, description="Why the store did not answer (no secrets).")


class DependencyStatus(ToolOutput):
    configured: bool
    mode: str = Field(description="What the app does with it: e.g. 'llm' or 'rule_based' for the LLM.")


class HealthReport(ToolOutput):
    status: Literal["ok", "degraded"] = Field(description="'ok' when every store answered, else 'degraded'.")
    version: str
    build_commit: str
    environment: str
    dev_mode: bool
    uptime_s: float
    stores: list[StoreCheck]
    llm: DependencyStatus
    neubird: DependencyStatus
    versions: dict[str, str] = Field(default_factory=dict, description="Python and package versions.")
    next_action: str = Field(description="What to do about this report.")


class ReadinessReport(ToolOutput):
    status: Literal["ready", "starting"]
    stores: list[StoreCheck]


class WhoAmIRequest(ToolInput):
    pass


class WhoAmI(ToolOutput):
    workspace_id: str = Field(description="The workspace all your data is partitioned by.")
    user_id: str
    source: str = Field(description="How you were identified: entra, appservice, api_key or dev.")
