"""The comparison use cases: analysis.compare, and report.export with a baseline.

Both snapshots are read through the workspace's own index (a foreign or unknown id is NOT_FOUND, the
same as a missing one), and all the CPU work (comparing, rendering) runs in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

from shared.perf.analysis import compare as compare_mod
from shared.perf.analysis import compare_charts
from shared.perf.models import CompareRequest, CompareResult, ReportRequest, ReportResult
from shared.perf.store import PerfStore


def _next_action(comparison: dict[str, Any], baseline: str, candidate: str) -> str:
    worst = compare_mod.worst_severity(comparison)
    report = (
        f"call report.export with normalized_snapshot_id {candidate} and baseline_snapshot_id {baseline} for "
        "a shareable report (diff chart, differential flame graphs)"
    )
    if worst is None:
        return (
            "No change above the noise floor slowed anything down: the candidate is as fast as the baseline "
            f"within the thresholds (see options); {report} to record it."
        )
    return (
        f"The candidate is slower (worst {worst}): start with the first changes' evidence and suggestion, "
        f"fix, ingest the new run and compare it with the same baseline; {report}."
    )


async def compare_runs(store: PerfStore, req: CompareRequest, correlation_id: str) -> CompareResult:
    (base, _), (cand, _) = await asyncio.gather(
        store.load_snapshot(req.baseline_snapshot_id), store.load_snapshot(req.candidate_snapshot_id)
    )
    comparison = await asyncio.to_thread(compare_mod.compare, base, cand, req.options)
    changes = comparison["changes"]
    return CompareResult(
        baseline_snapshot_id=req.baseline_snapshot_id,
        candidate_snapshot_id=req.candidate_snapshot_id,
        worst_severity=compare_mod.worst_severity(comparison),
        summary=comparison["summary"],
        options=comparison["options"],
        changes=changes[: req.limit],
        changes_omitted=max(0, len(changes) - req.limit),
        unchanged_count=comparison["unchanged_count"],
        correlation_id=correlation_id,
        next_action=_next_action(comparison, req.baseline_snapshot_id, req.candidate_snapshot_id),
    )


async def comparison_report(
    store: PerfStore, req: ReportRequest, clock: Callable[[], datetime], correlation_id: str, download_route: str
) -> ReportResult:
    """Compare baseline_snapshot_id with the snapshot and store the report under the snapshot (the candidate)."""
    baseline, candidate = str(req.baseline_snapshot_id), req.id
    (base, base_meta), (cand, cand_meta) = await asyncio.gather(
        store.load_snapshot(baseline), store.load_snapshot(candidate)
    )
    comparison = await asyncio.to_thread(compare_mod.compare, base, cand, req.compare_options)
    merged = []
    for pair in compare_charts.flame_pairs(base, cand):  # one pair's stacks in memory at a time
        base_flames, cand_flames = await asyncio.gather(
            store.load_flames(baseline, base_meta, pair.baseline_keys),
            store.load_flames(candidate, cand_meta, pair.candidate_keys),
        )
        merged.append(await asyncio.to_thread(compare_charts.merged_pair, pair, base_flames, cand_flames))
        del base_flames, cand_flames
    rendered = await asyncio.to_thread(compare_charts.render_report, comparison, merged)
    files = await store.save_report(
        candidate,
        rendered.report_id,
        rendered.markdown,
        rendered.report,
        rendered.charts,
        clock(),
        finding_count=comparison["summary"]["change_count"],
        baseline=baseline,
    )
    return ReportResult(
        normalized_snapshot_id=candidate,
        report_id=rendered.report_id,
        **store.report_locations(rendered.report_id, list(rendered.charts), files, download_route),
        markdown=rendered.markdown,
        report=rendered.report,
        correlation_id=correlation_id,
        next_action=(
            f"{comparison['summary']['headline']} Share the Markdown (download it with its charts from "
            "downloads[], same credentials as the tools); after a fix, ingest the new run and export its "
            "comparison against the same baseline."
        ),
    )
