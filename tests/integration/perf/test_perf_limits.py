"""Request limits of the perf tools against Azurite and the local Cosmos: repeated refs, the per-request
byte budget, streamed sniffing, SPX pairs named by their files, and the upload-URL quota."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

import pytest

from shared.core.errors import RateLimited, ValidationFailed
from shared.identity.models import Principal
from shared.perf.models import ArtifactRef, IngestRequest, UploadUrlRequest, ValidateRequest
from shared.perf.service import PerfService, perf_service
from shared.perf.settings import PerfSettings
from shared.perf.uploads.intake import store_uploads
from shared.tools.deps import Deps

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TINY = FIXTURES / "spx" / "spx-full-20261122_030646-vm-31166-1804289383"
SLOW = FIXTURES / "slowlog" / "mysql80-sample.log"


def principal() -> Principal:
    return Principal(workspace_id=f"ws-limits-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")


def service(deps: Deps, **settings: object) -> PerfService:
    return perf_service(
        deps, settings=deps.settings.with_section(deps.settings.section(PerfSettings).model_copy(update=settings))
    )


def perf_temp_dirs(*, written: bool = False) -> set[Path]:
    """The perf tools' temporary directories (only those with files in them if `written`)."""
    dirs = Path(tempfile.gettempdir()).glob("firebreak-perf-*")
    return {p for p in dirs if any(p.iterdir())} if written else set(dirs)


def tiny(suffix: str) -> bytes:
    """The bytes of the small SPX fixture's `.json` or `.txt.gz`."""
    return Path(f"{TINY}{suffix}").read_bytes()


async def put(deps: Deps, who: Principal, name: str, data: bytes) -> ArtifactRef:
    stored = await store_uploads(deps.blobs, who.workspace_id, data, "application/octet-stream", name)
    return ArtifactRef(blob=stored[0]["blob"])


async def test_one_blob_listed_200_times_is_read_once_and_nothing_is_written(deps: Deps) -> None:
    who = principal()
    ref = await put(deps, who, "logs/slow.log", SLOW.read_bytes())
    temp_before = await asyncio.to_thread(perf_temp_dirs)
    before = deps.blobs.requests
    result = await service(deps).validate(who, ValidateRequest(artifacts=[ref] * 200))
    # The old fetcher downloaded the blob 200 times into 200 temporary files.
    assert [r.path for r in result.results] == ["logs/slow.log"]
    assert result.counts.ok == 1
    assert deps.blobs.requests - before <= 3  # its size, then the head it sniffs (one ranged read)
    assert await asyncio.to_thread(perf_temp_dirs, written=True) <= temp_before


async def test_an_empty_blob_is_reported_not_a_500(deps: Deps) -> None:
    who = principal()
    await deps.blobs.put(f"perf/{who.workspace_id}/artifacts/empty.log", b"")  # an upload URL can leave one
    result = await service(deps).validate(who, ValidateRequest(artifacts=[ArtifactRef(blob="empty.log")]))
    assert not result.results[0].ok
    assert "empty" in result.results[0].errors[0]


async def test_ingest_of_a_repeated_ref_parses_it_once(deps: Deps) -> None:
    who = principal()
    ref = await put(deps, who, "logs/slow.log", SLOW.read_bytes())
    once = await service(deps).ingest(who, IngestRequest(artifacts=[ref]))
    repeated = await service(deps).ingest(who, IngestRequest(artifacts=[ref] * 50))
    assert repeated.normalized_snapshot_id == once.normalized_snapshot_id
    assert len(repeated.sources) == 1


async def test_the_request_byte_budget_refuses_what_does_not_fit(deps: Deps) -> None:
    who = principal()
    size = SLOW.stat().st_size
    first = await put(deps, who, "a/slow.log", SLOW.read_bytes())
    second = await put(deps, who, "b/slow.log", SLOW.read_bytes())
    tight = service(deps, max_request_bytes=size + size // 2)
    result = await tight.validate(who, ValidateRequest(artifacts=[first, second]))
    assert [r.ok for r in result.results] == [True, False]
    assert "FIREBREAK_PERF_MAX_REQUEST_BYTES" in result.results[1].errors[0]
    with pytest.raises(ValidationFailed, match=r"1 of 2 artifact\(s\) failed validation") as failed:
        await tight.ingest(who, IngestRequest(artifacts=[first, second]))
    assert getattr(failed.value, "code", None) == "VALIDATION_ERROR"
    assert "FIREBREAK_PERF_MAX_REQUEST_BYTES" in str(failed.value.details)


async def test_a_gzip_trace_is_sniffed_and_checked_whole_from_the_stream(deps: Deps) -> None:
    who = principal()
    refs = [await put(deps, who, f"spx/{TINY.name}{s}", await asyncio.to_thread(tiny, s)) for s in (".json", ".txt.gz")]
    before = deps.blobs.requests
    result = await service(deps).validate(who, ValidateRequest(artifacts=refs))
    assert [r.ok for r in result.results] == [True, True]
    assert all(r.metadata["pair_status"] == "paired" for r in result.results)
    assert (
        deps.blobs.requests - before <= 8
    )  # per blob: its size, the head, the gzip read whole (one range each, they are small)


async def test_spx_pairs_by_file_stem_then_key_and_names_the_unpaired(deps: Deps, tmp_path: Path) -> None:
    who = principal()
    # `run1.json` holds SPX's key (spx-full-...), its trace is `run1.txt.gz`: they pair by stem.
    refs = [
        await put(deps, who, "runs/run1.json", await asyncio.to_thread(tiny, ".json")),
        await put(deps, who, "runs/run1.txt.gz", await asyncio.to_thread(tiny, ".txt.gz")),
        await put(deps, who, "runs/lonely.txt.gz", await asyncio.to_thread(tiny, ".txt.gz")),
    ]
    result = await service(deps).validate(who, ValidateRequest(artifacts=refs))
    by_path = {r.path: r for r in result.results}
    assert by_path["runs/run1.json"].ok
    assert by_path["runs/run1.txt.gz"].ok
    assert by_path["runs/run1.txt.gz"].metadata["pair"] == "runs/run1.json"
    lonely = by_path["runs/lonely.txt.gz"]
    assert (lonely.ok, lonely.metadata["pair_status"]) == (True, "partial")
    assert "runs/lonely.txt.gz" in lonely.metadata["warnings"][0]
    assert "runs/lonely.json" in lonely.metadata["warnings"][0]
    ingest = await service(deps).ingest(who, IngestRequest(artifacts=refs))  # the lonely half is skipped
    assert ingest.counts.profiles == 1


async def test_upload_urls_stop_at_the_workspace_quota(deps: Deps) -> None:
    who = principal()
    few = service(deps, max_upload_urls=2)
    for i in range(2):
        assert (await few.upload_url(who, UploadUrlRequest(name=f"u/{i}.log"))).upload_url
    with pytest.raises(RateLimited) as refused:
        await few.upload_url(who, UploadUrlRequest(name="u/2.log"))
    assert refused.value.details["max_open_upload_urls"] == 2
    assert refused.value.details["next_slot_at"]
    other = principal()  # the count is per workspace
    assert (await few.upload_url(other, UploadUrlRequest(name="u/0.log"))).upload_url


async def test_upload_urls_stop_when_the_workspace_stores_its_quota(deps: Deps) -> None:
    who = principal()
    await put(deps, who, "logs/slow.log", SLOW.read_bytes())
    full = service(deps, workspace_quota_bytes=SLOW.stat().st_size)
    with pytest.raises(RateLimited) as refused:
        await full.upload_url(who, UploadUrlRequest(name="logs/more.log"))
    assert refused.value.details["stored_bytes"] == SLOW.stat().st_size
