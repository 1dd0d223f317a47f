"""artifacts.ingest of the whole fixture set (16 SPX pairs with the two large ones, both slow logs, timings)
and report.export on it.

Against the real local stack, through PerfService with Blob refs. Baselines from the same run:
- ingest vs parsing the same files from local disk with no storage (snapshot.build): the storage cost;
- report.export vs analysis.run on the same snapshot: the cost of rendering and writing the report.
Reports wall time (median of RUNS) and Blob / Cosmos round trips per operation.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from devhost.stack import ROOT
from shared.app.wiring import build_deps
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.perf.artifacts import LocalArtifact, hash_file
from shared.perf.models import AnalysisRequest, ArtifactRef, IngestRequest, ReportRequest
from shared.perf.parsers import snapshot
from shared.perf.service import perf_service
from shared.perf.uploads.intake import store_uploads

FIXTURES = ROOT.parent / "shared" / "fixtures"
RUNS = 3
INGEST_BUDGET = 3.0  # storage may at most triple the parse time
REPORT_BUDGET = 5.0


def _files() -> list[Path]:
    spx = sorted(p for p in (FIXTURES / "spx").glob("spx-full-*") if p.is_file()) + sorted(
        (FIXTURES / "spx" / "large").glob("spx-full-*")
    )
    return spx + sorted((FIXTURES / "slowlog").glob("*.log")) + [ROOT / "tests" / "fixtures" / "perf" / "timings.json"]


def _local(files: list[Path]) -> list[LocalArtifact]:
    return [LocalArtifact(ArtifactRef(path=str(f)), f, *hash_file(f)) for f in files]


async def _measure(settings: Settings) -> list[dict[str, Any]]:
    files = _files()
    deps = build_deps(settings)
    service = perf_service(deps)
    runs = await deps.cosmos.container("perf_runs")
    who = Principal(workspace_id=f"bench-{uuid.uuid4().hex[:6]}", user_id="bench", source="dev")
    refs = []
    for f in files:
        await store_uploads(
            deps.blobs, who.workspace_id, f.read_bytes(), "application/octet-stream", f"fixtures/{f.name}"
        )
        refs.append(ArtifactRef(blob=f"fixtures/{f.name}"))
    parse, ingest, analysis, report = [], [], [], []
    trips: dict[str, tuple[int, int]] = {}
    for i in range(RUNS):
        t = time.perf_counter()
        await asyncio.to_thread(snapshot.build, _local(files))
        parse.append(time.perf_counter() - t)
        b0, c0 = deps.blobs.requests, runs.requests
        t = time.perf_counter()
        sid = (await service.ingest(who, IngestRequest(artifacts=refs))).normalized_snapshot_id
        ingest.append(time.perf_counter() - t)
        trips.setdefault("ingest_first" if i == 0 else "ingest_again", (deps.blobs.requests - b0, runs.requests - c0))
        b0, c0 = deps.blobs.requests, runs.requests
        t = time.perf_counter()
        await service.analysis(who, AnalysisRequest(normalized_snapshot_id=sid), "bench")
        analysis.append(time.perf_counter() - t)
        trips.setdefault("analysis", (deps.blobs.requests - b0, runs.requests - c0))
        b0, c0 = deps.blobs.requests, runs.requests
        t = time.perf_counter()
        await service.report(who, ReportRequest(normalized_snapshot_id=sid), "bench")
        report.append(time.perf_counter() - t)
        trips.setdefault("report", (deps.blobs.requests - b0, runs.requests - c0))
    await deps.aclose()
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    med = statistics.median
    ingest_ratio, report_ratio = med(ingest) / med(parse), med(report) / med(analysis)
    round_trips = {k: {"blob": v[0], "cosmos": v[1]} for k, v in trips.items()}
    return [
        {
            "name": "perf_ingest_vs_local_parse",
            "ratio": round(ingest_ratio, 2),
            "budget": INGEST_BUDGET,
            "ok": ingest_ratio <= INGEST_BUDGET,
            "files": len(files),
            "input_mb": round(size_mb, 1),
            "parse_s": round(med(parse), 3),
            "ingest_s": round(med(ingest), 3),
            "round_trips": round_trips,
            "note": (
                "ingest through Blob refs (download, hash, parse, write snapshot, index, retention) "
                "vs parsing the same local files"
            ),
        },
        {
            "name": "perf_report_vs_analysis",
            "ratio": round(report_ratio, 2),
            "budget": REPORT_BUDGET,
            "ok": report_ratio <= REPORT_BUDGET,
            "analysis_s": round(med(analysis), 3),
            "report_s": round(med(report), 3),
            "note": "report.export (render Markdown/JSON/SVG, write, index) vs analysis.run",
        },
    ]


def run(settings: Settings) -> list[dict[str, Any]]:
    return asyncio.run(_measure(settings))
