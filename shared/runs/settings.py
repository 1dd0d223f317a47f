"""Settings of runs: the key that seals run secrets, and how long secrets and records live."""

from __future__ import annotations

from pydantic import Field

from shared.core.settings import SettingsSection


class RunSettings(SettingsSection):
    # No prefix: these names were public before settings had sections (FIREBREAK_SECRETS_KEY, ...).
    env_prefix = ""

    secrets_key: str | None = Field(
        None,
        description=(
            "Base64 of 32 random bytes: the AES-256-GCM key of run secrets (collect.run header values and"
            " unrecorded query strings of long runs) at rest. Without it such runs answer NOT_CONFIGURED;"
            " the local stack derives one."
        ),
    )
    run_secrets_ttl_seconds: int = Field(
        6 * 3600,
        ge=60,
        description="How long a run's encrypted secrets live; a run still going after that fails its probes.",
    )
    run_record_ttl_days: int = Field(
        30, ge=1, description="How long run records (status, owner, output) are kept (Cosmos TTL on Azure)."
    )
