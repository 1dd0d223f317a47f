"""collect.run's work: probe one URL path of a plan, then write the bundle (manifest.json + timings.json, collector-v1).

The bundle lives under `artifacts/bundles/<bundle_id>/`, so its timings are an artifact like any
upload: the result's `ingest_artifacts` is the exact list to pass to artifacts.ingest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypedDict

from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.perf.artifacts import artifact_blob
from shared.perf.collect.plan import BundlePlan, CollectPlan, recorded_path
from shared.perf.collect.probe import probe
from shared.perf.settings import PerfSettings
from shared.perf.store import PerfStore


def inventory_counts(plan: BundlePlan, samples: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "spx_files": sum(1 for i in plan.inventory if i["type"] == "spx"),
        "inventory_items": len(plan.inventory),
        "timing_samples": sum(1 for s in samples if not s["warmup"]),
    }


async def run_path(plan: CollectPlan, path: str, settings: Settings) -> list[dict[str, Any]]:
    """Warm-up samples, then the measured ones, `concurrency` at a time; recorded paths are redacted."""
    guard = OutboundGuard(settings, "collect")
    p = plan.probe
    recorded = recorded_path(path, plan.redaction_rules.strip_query_params)
    url = plan.base_url + "/"
    gate = asyncio.Semaphore(p.concurrency)

    async def one(warmup: bool) -> dict[str, Any]:
        async with gate:
            result = await probe(guard, url, path, plan.headers, p.timeout_ms / 1000)
        return {"method": "GET", "url_path": recorded, "warmup": warmup, **result}

    warm = [await one(True) for _ in range(p.warmup_count)]
    measured = await asyncio.gather(*(one(False) for _ in range(p.sample_count)))
    return warm + list(measured)


async def finish(
    plan: BundlePlan, samples: list[dict[str, Any]], store: PerfStore, settings: Settings, now: Callable[[], datetime]
) -> dict[str, Any]:
    """Write timings.json and manifest.json (timings first: a manifest always points at a whole bundle),
    index it, apply retention.

    `plan` may be the full plan or the stored one: the bundle holds recorded values only. `store` is the run owner's.
    """
    ws, bundle_id = store.workspace, plan.bundle_id
    rel = f"bundles/{bundle_id}"
    recorded = plan.recorded
    timings = {
        "format": "collector-v1",
        "base_url": recorded.base_url,
        "created_at": plan.created_at,
        "samples": samples,
    }
    ingest = [{k: v for k, v in item.items() if k in ("blob", "path")} for item in plan.inventory] + [
        {"blob": f"{rel}/timings.json"}
    ]
    manifest = {
        "format": "collector-bundle-v1",
        "run": {"bundle_id": bundle_id, "created_at": plan.created_at, "finished_at": now().isoformat()},
        "base_url": recorded.base_url,
        "url_paths": plan.recorded_paths(),
        "headers": recorded.headers,
        "headers_dropped": recorded.headers_dropped,
        "probe": plan.probe.model_dump(),
        "redaction_rules": plan.redaction_rules.model_dump(),
        "inventory": plan.inventory,
        "timings": f"{rel}/timings.json",
        "ingest_artifacts": ingest,
    }
    await store.blobs.put(
        artifact_blob(ws, f"{rel}/timings.json"), json.dumps(timings, indent=1), content_type="application/json"
    )
    await store.blobs.put(
        artifact_blob(ws, f"{rel}/manifest.json"), json.dumps(manifest, indent=1), content_type="application/json"
    )
    counts = inventory_counts(plan, samples)
    await store.runs.upsert(
        {
            "id": bundle_id,
            "type": "bundle",
            "workspace_id": ws,
            "bundle_id": bundle_id,
            "created_at": plan.created_at,
            "updated_at": plan.created_at,
            "artifact_counts": counts,
            "ingest_artifacts": ingest,
            "errors": sum(1 for s in samples if s["error"]),
        }
    )
    retention = plan.retention
    removed = await store.prune_bundles(
        retention.keep_last_n or settings.section(PerfSettings).keep_last_n,
        retention.ttl_days or settings.section(PerfSettings).ttl_days,
        now(),
    )
    return {
        "bundle_id": bundle_id,
        "artifact_counts": counts,
        "ingest_artifacts": ingest,
        "removed_by_retention": removed,
    }


class BundlePaths(TypedDict):
    """Where a bundle's files are, as CollectResult reports them."""

    bundle_dir: str
    manifest_path: str
    timings_path: str


def paths_of(workspace: str, bundle_id: str) -> BundlePaths:
    base = artifact_blob(workspace, f"bundles/{bundle_id}")
    return {"bundle_dir": base, "manifest_path": f"{base}/manifest.json", "timings_path": f"{base}/timings.json"}
