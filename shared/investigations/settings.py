"""Settings of alert investigations (FIREBREAK_INVESTIGATIONS_*)."""

from __future__ import annotations

from pydantic import Field

from shared.core.settings import SettingsSection


class InvestigationSettings(SettingsSection):
    env_prefix = "investigations_"

    max_iterations: int = Field(5, ge=1, le=10, description="Iterations of choose-call-analyse per investigation.")
    max_tool_calls: int = Field(15, ge=1, le=50, description="Tool calls per investigation, over all iterations.")
    data_threshold: int = Field(
        10, ge=1, description="Stop once this many data points were gathered, after at least min_iterations."
    )
    min_iterations: int = Field(3, ge=1, description="Iterations before the data threshold may stop the run.")
    time_budget_seconds: int = Field(
        600, ge=30, le=3600, description="Wall-clock budget of one investigation; the report is written when it ends."
    )
    inline_output_bytes: int = Field(
        32 * 1024, ge=1024, description="Tool outputs above this go to Blob; the record and history hold a reference."
    )
