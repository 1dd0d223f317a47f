"""Settings of health: how long the anonymous readiness answer is reused."""

from __future__ import annotations

from pydantic import Field

from shared.core.settings import SettingsSection


class HealthSettings(SettingsSection):
    env_prefix = "health_"

    cache_seconds: float = Field(
        10.0,
        ge=0,
        description=(
            "The anonymous GET /api/health reuses a ready answer this long per worker (a failure at most 2 s);"
            " 0 probes every call."
        ),
    )
