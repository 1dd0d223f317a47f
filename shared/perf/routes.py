"""Perf artifact upload `POST /api/artifacts`, report download `GET /api/perf/reports/{file}` and profile
exports `GET /api/perf/snapshots/{snapshot_id}/{file}`.

The upload takes the body as sent (a raw file with `?name=`, or multipart/form-data) up to the perf
artifact limit; the downloads answer the stored bytes of the caller's workspace only, never rendered: an
SVG report opened in a browser may not run or fetch anything.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from shared.core.settings import Settings
from shared.perf.artifacts import blob_name
from shared.perf.service import perf_service
from shared.perf.settings import PerfSettings
from shared.perf.uploads.intake import store_uploads
from shared.tools.routes import Answer, FileAnswer, RawBody, RouteCall, RouteParams, RouteSet

routes = RouteSet("perf")

_MEDIA_TYPES = {
    ".md": "text/markdown",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".txt": "text/plain",
}
_NOSNIFF = {"X-Content-Type-Options": "nosniff"}
# Reports are data: an SVG opened in a browser may not run or fetch anything.
_REPORT_CSP = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"}


def upload_limit(settings: Settings) -> int:
    """The largest upload POST /api/artifacts takes: FIREBREAK_PERF_MAX_ARTIFACT_BYTES (the host caps it at 100 MB)."""
    return settings.section(PerfSettings).max_artifact_bytes


class UploadParams(RouteParams):
    name: str | None = Field(
        None,
        description="The file's name for a raw upload (letters, digits, '.', '_', '-', '/' between folders); "
        "for multipart, the name of a single part without a filename.",
    )


class StoredArtifact(BaseModel):
    blob: str = Field(description='The name to pass as {"blob": name} to artifacts.validate or artifacts.ingest.')
    size_bytes: int
    sha256: str = Field(description="SHA-256 of the stored bytes.")
    detected_type: str | None
    detected_version: str | None
    metadata: dict[str, Any]


class UploadResult(BaseModel):
    artifacts: list[StoredArtifact]
    next_action: str


class ReportFileParams(RouteParams):
    file: str = Field(min_length=1, description="A file name from report.export's `downloads`.")


class ProfileFileParams(RouteParams):
    snapshot_id: str = Field(min_length=1, description="The snapshot's id (runs.get).")
    file: str = Field(min_length=1, description="A name from runs.get's profiles[].downloads.")


@routes.route(
    "POST",
    "artifacts",
    name="artifacts_upload",
    status=201,
    response=UploadResult,
    accepts=("application/octet-stream", "multipart/form-data"),
    body_limit=upload_limit,
)
async def upload(call: RouteCall, *, params: UploadParams, body: RawBody) -> Answer:
    """Upload perf artifacts: 201 with `{"artifacts": [{"blob", "size_bytes", "sha256", "detected_type", ...}]}`.

    Send the file as the raw body with `?name=<name>` (letters, digits, '.', '_', '-', '/' between
    folders; any Content-Type but multipart is stored as sent), or as multipart/form-data (each file part
    stored under its filename, or `name` for a single part). Each file is checked like artifacts.validate
    before it is stored; an empty, truncated, binary or otherwise unusable file is refused (400) and nothing
    is written. Then pass `{"blob": name}` to artifacts.ingest. Over 100 MB, use the create_upload_url tool.
    """
    stored = await store_uploads(
        call.deps.blobs, call.principal.workspace_id, body.data, body.content_type, params.name
    )
    result = UploadResult.model_validate(
        {"artifacts": stored, "next_action": 'Pass each as {"blob": name} to artifacts.validate or artifacts.ingest.'}
    )
    return Answer(result, 201)


@routes.route(
    "GET",
    "perf/reports/{file}",
    name="perf_report_file",
    errors=(404,),
    serves=(*_MEDIA_TYPES.values(), "application/octet-stream"),
)
async def report_file(call: RouteCall, *, params: ReportFileParams) -> FileAnswer:
    """Download a report file named in report.export's `downloads` (Markdown, JSON or SVG) of your workspace."""
    name = blob_name(params.file)
    store = await perf_service(call.deps).store(call.principal)
    data = await store.report_file(name)
    media_type = _MEDIA_TYPES.get(name[name.rfind(".") :], "application/octet-stream")
    headers = {"Content-Disposition": f'inline; filename="{name}"', **_NOSNIFF, **_REPORT_CSP}
    return FileAnswer(data, media_type, headers)


@routes.route(
    "GET",
    "perf/snapshots/{snapshot_id}/{file}",
    name="perf_profile_file",
    errors=(404,),
    serves=("text/plain", "application/json"),
)
async def profile_file(call: RouteCall, *, params: ProfileFileParams) -> FileAnswer:
    """Download an SPX profile export named in runs.get's profiles[].downloads, from your workspace only.

    `profile_N.collapsed.txt` is Brendan Gregg's collapsed stacks (self wall time in ns per call path, for
    flamegraph.pl and friends); `profile_N.speedscope.json` opens in https://www.speedscope.app.
    """
    store = await perf_service(call.deps).store(call.principal)
    data = await store.profile_file(params.snapshot_id, params.file)
    name = params.file
    headers = {"Content-Disposition": f'attachment; filename="{name}"', **_NOSNIFF}
    return FileAnswer(data, _MEDIA_TYPES[name[name.rfind(".") :]], headers)
