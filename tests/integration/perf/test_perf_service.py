"""The perf capability against Azurite and the local Cosmos: ingest → analysis → report, determinism,
retention, isolation, and bad input that writes nothing."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from shared.core.errors import NotFound, ValidationFailed
from shared.identity.models import Principal
from shared.perf.artifacts import workspace_prefix
from shared.perf.models import (
    AnalysisRequest,
    ArtifactRef,
    IngestRequest,
    ReportRequest,
    Retention,
    RunsGetRequest,
    RunsListRequest,
    ValidateRequest,
)
from shared.perf.service import PerfService, perf_service
from shared.perf.uploads.intake import store_uploads
from shared.tools.deps import Deps

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SPX = sorted((FIXTURES / "spx").glob("spx-full-*"))
SLOWLOGS = [FIXTURES / "slowlog" / "small.log", FIXTURES / "slowlog" / "mysql80-sample.log"]
TIMINGS = FIXTURES / "perf" / "timings.json"


def principal() -> Principal:
    return Principal(workspace_id=f"ws-perf-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")


@pytest.fixture
def service(deps: Deps) -> PerfService:
    return perf_service(deps)


async def upload(deps: Deps, who: Principal, files: list[Path], folder: str = "in") -> list[ArtifactRef]:
    refs = []
    for f in files:
        stored = await store_uploads(
            deps.blobs, who.workspace_id, f.read_bytes(), "application/octet-stream", f"{folder}/{f.name}"
        )
        refs.append(ArtifactRef(blob=stored[0]["blob"]))
    return refs


async def blob_names(deps: Deps, who: Principal, kind: str) -> list[str]:
    return [n async for n in deps.blobs.list(f"{workspace_prefix(who.workspace_id)}/{kind}/")]


async def test_validate_pairs_and_detects_every_fixture(service: PerfService, deps: Deps) -> None:
    who = principal()
    refs = await upload(deps, who, SPX + SLOWLOGS + [TIMINGS])
    r = await service.validate(who, ValidateRequest(artifacts=refs))
    assert r.counts.ok == len(refs)
    assert r.counts.failed == 0
    kinds = {i.path.rsplit("/", 1)[-1]: (i.detected_type, i.detected_version) for i in r.results}
    assert kinds["small.log"] == ("mysql_slow_log", "mysql-slowlog-v1")
    assert kinds["timings.json"] == ("ttfb_timings", "collector-v1")
    spx = [i for i in r.results if i.detected_type == "spx"]
    assert len(spx) == 28
    assert all(i.metadata["pair_status"] == "paired" for i in spx)
    # Half a pair: valid, reported as a partial pair with what is missing (the spec's troubleshooting item 2).
    half = await service.validate(who, ValidateRequest(artifacts=refs[:1]))
    assert half.counts.failed == 0
    assert half.results[0].metadata["pair_status"] == "partial"
    assert "missing" in half.results[0].metadata["warnings"][0]
    assert "partial" in half.next_action


async def test_ingest_analyse_report_round_trip(service: PerfService, deps: Deps) -> None:
    who = principal()
    refs = await upload(deps, who, SPX + SLOWLOGS + [TIMINGS])
    first = await service.ingest(
        who, IngestRequest(artifacts=refs, environment_hints={"env": "staging", "app": "checkout"})
    )
    assert first.created
    assert first.counts.queries > 0
    assert first.counts.spans > 0
    assert first.counts.profiles == 14
    assert first.counts.endpoints >= 3  # three timed paths plus the SPX HTTP fixtures' endpoints
    # Same content under other names and in another order: same id, nothing new written.
    again_refs = await upload(deps, who, list(reversed(SPX + SLOWLOGS + [TIMINGS])), folder="again")
    second = await service.ingest(who, IngestRequest(artifacts=again_refs))
    assert second.normalized_snapshot_id == first.normalized_snapshot_id
    assert not second.created
    sid = first.normalized_snapshot_id

    analysis = await service.analysis(who, AnalysisRequest(normalized_snapshot_id=sid, top_n=5), "corr-1")
    assert analysis.correlation_id == "corr-1"
    assert len(analysis.open_questions) == 5
    assert all(t["source"] == "default_conservative" for t in analysis.ranking_thresholds.values())
    s = analysis.summary
    assert s["finding_count"] == len(analysis.findings) == s["p0_count"] + s["p1_count"] + s["p2_count"]
    for f in analysis.findings:
        assert f["value_ms"] >= f["threshold_ms"]
        assert f["suggestion"]
        assert f["evidence"]
        assert {"id": f["id"], "title": f["title"]} in analysis.findings_by_severity[f["severity"]]
    # The /checkout timings (p95 ~2.4 s TTFB) are a P0 by the default 1500 ms threshold.
    assert any(
        f["metric"] == "endpoint_ttfb_ms" and f["subject"] == "GET /checkout" and f["severity"] == "P0"
        for f in analysis.findings
    )

    strict = {"query_total_time_ms": {"P0": 3, "P1": 2, "P2": 1}}
    tuned = await service.analysis(who, AnalysisRequest(snapshot_id=sid, thresholds=strict, top_n=50), "corr-2")
    assert tuned.open_questions == []
    assert tuned.summary["top_n"] == 20
    assert tuned.ranking_thresholds["query_total_time_ms"]["source"] == "provided"
    assert tuned.ranking_thresholds["span_self_ms"]["source"] == "default_conservative"

    report = await service.report(who, ReportRequest(normalized_snapshot_id=sid, top_n=5), "corr-3")
    again = await service.report(who, ReportRequest(normalized_snapshot_id=sid, top_n=5), "corr-4")
    assert report.report_id == again.report_id
    assert report.markdown == again.markdown
    assert len(report.report_id) == 16
    for section in ("# Executive Summary", "# Thresholds Used", "# Observations"):
        assert section in report.markdown
    assert report.report["ranking_thresholds"] == analysis.ranking_thresholds
    assert report.report["open_questions"] == analysis.open_questions
    store = await service.store(who)
    md = await store.report_file(f"report_{report.report_id}.md")
    assert md.decode() == report.markdown
    svgs = [n for n in report.downloads if n.endswith(".svg")]
    assert any("_flame_" in n for n in svgs)
    assert any(n.endswith("_top.svg") for n in svgs)
    for n in svgs:
        assert (await store.report_file(n)).startswith(b"<svg")
    runs = await service.runs_list(who, RunsListRequest())
    assert [r.normalized_snapshot_id for r in runs.runs] == [sid]
    assert runs.runs[0].report_ids == [report.report_id]
    detail = await service.runs_get(who, RunsGetRequest(normalized_snapshot_id=sid))
    assert detail.run.environment_hints == {"env": "staging", "app": "checkout"}
    assert len(detail.profiles) == 14


async def test_big_uploads_are_staged_in_blocks_and_hashed(deps: Deps) -> None:
    import hashlib

    who = principal()
    data = SLOWLOGS[0].read_bytes() * 30  # ~9 MB: three 4 MB blocks
    [stored] = await store_uploads(deps.blobs, who.workspace_id, data, "application/octet-stream", "big/slow.log")
    assert stored["sha256"] == hashlib.sha256(data).hexdigest()
    assert stored["size_bytes"] == len(data)
    assert await deps.blobs.get(f"{workspace_prefix(who.workspace_id)}/artifacts/big/slow.log") == data


async def test_ingest_reports_progress(service: PerfService, deps: Deps) -> None:
    who = principal()
    refs = await upload(deps, who, [SLOWLOGS[0], TIMINGS])
    seen = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    await service.ingest(who, IngestRequest(artifacts=refs), progress)
    assert [m for _, _, m in seen] == [
        "fetching in/small.log",
        "fetching in/timings.json",
        "parsing and normalising",
        "storing the snapshot",
    ]
    assert [d for d, _, _ in seen] == [0, 1, 2, 3]
    assert {t for _, t, _ in seen} == {4}


async def test_runs_list_pages_with_continuation(service: PerfService, deps: Deps) -> None:
    who = principal()
    ids = [
        (await service.ingest(who, IngestRequest(artifacts=await upload(deps, who, [f])))).normalized_snapshot_id
        for f in [*SLOWLOGS, TIMINGS]
    ]
    first = await service.runs_list(who, RunsListRequest(limit=2))
    assert len(first.runs) == 2
    assert first.continuation
    rest = await service.runs_list(who, RunsListRequest(limit=2, continuation=first.continuation))
    assert [r.normalized_snapshot_id for r in first.runs + rest.runs] == list(reversed(ids))
    assert rest.continuation is None


async def test_zero_findings_report_keeps_its_sections(service: PerfService, deps: Deps) -> None:
    who = principal()
    refs = await upload(deps, who, [FIXTURES / "slowlog" / "small.log"])
    sid = (await service.ingest(who, IngestRequest(artifacts=refs))).normalized_snapshot_id
    lenient = {
        m: {"P0": 10**9, "P1": 10**9, "P2": 10**9}
        for m in ("endpoint_ttfb_ms", "endpoint_wall_ms", "query_total_time_ms", "span_self_ms", "span_total_ms")
    }
    report = await service.report(who, ReportRequest(normalized_snapshot_id=sid, thresholds=lenient), "c")
    assert report.report["summary"]["finding_count"] == 0
    for section in ("# Executive Summary", "# Thresholds Used", "# Observations"):
        assert section in report.markdown


async def test_retention_keeps_the_newest_n_with_their_files(service: PerfService, deps: Deps) -> None:
    who = principal()
    ids = []
    for f in [*SLOWLOGS, TIMINGS]:
        refs = await upload(deps, who, [f])
        r = await service.ingest(who, IngestRequest(artifacts=refs, retention=Retention(keep_last_n=2)))
        ids.append(r.normalized_snapshot_id)
    assert r.removed_by_retention == [ids[0]]
    listed = [x.normalized_snapshot_id for x in (await service.runs_list(who, RunsListRequest())).runs]
    assert listed == [ids[2], ids[1]]
    assert not any(ids[0] in n for n in await blob_names(deps, who, "snapshots"))
    with pytest.raises(NotFound):
        await service.analysis(who, AnalysisRequest(normalized_snapshot_id=ids[0]), "c")


async def test_retention_by_age(deps: Deps) -> None:
    """ttl_days: a snapshot last ingested more than ttl_days ago goes when the next ingest runs."""
    from datetime import timedelta

    now = [deps.clock()]
    aged = perf_service(deps, clock=lambda: now[0])
    who = principal()
    old = (
        await aged.ingest(who, IngestRequest(artifacts=await upload(deps, who, [SLOWLOGS[0]])))
    ).normalized_snapshot_id
    now[0] += timedelta(days=8)
    fresh = await aged.ingest(
        who, IngestRequest(artifacts=await upload(deps, who, [TIMINGS]), retention=Retention(ttl_days=7))
    )
    assert fresh.removed_by_retention == [old]
    assert [r.normalized_snapshot_id for r in (await aged.runs_list(who, RunsListRequest())).runs] == [
        fresh.normalized_snapshot_id
    ]


async def test_other_workspaces_see_nothing(service: PerfService, deps: Deps) -> None:
    owner, other = principal(), principal()
    refs = await upload(deps, owner, [TIMINGS])
    sid = (await service.ingest(owner, IngestRequest(artifacts=refs))).normalized_snapshot_id
    with pytest.raises(NotFound):
        await service.analysis(other, AnalysisRequest(normalized_snapshot_id=sid), "c")
    r = await service.validate(
        other, ValidateRequest(artifacts=refs)
    )  # the blob name resolves inside the caller's workspace
    assert r.counts.failed == 1
    assert "not found" in r.results[0].errors[0]


async def test_a_report_of_a_snapshot_removed_meanwhile_leaves_nothing(service: PerfService, deps: Deps) -> None:
    """Retention may remove a snapshot while its report renders: the report is refused, not kept, and the
    snapshot's index is not brought back."""
    who = principal()
    sid = (
        await service.ingest(who, IngestRequest(artifacts=await upload(deps, who, [TIMINGS])))
    ).normalized_snapshot_id
    store = await service.store(who)
    await store.delete_snapshot(sid)
    with pytest.raises(NotFound):
        await store.save_report(
            sid, "f" * 16, "# md\n", {}, {"report_ffffffffffffffff_x.svg": "<svg/>"}, deps.clock(), finding_count=0
        )
    with pytest.raises(NotFound):
        await store.report_file(f"report_{'f' * 16}.md")
    assert await store.runs.read(f"snapshot_{sid}", who.workspace_id) is None
    assert await blob_names(deps, who, "reports") == []


async def test_concurrent_reports_of_one_snapshot_are_all_indexed(service: PerfService, deps: Deps) -> None:
    who = principal()
    sid = (
        await service.ingest(who, IngestRequest(artifacts=await upload(deps, who, [TIMINGS])))
    ).normalized_snapshot_id
    store = await service.store(who)
    rids = [f"{i:016x}" for i in range(4)]
    await asyncio.gather(
        *(store.save_report(sid, rid, "# md\n", {}, {}, deps.clock(), finding_count=0) for rid in rids)
    )
    assert (await store.index(sid))["report_ids"] == rids


async def test_removing_a_snapshot_removes_all_its_reports(service: PerfService, deps: Deps) -> None:
    # One report per baseline (and options) it was compared with: more than one page of the report query.
    who = principal()
    sid = (
        await service.ingest(who, IngestRequest(artifacts=await upload(deps, who, [TIMINGS])))
    ).normalized_snapshot_id
    store = await service.store(who)
    rids = [f"{i:016x}" for i in range(205)]
    start = deps.clock()
    for i, rid in enumerate(rids):
        await store.save_report(sid, rid, "# md\n", {}, {}, start + timedelta(seconds=i), finding_count=0)
    # runs.get lists the newest 200 (oldest of them first) and says that there are more.
    detail = await service.runs_get(who, RunsGetRequest(snapshot_id=sid))
    assert [r["report_id"] for r in detail.reports] == rids[5:]
    assert detail.more_reports is True
    await store.delete_snapshot(sid)
    assert await store.reports(sid) == []
    assert await blob_names(deps, who, "reports") == []


def _gz(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        g.write(data)
    return buf.getvalue()


BAD_UPLOADS = {
    "empty.log": b"",
    "truncated.txt.gz": (lambda data: data[: len(data) // 2])(
        max((p for p in SPX if p.name.endswith(".gz")), key=lambda p: p.stat().st_size).read_bytes()
    ),
    "binary.log": bytes(range(256)) * 64,
    "latin1.log": "caf\xe9 cr\xe8me \xff\xfe\n".encode("latin-1")
    * 50,  # (inside a real slow log, non-UTF-8 bytes in SQL are legal)
    "one-line.log": b"x" * (10 * 1024 * 1024),
    "bomb.txt.gz": _gz(b"\0" * (64 * 1024 * 1024)),
    "bad.json": b"{not json",
}


@pytest.mark.parametrize("name", sorted(BAD_UPLOADS))
async def test_bad_uploads_are_refused_and_write_nothing(deps: Deps, name: str) -> None:
    who = principal()
    with pytest.raises(ValidationFailed) as err:
        await store_uploads(deps.blobs, who.workspace_id, BAD_UPLOADS[name], "application/octet-stream", name)
    assert err.value.details["errors"]
    assert await blob_names(deps, who, "artifacts") == []


@pytest.mark.parametrize("name", ["../etc/passwd", "a/../../b", ".hidden", "dir//x", "x\\y", "a b", "/abs"])
async def test_traversal_names_are_refused(deps: Deps, name: str) -> None:
    who = principal()
    with pytest.raises(ValidationFailed):
        await store_uploads(
            deps.blobs, who.workspace_id, b"# Time: 2026-01-01T00:00:00Z\n", "application/octet-stream", name
        )
    assert await blob_names(deps, who, "artifacts") == []


async def test_an_unpaired_spx_half_is_skipped_and_the_rest_ingested(service: PerfService, deps: Deps) -> None:
    who = principal()
    good = await upload(deps, who, [TIMINGS])
    half = await upload(deps, who, [SPX[0]])
    result = await service.ingest(who, IngestRequest(artifacts=good + half))
    assert result.counts.endpoints > 0
    assert result.counts.profiles == 0
    [spx] = [s for s in result.sources if s.type == "spx"]
    assert spx.hints["spx"]["pair_status"] == "partial"
    assert spx.hints["spx"]["ingested"] is False
    assert "missing" in spx.hints["spx"]["reason"]
    assert "skipped" in result.next_action
    alone = await service.ingest(who, IngestRequest(artifacts=good))
    assert alone.normalized_snapshot_id == result.normalized_snapshot_id  # the skipped half is not an input


async def test_failed_ingest_writes_no_snapshot(service: PerfService, deps: Deps) -> None:
    who = principal()
    good = await upload(deps, who, [TIMINGS])
    # Only a pair's half (nothing to ingest), and a blob that does not exist.
    half = await upload(deps, who, [SPX[0]])
    for refs in (half, [*good, ArtifactRef(blob="never-uploaded.log")]):
        with pytest.raises(ValidationFailed) as err:
            await service.ingest(who, IngestRequest(artifacts=refs))
        assert any(not r["ok"] or r["metadata"].get("pair_status") == "partial" for r in err.value.details["results"])
    assert await blob_names(deps, who, "snapshots") == []
    assert (await service.runs_list(who, RunsListRequest())).runs == []


async def test_bad_thresholds_are_validation_errors(service: PerfService, deps: Deps) -> None:
    who = principal()
    sid = (
        await service.ingest(who, IngestRequest(artifacts=await upload(deps, who, [TIMINGS])))
    ).normalized_snapshot_id
    for thresholds in (
        {"endpoint_ttfb_ms": {"P0": 1, "P1": 2, "P2": 3}},
        {"nope_ms": {"P0": 3, "P1": 2, "P2": 1}},
        {"span_self_ms": {"P0": 3, "P1": 2}},
        {"span_self_ms": {"P0": 3.5, "P1": 2, "P2": 1}},
        {"span_self_ms": [1, 2, 3]},
    ):
        with pytest.raises(ValidationFailed):
            await service.analysis(who, AnalysisRequest(normalized_snapshot_id=sid, thresholds=thresholds), "c")
    assert json.loads(json.dumps((await service.runs_get(who, RunsGetRequest(snapshot_id=sid))).reports)) == []
