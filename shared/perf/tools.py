"""The perf tools (spec: ../shared/specs/perf-artifacts-mcp.md), plus runs.*, ingest.bundle and upload URLs."""

from __future__ import annotations

from shared.perf import models, resources
from shared.perf.collect.plan import CollectRequest, CollectResult
from shared.perf.service import PerfService, perf_service
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolSet

toolset = ToolSet("perf")


def _service(ctx: ToolContext) -> PerfService:
    return perf_service(ctx.deps)


def _render_analysis(r: models.AnalysisResult) -> str:
    s = r.summary
    return (
        f"{s['finding_count']} finding(s) ({s['p0_count']} P0, {s['p1_count']} P1, {s['p2_count']} P2). "
        f"{s['headline']} {r.next_action}"
    )


@toolset.tool("create_upload_url", title="Get a short-lived URL to upload an artifact", idempotent=True)
async def upload_url(ctx: ToolContext, args: models.UploadUrlRequest) -> models.UploadUrlResult:
    """Get a short-lived URL to upload one perf artifact (SPX .json/.txt.gz, slow log, timings) straight to storage.

    PUT the file to upload_url with header `x-ms-blob-type: BlockBlob` before it expires, then refer to
    it as {"blob": name} in artifacts.validate / artifacts.ingest. For files that fit in a request you
    can instead POST them to /api/artifacts?name=<name> (the `alternative`).
    """
    return await _service(ctx).upload_url(ctx.principal, args)


@toolset.tool("artifacts.validate", title="Check perf artifacts and detect their type", read_only=True, idempotent=True)
async def artifacts_validate(ctx: ToolContext, args: models.ValidateRequest) -> models.ValidateResult:
    """Check uploaded perf artifacts and detect what each is, without storing anything.

    Pass artifacts as [{"blob": name}] (uploaded via POST /api/artifacts or create_upload_url).
    Detects SPX metadata (.json, spx-json-v2) and traces (.txt.gz, spx-text-gz-v1) and pairs them
    (pair_status paired/partial), MySQL/MariaDB slow logs (mysql-slowlog-v1) and collector-v1 timing
    files. Each result has ok, detected_type, detected_version, errors[] and metadata; truncated gzip,
    empty, binary, non-UTF-8 and oversized files are reported, not fatal. Then call artifacts.ingest.
    """
    return await _service(ctx).validate(ctx.principal, args)


_INGEST_DOC = """Parse perf artifacts into a normalised snapshot and store it; returns normalized_snapshot_id.

Strict: every artifact must validate (else VALIDATION_ERROR listing each result), except an SPX half
without its other half: it is skipped and reported in sources[].hints.spx (ingested: false, with the
reason) while the rest is ingested (only halves: VALIDATION_ERROR "nothing to ingest"). SPX pairs become
per-function spans (calls, self and total ms, recursion, top callees) and a flame graph; slow logs
become query classes (pt-query-digest fingerprints, count, total/avg/p95/max, rows, literals
redacted); timings become per-endpoint p50/p95/max per phase. The id is the SHA-256 of the content,
so ingesting the same files again returns the same id (created=false). Old snapshots are removed by
retention (keep_last_n, ttl_days). Then call analysis.run or report.export with the id.
"""


def _ingest_tool(name: str, title: str, doc: str) -> None:
    async def handler(ctx: ToolContext, args: models.IngestRequest) -> models.IngestResult:
        # Files done as they finish; heartbeats while one is fetched or the snapshot is parsed and stored.
        async with ctx.waiting("ingesting"):
            out = await _service(ctx).ingest(ctx.principal, args, ctx.report_progress)
        await ctx.log("info", f"snapshot {out.normalized_snapshot_id} {'stored' if out.created else 'refreshed'}")
        return out

    handler.__doc__ = doc
    toolset.tool(name, title=title, idempotent=True)(handler)


# The spec's implemented name and its planned alias: one handler, two declarations.
_ingest_tool("artifacts.ingest", "Ingest perf artifacts into a snapshot", _INGEST_DOC)
_ingest_tool(
    "ingest.bundle",
    "Ingest perf artifacts (alias of artifacts.ingest)",
    "Alias of artifacts.ingest (the spec's planned name); same arguments and result.\n\n" + _INGEST_DOC,
)


@toolset.tool(
    "analysis.run", title="Rank and grade a perf snapshot", read_only=True, idempotent=True, render=_render_analysis
)
async def analysis_run(ctx: ToolContext, args: models.AnalysisRequest) -> models.AnalysisResult:
    """Rank a snapshot's endpoints, query classes and functions and grade them P0/P1/P2 against thresholds.

    Give normalized_snapshot_id (or snapshot_id) from artifacts.ingest; top_n (1..20, default 5) items
    are ranked per metric. thresholds: {"endpoint_ttfb_ms"|"endpoint_wall_ms"|"query_total_time_ms"|
    "span_self_ms"|"span_total_ms": {"P0": int, "P1": int, "P2": int}} in ms with P0 >= P1 >= P2 > 0;
    omitted metrics keep conservative defaults, and with no thresholds at all open_questions asks for
    real ones. Each finding has severity, the measured value, how far over, evidence and a concrete
    suggestion. Follow next_action; report.export writes the same analysis as a shareable report.
    """
    return await _service(ctx).analysis(ctx.principal, args, ctx.correlation_id)


def _render_comparison(r: models.CompareResult) -> str:
    s = r.summary
    return f"{s['headline']} {r.next_action}"


@toolset.tool(
    "analysis.compare",
    title="Compare two perf runs: what got slower, faster, new or gone",
    read_only=True,
    idempotent=True,
    render=_render_comparison,
)
async def analysis_compare(ctx: ToolContext, args: models.CompareRequest) -> models.CompareResult:
    """Did my change make it slower? Compare a baseline snapshot with a candidate snapshot of the same workload.

    Give baseline_snapshot_id (before the change) and candidate_snapshot_id (after), both from
    artifacts.ingest or runs.list in this workspace. Compares per endpoint TTFB and wall p50/p95 (with
    95 % confidence intervals from the samples) and error rate, per query class count, total and p95
    time and rows examined, and per SPX function (matched by endpoint and name) self and total time and
    share of the request. Each change says slower/faster/new/gone, is graded P0/P1/P2 when it passes
    both a relative and an absolute step above the noise floor, and carries the numbers as evidence
    and a suggestion. A run compared with itself, or two runs of the same workload, reports nothing.
    worst_severity is the CI answer; report.export with baseline_snapshot_id writes the same
    comparison as Markdown/JSON with a diff bar chart and differential flame graphs.
    """
    return await _service(ctx).compare(ctx.principal, args, ctx.correlation_id)


@toolset.tool("report.export", title="Write a perf report (Markdown, JSON, SVG charts)", idempotent=True)
async def report_export(ctx: ToolContext, args: models.ReportRequest) -> models.ReportResult:
    """Run analysis.run with the same parameters and write a report: Markdown, JSON and SVG charts in storage.

    The Markdown has # Executive Summary, # Thresholds Used and # Observations (also with no
    findings), a chart of the top offenders against the thresholds and flame graphs of the slowest
    SPX profiles. report_id is deterministic (same snapshot and parameters, same id and bytes). The
    result holds the Markdown and JSON inline and downloads[] (GET with the same credentials).
    With baseline_snapshot_id (and optional compare_options) it writes the comparison of that baseline
    with this snapshot instead (analysis.compare's result): slower/faster/new/gone tables, a diff bar
    chart against the thresholds and differential flame graphs (red grew, blue shrank) of the
    endpoints both runs profiled.
    """
    return await _service(ctx).report(ctx.principal, args, ctx.correlation_id)


@toolset.tool("runs.list", title="List perf snapshots", read_only=True, idempotent=True)
async def runs_list(ctx: ToolContext, args: models.RunsListRequest) -> models.RunsListResult:
    """List the workspace's perf snapshots, most recently ingested first, with counts, sources and report ids.

    Page with `continuation`. Use a normalized_snapshot_id with analysis.run, report.export or runs.get.
    """
    return await _service(ctx).runs_list(ctx.principal, args)


@toolset.tool("runs.get", title="Show one perf snapshot", read_only=True, idempotent=True)
async def runs_get(ctx: ToolContext, args: models.RunsGetRequest) -> models.RunDetail:
    """Show one snapshot: counts, sources, environment hints, SPX profiles and its reports with download links.

    Each SPX profile has downloads.collapsed (Brendan Gregg's collapsed stacks, self wall time in ns per
    call path) and downloads.speedscope (a speedscope JSON file: open it in https://www.speedscope.app);
    GET them with the same credentials as the tools.
    """
    return await _service(ctx).runs_get(ctx.principal, args)


@toolset.tool("collect.run", title="Probe endpoint timings and bundle SPX files and a slow log", open_world=True)
async def collect_run(ctx: ToolContext, args: CollectRequest) -> CollectResult:
    """Measure HTTP timings of a non-production deployment and bundle them with SPX files and a slow log.

    GETs base_url + each of url_paths (warmup_count, then sample_count samples, concurrency at a time,
    timeout_ms each) and records curl-like phases per sample: dns, connect, tls, ttfb, total (ms).
    Only headers named in headers_allowlist are sent; query strings and URL userinfo are left out of
    what is recorded (redaction_rules). base_url must be https and public unless the deployment
    allows otherwise. spx_dirs are Blob prefixes of your uploaded SPX pairs and slow_log_path a
    slow log you uploaded. Writes manifest.json and timings.json (collector-v1) as a bundle; then call
    artifacts.ingest with ingest_artifacts. Long runs answer state 'running' with a status URL to poll.
    """
    async with ctx.waiting("probing"):  # paths done as they finish; heartbeats while one is probed
        out = await _service(ctx).collect(
            ctx.principal, args, ctx.correlation_id, ctx.orchestrations, ctx.report_progress
        )
    await ctx.log("info", f"collect.run {out.state}: bundle {out.bundle_id}")
    return out


# Stored reports and profile exports as MCP resources (shared/perf/resources.py).
toolset.resource(resources.REPORTS)
toolset.resource(resources.PROFILES)
