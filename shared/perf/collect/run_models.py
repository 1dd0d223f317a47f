"""What collect.run's Durable activities take and return, and the run's output."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Sample(_Payload):
    """One timed request as timings.json records it (run.run_path: the probe's answer with its path)."""

    method: str
    url_path: str = Field(description="As recorded: redacted like the plan's url_paths.")
    warmup: bool
    status: int | None = None
    error: str | None = None
    timings_ms: dict[str, float | None] = Field(description="dns, connect, tls, ttfb, total (None: not reached).")


class ProbeRequest(_Payload):
    """The probe activity's input: which of the plan's url_paths to time (never the path itself)."""

    index: int = Field(ge=0)


class Samples(_Payload):
    """A probe's samples, or the bundle activity's input: every probe's, in order."""

    samples: list[Sample]


class BundleWritten(_Payload):
    """The bundle activity's output: what was written and where."""

    bundle_id: str
    artifact_counts: dict[str, int]
    ingest_artifacts: list[dict[str, str]] = Field(description="{blob} or {blob, path}: artifacts.ingest's input.")
    removed_by_retention: list[str]
    bundle_dir: str
    manifest_path: str
    timings_path: str


class CollectOutput(BundleWritten):
    """The run's output (get_run_status shows it)."""

    state: Literal["completed"] = "completed"
    correlation_id: str | None = None
    next_action: str = "Call artifacts.ingest with ingest_artifacts as artifacts."
