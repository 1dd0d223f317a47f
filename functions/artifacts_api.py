"""Perf artifact upload `POST /api/artifacts`, report download `GET /api/perf/reports/{file}` and profile
exports `GET /api/perf/snapshots/{snapshot_id}/{file}`."""

from __future__ import annotations

import azure.functions as func

from functions.http import Call, endpoint, read_body

bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure-functions declares Blueprint.__init__ without annotations

# The Functions host refuses request bodies over 100 MB; bigger artifacts go through create_upload_url.
HOST_BODY_LIMIT = 100 * 1024 * 1024
_CONTENT_TYPES = {
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


def upload_limit() -> int:
    """The largest upload this route takes: the perf artifact limit, at most the host's."""
    from functions import wiring
    from shared.perf.settings import PerfSettings

    return min(wiring.settings().section(PerfSettings).max_artifact_bytes, HOST_BODY_LIMIT)


@bp.function_name("artifacts_upload")
@bp.route(route="artifacts", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@endpoint(body_limit=upload_limit)
async def artifacts_upload(call: Call) -> func.HttpResponse:
    """Upload perf artifacts: 201 with `{"artifacts": [{"blob", "size_bytes", "sha256", "detected_type", ...}]}`.

    Send the file as the raw body with `?name=<name>` (letters, digits, '.', '_', '-', '/' between
    folders), or as multipart/form-data (each file part stored under its filename, or `name` for a
    single part). Each file is checked like artifacts.validate before it is stored; an empty,
    truncated, binary or otherwise unusable file is refused (400) and nothing is written. Then pass
    `{"blob": name}` to artifacts.ingest. Over 100 MB, use the create_upload_url tool instead.
    """
    from shared.perf.uploads.intake import store_uploads

    req = call.req
    body = read_body(req, upload_limit())
    stored = await store_uploads(
        call.deps.blobs, call.caller.workspace_id, body, req.headers.get("content-type", ""), req.params.get("name")
    )
    return call.json(
        {"artifacts": stored, "next_action": 'Pass each as {"blob": name} to artifacts.validate or artifacts.ingest.'},
        201,
    )


@bp.function_name("perf_report_file")
@bp.route(route="perf/reports/{file}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@endpoint()
async def perf_report_file(call: Call) -> func.HttpResponse:
    """Download a report file named in report.export's `downloads` (Markdown, JSON or SVG) of your workspace."""
    from shared.core.logging import CORRELATION_HEADER
    from shared.perf.artifacts import blob_name
    from shared.perf.service import perf_service

    deps = call.deps
    name = blob_name(call.route("file"))
    store = await perf_service(deps).store(call.caller)
    data = await store.report_file(name)
    suffix = name[name.rfind(".") :]
    return func.HttpResponse(
        data,
        status_code=200,
        mimetype=_CONTENT_TYPES.get(suffix, "application/octet-stream").split(";")[0],
        headers={
            CORRELATION_HEADER: call.correlation_id,
            "Content-Disposition": f'inline; filename="{name}"',
            "X-Content-Type-Options": "nosniff",
            # Reports are data: an SVG opened in a browser may not run or fetch anything.
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'",
        },
    )


@bp.function_name("perf_profile_file")
@bp.route(route="perf/snapshots/{snapshot_id}/{file}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@endpoint()
async def perf_profile_file(call: Call) -> func.HttpResponse:
    """Download an SPX profile export named in runs.get's profiles[].downloads, from your workspace only.

    `profile_N.collapsed.txt` is Brendan Gregg's collapsed stacks (self wall time in ns per call path, for
    flamegraph.pl and friends); `profile_N.speedscope.json` opens in https://www.speedscope.app.
    """
    from shared.core.logging import CORRELATION_HEADER
    from shared.perf.service import perf_service

    sid, name = call.route("snapshot_id"), call.route("file")
    store = await perf_service(call.deps).store(call.caller)
    data = await store.profile_file(sid, name)
    return func.HttpResponse(
        data,
        status_code=200,
        mimetype=_CONTENT_TYPES[name[name.rfind(".") :]].split(";")[0],
        headers={
            CORRELATION_HEADER: call.correlation_id,
            "Content-Disposition": f'attachment; filename="{name}"',
            "X-Content-Type-Options": "nosniff",
        },
    )
