"""Settings of the perf capability (FIREBREAK_PERF_*)."""

from __future__ import annotations

from pydantic import Field, field_validator

from shared.core.settings import SettingsSection


class PerfSettings(SettingsSection):
    env_prefix = "perf_"

    allow_local_paths: bool = Field(
        False,
        description='Accept artifacts as {"path": ...} on this machine\'s disk (local runs only; Azure uses Blob).',
    )
    max_artifact_bytes: int = Field(
        512 * 1024 * 1024, description="Largest artifact accepted by POST /api/artifacts and by ingest."
    )
    keep_last_n: int = Field(
        50, ge=1, description="Snapshots kept per workspace (oldest removed first, with their reports)."
    )
    ttl_days: int | None = Field(None, ge=1, description="Snapshots older than this are removed; empty keeps them.")
    collect_inline_seconds: float = Field(
        60.0,
        gt=0,
        description="collect.run answers inline when its worst case fits; longer runs continue as a Durable "
        "orchestration.",
    )
    upload_url_minutes: int = Field(
        15, ge=1, le=24 * 60, description="Lifetime of the upload URLs create_upload_url hands out."
    )
    max_statement_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Slow-log statements keep this many bytes (longer ones are marked truncated; their class "
        "is that of the kept text).",
    )
    max_request_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=1,
        description="Total artifact bytes one artifacts.validate or artifacts.ingest call may read.",
    )
    workspace_quota_bytes: int = Field(
        10 * 1024**3,
        ge=1,
        description="Stored artifact bytes per workspace above which create_upload_url refuses new URLs "
        "(RATE_LIMITED).",
    )
    max_upload_urls: int = Field(
        20,
        ge=1,
        description="Upload URLs a workspace may hold unexpired at once (create_upload_url answers "
        "RATE_LIMITED beyond).",
    )

    @field_validator("ttl_days", mode="before")
    @classmethod
    def _empty_none(cls, value: object) -> object:
        return None if value == "" else value
