"""Inputs and outputs of the perf tools (spec: ../shared/specs/perf-artifacts-mcp.md), validated at the edge."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.tools.registry import ToolInput, ToolOutput

SNAPSHOT_ID = r"^[0-9a-f]{64}$"
MAX_HINTS_CHARS = 2000


class ArtifactRef(BaseModel):
    """One artifact: `{"blob": "<name>"}` (uploaded through POST /api/artifacts or an upload URL) or, where
    the deployment allows local files, `{"path": "/abs/path"}`."""

    model_config = ConfigDict(extra="forbid")

    blob: str | None = Field(
        None,
        min_length=1,
        max_length=512,
        description="Name returned by POST /api/artifacts (or chosen for an upload URL).",
    )
    path: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Absolute local path; only when FIREBREAK_PERF_ALLOW_LOCAL_PATHS is on.",
    )
    hints: dict[str, Any] = Field(
        default_factory=dict, description='Free-form hints echoed in sources[] (for example {"role": "primary"}).'
    )

    @field_validator("hints")
    @classmethod
    def _small_hints(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Hints are echoed into every run's metadata and listing: keep them small.
        try:
            size = len(json.dumps(value, ensure_ascii=False))
        except (TypeError, ValueError, RecursionError):
            raise ValueError("hints must be plain JSON values") from None
        if size > MAX_HINTS_CHARS:
            raise ValueError(f"hints is limited to {MAX_HINTS_CHARS} characters of JSON (got {size})")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> ArtifactRef:
        if (self.blob is None) == (self.path is None):
            raise ValueError("give exactly one of blob or path")
        return self

    @property
    def name(self) -> str:
        return self.blob if self.blob is not None else str(self.path)


class Retention(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keep_last_n: int | None = Field(
        None, ge=1, le=1000, description="Keep this many newest snapshots (or bundles) of the workspace."
    )
    ttl_days: int | None = Field(
        None, ge=1, le=3650, description="Remove snapshots (or bundles) older than this many days."
    )


_ARTIFACTS = 'The artifacts: [{"blob": name}] as uploaded (SPX .json + .txt.gz pairs, slow logs, collector-v1 timings).'


class ValidateRequest(ToolInput):
    artifacts: list[ArtifactRef] = Field(min_length=1, max_length=200, description=_ARTIFACTS)


class ValidationItem(BaseModel):
    path: str
    ok: bool
    detected_type: str
    detected_version: str | None
    errors: list[str]
    metadata: dict[str, Any]


class Counts(BaseModel):
    ok: int
    failed: int


class ValidateResult(ToolOutput):
    results: list[ValidationItem]
    counts: Counts
    next_action: str


class IngestRequest(ToolInput):
    artifacts: list[ArtifactRef] = Field(min_length=1, max_length=200, description=_ARTIFACTS)
    environment_hints: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            'Where the artifacts came from, e.g. {"env": "staging", "app": "checkout"}; kept in the run\'s metadata.'
        ),
    )
    retention: Retention | None = Field(
        None, description="Override the workspace's snapshot retention for this ingest."
    )

    @field_validator("environment_hints")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > 4000:
            raise ValueError("environment_hints is limited to 4000 characters")
        return value


class SnapshotCounts(BaseModel):
    endpoints: int
    queries: int
    spans: int
    profiles: int = 0


class Source(BaseModel):
    path: str
    type: str
    version: str | None
    sha256: str
    size_bytes: int
    hints: dict[str, Any]


class IngestResult(ToolOutput):
    normalized_snapshot_id: str
    counts: SnapshotCounts
    sources: list[Source]
    created: bool = Field(
        description="False when the same content was ingested before (same id; the run is refreshed)."
    )
    removed_by_retention: list[str] = Field(default_factory=list)
    next_action: str


class SnapshotRef(ToolInput):
    """A snapshot by id; the spec's `snapshot_id` is accepted as an alias."""

    normalized_snapshot_id: str | None = Field(
        None, pattern=SNAPSHOT_ID, description="From artifacts.ingest or runs.list."
    )
    snapshot_id: str | None = Field(None, pattern=SNAPSHOT_ID, description="Alias of normalized_snapshot_id.")

    @model_validator(mode="after")
    def _one_id(self) -> SnapshotRef:
        if not (self.normalized_snapshot_id or self.snapshot_id):
            raise ValueError("normalized_snapshot_id (or snapshot_id) is required")
        if self.normalized_snapshot_id and self.snapshot_id and self.normalized_snapshot_id != self.snapshot_id:
            raise ValueError("normalized_snapshot_id and snapshot_id differ")
        return self

    @property
    def id(self) -> str:
        return str(self.normalized_snapshot_id or self.snapshot_id)


class AnalysisRequest(SnapshotRef):
    top_n: int | None = Field(None, description="Items ranked per metric; clamped to 1..20, default 5.")
    thresholds: dict[str, Any] | None = Field(
        None,
        description=(
            "{metric: {P0, P1, P2}} in ms for endpoint_ttfb_ms, endpoint_wall_ms, query_total_time_ms, "
            "span_self_ms, span_total_ms; P0 >= P1 >= P2 > 0."
        ),
    )


_COMPARE_OPTIONS = (
    "Grading rules merged over the defaults (see the result's options for the effective ones): per metric "
    "the relative and absolute change at which P2/P1/P0 start and the noise floor below which nothing is "
    "reported."
)


class ReportRequest(AnalysisRequest):
    """report.export: a snapshot's analysis, or with baseline_snapshot_id its comparison against that baseline."""

    baseline_snapshot_id: str | None = Field(
        None,
        pattern=SNAPSHOT_ID,
        description=(
            "Write a comparison report instead: what changed from this baseline run to the snapshot (graded by "
            "compare_options; thresholds and top_n are for the analysis report and refused here)."
        ),
    )
    compare_options: dict[str, Any] | None = Field(None, description=_COMPARE_OPTIONS)

    @model_validator(mode="after")
    def _one_kind(self) -> ReportRequest:
        # Each kind of report reads only its own parameters: the others would be dropped without a word.
        if self.compare_options is not None and not self.baseline_snapshot_id:
            raise ValueError("compare_options applies to a comparison: give baseline_snapshot_id too")
        if self.baseline_snapshot_id and (self.thresholds is not None or self.top_n is not None):
            raise ValueError(
                "thresholds and top_n apply to the analysis report; a comparison (baseline_snapshot_id) is graded "
                "by compare_options"
            )
        return self


class CompareRequest(ToolInput):
    baseline_snapshot_id: str = Field(pattern=SNAPSHOT_ID, description="The run before the change (runs.list).")
    candidate_snapshot_id: str = Field(pattern=SNAPSHOT_ID, description="The run after the change.")
    options: dict[str, Any] | None = Field(None, description=_COMPARE_OPTIONS)
    limit: int = Field(50, ge=1, le=500, description="Changes returned, worst first (the summary counts all).")


class CompareResult(ToolOutput):
    baseline_snapshot_id: str
    candidate_snapshot_id: str
    worst_severity: str | None = Field(description="P0, P1 or P2 of the worst slower/new change; null when none.")
    summary: dict[str, Any]
    options: dict[str, Any] = Field(description="The effective grading rules.")
    changes: list[dict[str, Any]] = Field(
        description="Worst first: kind (endpoint/query/function), key, metric, direction (slower/faster/new/"
        "gone), severity, baseline, candidate, delta, relative, interval, thresholds, evidence, suggestion."
    )
    changes_omitted: int = Field(description="Changes beyond `limit` (counted in summary).")
    unchanged_count: int
    correlation_id: str
    next_action: str


class AnalysisResult(ToolOutput):
    normalized_snapshot_id: str
    summary: dict[str, Any]
    ranking_thresholds: dict[str, Any]
    open_questions: list[str]
    aggregates: dict[str, Any]
    findings: list[dict[str, Any]]
    findings_by_severity: dict[str, list[dict[str, Any]]]
    correlation_id: str
    next_action: str


class ReportResult(ToolOutput):
    normalized_snapshot_id: str
    report_id: str
    markdown_path: str = Field(description="Blob name of the Markdown report.")
    json_path: str = Field(description="Blob name of the JSON report.")
    charts: list[str] = Field(description="Blob names of the SVG charts the Markdown links.")
    downloads: dict[str, str] = Field(description="Authenticated GET URLs (same credentials as the tools) per file.")
    markdown: str
    report: dict[str, Any]
    correlation_id: str
    next_action: str


class RunsListRequest(ToolInput):
    limit: int = Field(20, ge=1, le=100, description="Runs per page.")
    continuation: str | None = Field(None, max_length=4000, description="The continuation of the previous page.")


class RunSummary(BaseModel):
    normalized_snapshot_id: str
    created_at: str
    updated_at: str
    counts: SnapshotCounts
    environment_hints: dict[str, Any]
    sources: list[Source]
    report_ids: list[str]


class RunsListResult(ToolOutput):
    runs: list[RunSummary]
    continuation: str | None
    retention: dict[str, Any]


class RunsGetRequest(SnapshotRef):
    pass


class RunDetail(ToolOutput):
    run: RunSummary
    snapshot_path: str
    metadata_path: str
    profiles: list[dict[str, Any]] = Field(
        description="SPX profiles: key, kind, endpoint, wall_ms and downloads {collapsed, speedscope} (GET, same "
        "credentials; open the speedscope JSON in https://www.speedscope.app)."
    )
    reports: list[dict[str, Any]] = Field(description="The newest 200 reports, oldest of them first.")
    more_reports: bool = Field(False, description="True when older reports exist beyond the newest 200 listed.")
    next_action: str


class UploadUrlRequest(ToolInput):
    name: str = Field(
        min_length=1,
        max_length=512,
        description=(
            "The blob name to upload to (letters, digits, '.', '_', '-'; '/' between folders), "
            "e.g. 'spx/run1/spx-full-....txt.gz'."
        ),
    )


class UploadUrlResult(ToolOutput):
    blob: str
    upload_url: str | None
    method: str
    headers: dict[str, str]
    expires_in_minutes: int
    alternative: str
    next_action: str
