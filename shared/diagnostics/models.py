"""Shapes of the diagnostics report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class CheckResult(BaseModel):
    name: str
    ok: bool
    latency_ms: float | None = None
    detail: str = Field("", description="What was done, or why it failed (no secrets).")


class DiagnosticsReport(BaseModel):
    status: Literal["ok", "degraded"]
    checks: list[CheckResult]
    failed: list[str] = Field(default_factory=list, description="Names of the checks that failed.")
    next_action: str
