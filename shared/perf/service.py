"""The perf capability's use cases: validate, ingest, analyse, report, list runs, hand out upload URLs.

Parsing, detection, analysis, rendering and (de)serialising snapshots are CPU work; every one runs in
a worker thread (asyncio.to_thread) so the event loop, and the other requests of this worker such as
/api/health, keep going. The parsers are linear and capped, so none holds the GIL for long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from shared.core.errors import RateLimited
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.perf import comparison
from shared.perf.analysis import ranking as analysis_mod
from shared.perf.analysis import report as report_mod
from shared.perf.artifacts import ArtifactFetcher, artifact_blob, unique_refs
from shared.perf.collect import plan as collect_plan
from shared.perf.collect import run as collect_run
from shared.perf.models import (
    AnalysisRequest,
    AnalysisResult,
    CompareRequest,
    CompareResult,
    Counts,
    IngestRequest,
    IngestResult,
    ReportRequest,
    ReportResult,
    Retention,
    RunDetail,
    RunsGetRequest,
    RunsListRequest,
    RunsListResult,
    RunSummary,
    SnapshotCounts,
    Source,
    UploadUrlRequest,
    UploadUrlResult,
    ValidateRequest,
    ValidateResult,
    ValidationItem,
)
from shared.perf.parsers import snapshot as snapshot_mod
from shared.perf.settings import PerfSettings
from shared.perf.store import PERF_RUNS_CONTAINER, PerfStore
from shared.storage.blob import BlobStore
from shared.storage.cosmos import CosmosDatabase
from shared.tools.invoke import Orchestrations, ProgressFn

DOWNLOAD_ROUTE = "/api/perf/reports/"
PROFILE_ROUTE = "/api/perf/snapshots/"
MAX_LISTED_REPORTS = 200  # runs.get lists the newest; more_reports says when there are older ones


async def _tell(progress: ProgressFn | None, done: float, total: float, message: str) -> None:
    if progress is not None:
        await progress(done, total, message)


def _summary(doc: dict[str, Any]) -> RunSummary:
    return RunSummary(
        normalized_snapshot_id=doc["snapshot_id"],
        created_at=doc["created_at"],
        updated_at=doc["updated_at"],
        counts=SnapshotCounts(**doc["counts"]),
        environment_hints=doc.get("environment_hints", {}),
        sources=[Source(**s) for s in doc.get("sources", [])],
        report_ids=doc.get("report_ids", []),
    )


class PerfService:
    """The perf tools' use cases over one worker's storage; build it with `perf_service(deps)`."""

    def __init__(
        self, blobs: BlobStore, cosmos: CosmosDatabase, settings: Settings, clock: Callable[[], datetime]
    ) -> None:
        self.blobs, self.cosmos, self.settings, self.clock = blobs, cosmos, settings, clock

    async def store(self, principal: Principal) -> PerfStore:
        return PerfStore(self.blobs, await self.cosmos.container(PERF_RUNS_CONTAINER.name), principal.workspace_id)

    def _fetcher(self, principal: Principal) -> ArtifactFetcher:
        return ArtifactFetcher(self.blobs, self.settings, principal.workspace_id)

    async def validate(self, principal: Principal, req: ValidateRequest) -> ValidateResult:
        async with self._fetcher(principal) as fetcher:
            local = await fetcher.stream_all(req.artifacts)  # sniffed from ranged reads, nothing written
            detections = await asyncio.to_thread(snapshot_mod.validate, local)
        items = [ValidationItem(**d.to_dict()) for d in detections]
        ok = sum(1 for i in items if i.ok)
        partial = sum(1 for i in items if i.metadata.get("pair_status") == "partial")
        nxt = (
            "All artifacts are usable: call artifacts.ingest with the same list."
            if ok == len(items)
            else "Fix or drop the artifacts with ok=false (see errors[]), then call artifacts.ingest."
        )
        if partial:
            nxt += (
                f" {partial} SPX half/halves have no pair (pair_status partial, see metadata.warnings): ingest "
                "skips them; add the other file of each pair to ingest those profiles."
            )
        return ValidateResult(results=items, counts=Counts(ok=ok, failed=len(items) - ok), next_action=nxt)

    async def ingest(
        self, principal: Principal, req: IngestRequest, progress: ProgressFn | None = None
    ) -> IngestResult:
        refs = unique_refs(req.artifacts)  # a repeated artifact is fetched and parsed once
        total = len(refs) + 2  # fetch each artifact, parse, store
        async with self._fetcher(principal) as fetcher:
            local = []
            for i, ref in enumerate(refs):
                await _tell(progress, i, total, f"fetching {ref.name}")
                local.append(await fetcher.fetch(ref, i))
            await _tell(progress, len(local), total, "parsing and normalising")
            built, detections = await asyncio.to_thread(
                snapshot_mod.build, local, self.settings.section(PerfSettings).max_statement_bytes
            )
        await _tell(progress, total - 1, total, "storing the snapshot")
        by_name = {a.name: a for a in local}
        sources = []
        for d in sorted(detections, key=lambda d: d.name):
            a = by_name[d.name]
            hints = dict(a.ref.hints)
            if d.detected_type == "spx":
                hints["spx"] = {"pair_status": d.metadata.get("pair_status")}
                if d.metadata.get("pair_status") == "partial":
                    hints["spx"]["ingested"] = False
                    hints["spx"]["reason"] = "; ".join(d.metadata.get("warnings") or [])
            sources.append(
                Source(
                    path=d.name,
                    type=d.detected_type,
                    version=d.detected_version,
                    sha256=a.sha256,
                    size_bytes=a.size,
                    hints=hints,
                )
            )
        content = built.content
        counts = SnapshotCounts(
            endpoints=len(content["endpoints"]),
            queries=len(content["queries"]),
            spans=len(content["spans"]),
            profiles=len(content["profiles"]),
        )
        metadata = {
            "counts": counts.model_dump(),
            "environment_hints": req.environment_hints,
            "sources": [s.model_dump() for s in sources],
        }
        store = await self.store(principal)
        now = self.clock()
        created = await store.save_snapshot(
            built.snapshot_id, content, metadata, built.flamegraphs, now, built.speedscopes
        )
        retention = req.retention or Retention()
        removed = await store.prune(
            retention.keep_last_n or self.settings.section(PerfSettings).keep_last_n,
            retention.ttl_days or self.settings.section(PerfSettings).ttl_days,
            now,
        )
        return IngestResult(
            normalized_snapshot_id=built.snapshot_id,
            counts=counts,
            sources=sources,
            created=created,
            removed_by_retention=removed,
            next_action=f"Call analysis.run (or report.export for a shareable report) with "
            f"normalized_snapshot_id {built.snapshot_id}."
            + (
                f" {len(built.skipped)} SPX half/halves without a pair were skipped (sources[].hints.spx: "
                "pair_status partial, ingested false, with the reason)."
                if built.skipped
                else ""
            ),
        )

    async def _analysis(
        self, store: PerfStore, req: AnalysisRequest
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(analysis, snapshot content, snapshot metadata)."""
        content, metadata = await store.load_snapshot(req.id)
        result = await asyncio.to_thread(
            analysis_mod.analyze, content, req.id, top_n=req.top_n, thresholds=req.thresholds
        )
        return result, content, metadata

    async def analysis(self, principal: Principal, req: AnalysisRequest, correlation_id: str) -> AnalysisResult:
        result, _, _ = await self._analysis(await self.store(principal), req)
        s = result["summary"]
        nxt = (
            "Start with the P0/P1 findings' suggestions; call report.export with the same parameters for "
            "Markdown/JSON and charts."
            if s["finding_count"]
            else "Nothing crosses a threshold: call report.export to share the ranking, or pass stricter thresholds."
        )
        if result["open_questions"]:
            nxt += " Thresholds are conservative defaults: pass your own (see open_questions)."
        return AnalysisResult(**result, correlation_id=correlation_id, next_action=nxt)

    async def compare(self, principal: Principal, req: CompareRequest, correlation_id: str) -> CompareResult:
        return await comparison.compare_runs(await self.store(principal), req, correlation_id)

    async def report(self, principal: Principal, req: ReportRequest, correlation_id: str) -> ReportResult:
        store = await self.store(principal)
        if req.baseline_snapshot_id:
            return await comparison.comparison_report(store, req, self.clock, correlation_id, DOWNLOAD_ROUTE)
        result, content, metadata = await self._analysis(store, req)
        flames = await store.load_flames(req.id, metadata, [p["key"] for p in report_mod.flame_profiles(content)])
        rendered = await asyncio.to_thread(report_mod.render, content, result, flames)
        files = await store.save_report(
            req.id, rendered.report_id, rendered.markdown, rendered.report, rendered.charts, self.clock()
        )
        return ReportResult(
            normalized_snapshot_id=req.id,
            report_id=rendered.report_id,
            **store.report_locations(rendered.report_id, list(rendered.charts), files, DOWNLOAD_ROUTE),
            markdown=rendered.markdown,
            report=rendered.report,
            correlation_id=correlation_id,
            next_action="Share the Markdown (download it with its charts from downloads[], same credentials "
            "as the tools); re-run after a fix and compare the findings.",
        )

    async def runs_list(self, principal: Principal, req: RunsListRequest) -> RunsListResult:
        store = await self.store(principal)
        docs, token = await store.list_runs(req.limit, req.continuation)
        return RunsListResult(
            runs=[_summary(d) for d in docs],
            continuation=token,
            retention={
                "keep_last_n": self.settings.section(PerfSettings).keep_last_n,
                "ttl_days": self.settings.section(PerfSettings).ttl_days,
            },
        )

    async def runs_get(self, principal: Principal, req: RunsGetRequest) -> RunDetail:
        store = await self.store(principal)
        doc = await store.index(req.id)
        reports, exports = await asyncio.gather(
            store.reports(req.id, limit=MAX_LISTED_REPORTS + 1), store.profile_files(req.id)
        )
        more = len(reports) > MAX_LISTED_REPORTS
        reports = reports[:MAX_LISTED_REPORTS]
        base = store.snapshot_dir(req.id)
        return RunDetail(
            run=_summary(doc),
            snapshot_path=f"{base}/snapshot.json",
            metadata_path=f"{base}/metadata.json",
            profiles=[
                {
                    **p,
                    "downloads": {
                        kind: f"{PROFILE_ROUTE}{req.id}/{name}" for kind, name in exports.get(p["key"], {}).items()
                    },
                }
                for p in doc.get("profiles", [])
            ],
            reports=[
                {
                    "report_id": r["report_id"],
                    "kind": r.get("kind", "analysis"),
                    **({"baseline_snapshot_id": r["baseline_snapshot_id"]} if r.get("baseline_snapshot_id") else {}),
                    "created_at": r["created_at"],
                    "finding_count": r["finding_count"],
                    "downloads": {f: DOWNLOAD_ROUTE + f for f in r["files"]},
                }
                for r in sorted(reports, key=lambda r: r["created_at"])
            ],
            more_reports=more,
            next_action=f"Call analysis.run or report.export with normalized_snapshot_id {req.id}.",
        )

    async def collect(
        self,
        principal: Principal,
        req: collect_plan.CollectRequest,
        correlation_id: str,
        orchestrations: Orchestrations | None = None,
        progress: ProgressFn | None = None,
    ) -> collect_plan.CollectResult:
        plan = await collect_plan.plan(req, self.settings, self.blobs, principal.workspace_id, self.clock())
        paths = collect_run.paths_of(principal.workspace_id, plan.bundle_id)
        worst = collect_plan.worst_case_seconds(req)
        if worst > self.settings.section(PerfSettings).collect_inline_seconds and orchestrations is not None:
            stored, secret = collect_plan.split_secrets(plan)
            started = await orchestrations.start(
                collect_plan.ORCHESTRATOR,
                principal,
                stored.model_dump(mode="json"),
                secret.sealed(),
                correlation_id=correlation_id,
            )
            return collect_plan.CollectResult(
                bundle_id=plan.bundle_id,
                state="running",
                **paths,
                artifact_counts=collect_run.inventory_counts(plan, []),
                ingest_artifacts=[],
                correlation_id=correlation_id,
                run_id=started.run_id,
                status_url=started.status_url,
                next_action=(
                    f"The probes may take up to {worst:.0f} s, more than one request allows, so they "
                    f"continue in the background: call get_run_status with run_id "
                    f"{started.run_id} (or GET {started.status_url}) until state is 'completed' (progress "
                    f"shows how far it got); its output holds "
                    "artifact_counts and ingest_artifacts for artifacts.ingest."
                ),
            )
        samples: list[dict[str, Any]] = []
        for i, path in enumerate(plan.url_paths):
            await _tell(progress, i, len(plan.url_paths), f"probing {path.split('?', 1)[0]}")
            samples += await collect_run.run_path(plan, path, self.settings)
        done = await self.finish_collect(principal.workspace_id, plan, samples)
        failed = sum(1 for s in samples if s["error"])
        return collect_plan.CollectResult(
            bundle_id=plan.bundle_id,
            state="completed",
            **paths,
            artifact_counts=done["artifact_counts"],
            ingest_artifacts=done["ingest_artifacts"],
            removed_by_retention=done["removed_by_retention"],
            correlation_id=correlation_id,
            next_action=(f"{failed} sample(s) failed (see timings.json errors). " if failed else "")
            + "Call artifacts.ingest with ingest_artifacts as artifacts.",
        )

    async def finish_collect(
        self, workspace_id: str, plan: collect_plan.BundlePlan, samples: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Write the bundle of a collect.run for its owner `workspace_id` (inline, or from the
        orchestration's last activity)."""
        store = PerfStore(self.blobs, await self.cosmos.container(PERF_RUNS_CONTAINER.name), workspace_id)
        return await collect_run.finish(plan, samples, store, self.settings, self.clock)

    async def upload_url(self, principal: Principal, req: UploadUrlRequest) -> UploadUrlResult:
        """A SAS URL, within the workspace's quota. Blob SAS cannot cap an upload's size: what a URL
        uploads is checked at ingest (perf_max_artifact_bytes), and the quota limits what piles up:
        no new URL while the workspace stores perf_workspace_quota_bytes of artifacts or holds
        perf_max_upload_urls unexpired URLs."""
        name = artifact_blob(principal.workspace_id, req.name)
        minutes = self.settings.section(PerfSettings).upload_url_minutes
        store = await self.store(principal)
        used, quota = await store.stored_artifact_bytes(), self.settings.section(PerfSettings).workspace_quota_bytes
        if used >= quota:
            raise RateLimited(
                f"this workspace stores {used} bytes of artifacts, its quota is {quota} "
                f"(FIREBREAK_PERF_WORKSPACE_QUOTA_BYTES)",
                details={"stored_bytes": used, "quota_bytes": quota},
                recovery_suggestions=[
                    "Ingest and let retention remove old collect bundles, or delete unused uploads, then ask again."
                ],
            )
        url = await self.blobs.upload_url(name, minutes=minutes, write=True)
        if url:
            now = self.clock()
            busy_until = await store.claim_upload_url(
                now, now + timedelta(minutes=minutes), self.settings.section(PerfSettings).max_upload_urls
            )
            if busy_until:
                raise RateLimited(
                    f"this workspace already holds {self.settings.section(PerfSettings).max_upload_urls} "
                    f"unexpired upload URLs (FIREBREAK_PERF_MAX_UPLOAD_URLS)",
                    details={
                        "max_open_upload_urls": self.settings.section(PerfSettings).max_upload_urls,
                        "next_slot_at": busy_until,
                    },
                    recovery_suggestions=[
                        f"Use the URLs already issued, or retry after {busy_until}.",
                        "POST /api/artifacts?name=... uploads without a URL.",
                    ],
                )
        return UploadUrlResult(
            blob=req.name,
            upload_url=url,
            method="PUT",
            headers={"x-ms-blob-type": "BlockBlob"},
            expires_in_minutes=minutes,
            alternative=f"POST /api/artifacts?name={req.name} with the file as the body (raw or multipart/form-data)",
            next_action=(
                "PUT the file to upload_url with header x-ms-blob-type: BlockBlob, then pass "
                f'{{"blob": "{req.name}"}} to artifacts.validate / artifacts.ingest.'
                if url
                else "This deployment cannot sign upload URLs: use the alternative route."
            ),
        )


class PerfDeps(Protocol):
    """The parts of the app's wiring the perf capability uses (shared/core/deps.py `Deps` has them)."""

    @property
    def blobs(self) -> BlobStore: ...
    @property
    def cosmos(self) -> CosmosDatabase: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Callable[[], datetime]: ...


def perf_service(
    deps: PerfDeps, *, settings: Settings | None = None, clock: Callable[[], datetime] | None = None
) -> PerfService:
    """The one way to build a PerfService: from the app's wiring; tests may swap its settings or clock."""
    return PerfService(deps.blobs, deps.cosmos, settings or deps.settings, clock or deps.clock)
