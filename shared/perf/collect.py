"""collect.run: HTTP timing probes plus an inventory of SPX files and a slow log, written as a bundle in Blob.

Inputs are Blob prefixes (`spx_dirs`) and a Blob name (`slow_log_path`) under the workspace's
artifacts, or local directories and files where local paths are allowed. Probes are GET only,
through the outbound guard, with only allow-listed headers sent; recorded URLs lose their query
string and userinfo by default and recorded header values of secret-looking names are redacted.
The bundle (manifest.json + timings.json, collector-v1) is written under
`artifacts/bundles/<bundle_id>/`, so its timings are an artifact like any upload: the result's
`ingest_artifacts` is the exact list to pass to artifacts.ingest.

The work is split the same way inline and under Durable: `plan()` checks everything and fixes the
parameters (a JSON-able dict), `run_path()` probes one URL path, `finish()` writes the bundle. A run
whose worst case (every sample timing out) exceeds FIREBREAK_PERF_COLLECT_INLINE_SECONDS continues as
the `perf_collect_orchestrator` orchestration and the tool answers at once with its status URL.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import secrets
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.core.errors import ValidationFailed
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.perf.artifacts import artifact_blob, blob_name, workspace_prefix
from shared.perf.models import Retention
from shared.perf.probe import probe
from shared.perf.store import PerfStore
from shared.storage.blob import BlobStore
from shared.tools.registry import ToolInput, ToolOutput

MAX_FILES_PER_DIR = 500
ORCHESTRATOR = "perf_collect_orchestrator"
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|password|api[-_]?key|session", re.I)
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")


class RedactionRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strip_query_params: bool = Field(True, description="Record URL paths without their query strings.")
    redact_url_userinfo: bool = Field(True, description="Record URLs without user:password@.")


class CollectRequest(ToolInput):
    spx_dirs: list[str] = Field(default_factory=list, max_length=20, description="Blob prefixes under your artifacts holding SPX .json/.txt.gz files (local directories where local paths are allowed).")
    slow_log_path: str | None = Field(None, max_length=1024, description="Blob name of the slow log under your artifacts (a local file where local paths are allowed).")
    base_url: str = Field(min_length=1, max_length=2048, description="https URL of a non-production deployment to probe.")
    url_paths: list[str] = Field(min_length=1, max_length=50, description="Paths to GET, each starting with '/'.")
    headers: dict[str, str] = Field(default_factory=dict, max_length=50, description="Headers to send; only names in headers_allowlist are sent.")
    headers_allowlist: list[str] = Field(default_factory=list, max_length=50, description="Header names (case-insensitive) that may be sent; others are dropped.")
    sample_count: int = Field(3, ge=1, le=20, description="Measured samples per path.")
    concurrency: int = Field(1, ge=1, le=4, description="Samples in flight at once per path.")
    timeout_ms: int = Field(3000, ge=200, le=15000, description="Per-sample time limit; a slower sample is recorded as an error.")
    warmup_count: int = Field(1, ge=0, le=5, description="Unmeasured requests per path before the samples (kept in timings.json as warmup).")
    redaction_rules: RedactionRules = Field(default_factory=RedactionRules, description="What is left out of recorded URLs.")
    output_dir: str | None = Field(None, max_length=100, description="A label for the bundle (letters, digits, '.', '_', '-'); bundles always live under your workspace's bundles/.")
    retention: Retention | None = Field(None, description="Bundle retention for this workspace (keep_last_n, ttl_days).")

    @field_validator("url_paths")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        for p in paths:
            if not p.startswith("/") or len(p) > 2048 or any(c in p for c in "\r\n \t"):
                raise ValueError(f"{p[:80]!r}: each path must start with '/' and contain no whitespace")
        return paths

    @field_validator("headers")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for k, v in headers.items():
            if not _HEADER_NAME.match(k) or "\r" in v or "\n" in v or len(v) > 4096:
                raise ValueError(f"header {k[:60]!r} has an invalid name or value")
        return headers


class CollectResult(ToolOutput):
    bundle_id: str
    state: str = Field(description="'completed', or 'running' when the run continues as a Durable orchestration.")
    bundle_dir: str
    manifest_path: str
    timings_path: str
    artifact_counts: dict[str, int]
    ingest_artifacts: list[dict[str, str]]
    status_query_url: str | None = None
    instance_id: str | None = None
    removed_by_retention: list[str] = Field(default_factory=list)
    correlation_id: str
    next_action: str


def redact_url(url: str, rules: RedactionRules) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if rules.redact_url_userinfo and "@" in netloc:
        netloc = "REDACTED@" + netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, "" if rules.strip_query_params else parts.query, ""))


def recorded_path(path: str, strip_query: bool) -> str:
    return path.split("?", 1)[0] if strip_query else path


def inventory_counts(the_plan: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, int]:
    return {"spx_files": sum(1 for i in the_plan["inventory"] if i["type"] == "spx"), "inventory_items": len(the_plan["inventory"]),
            "timing_samples": sum(1 for s in samples if not s["warmup"])}


def worst_case_seconds(req: CollectRequest) -> float:
    per_path = math.ceil((req.sample_count + req.warmup_count) / req.concurrency)
    return len(req.url_paths) * per_path * req.timeout_ms / 1000


async def _inventory(req: CollectRequest, settings: Settings, blobs: BlobStore, workspace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    local = settings.perf_allow_local_paths
    for d in req.spx_dirs:
        if local and d.startswith("/"):
            root = Path(d)
            if not root.is_dir():
                raise ValidationFailed(f"SPX directory not found: {d}", details={"errors": [{"field": "spx_dirs", "problem": "not a directory"}]})
            found = sorted(str(p) for p in root.iterdir() if p.is_file() and p.name.endswith((".json", ".txt.gz")))[:MAX_FILES_PER_DIR]
            items += [{"path": p, "type": "spx"} for p in found]
            continue
        prefix = artifact_blob(workspace, blob_name(d.strip("/"))) + "/"
        base = f"{workspace_prefix(workspace)}/artifacts/"
        names = []
        async for n in blobs.list(prefix):
            if n.endswith((".json", ".txt.gz")):
                names.append(n[len(base):])
            if len(names) >= MAX_FILES_PER_DIR:
                break
        if not names:
            raise ValidationFailed(f"no SPX files (.json/.txt.gz) under {d!r} in your artifacts", details={"errors": [{"field": "spx_dirs", "problem": "empty or missing prefix"}]},
                                   recovery_suggestions=["Upload the SPX pairs with names under that prefix (POST /api/artifacts?name=<prefix>/<file>)."])
        items += [{"blob": n, "type": "spx"} for n in sorted(names)]
    if req.slow_log_path:
        if local and req.slow_log_path.startswith("/"):
            if not Path(req.slow_log_path).is_file():
                raise ValidationFailed("slow_log_path must point to a readable file", details={"errors": [{"field": "slow_log_path", "problem": "not a file"}]})
            items.append({"path": req.slow_log_path, "type": "mysql_slow_log"})
        else:
            name = blob_name(req.slow_log_path.strip("/"))
            full = artifact_blob(workspace, name)
            if not [n async for n in blobs.list(full) if n == full]:
                raise ValidationFailed(f"slow log {name!r} is not in your artifacts", details={"errors": [{"field": "slow_log_path", "problem": "blob not found"}]})
            items.append({"blob": name, "type": "mysql_slow_log"})
    return items


async def plan(req: CollectRequest, settings: Settings, blobs: BlobStore, workspace: str, now: datetime) -> dict[str, Any]:
    """Check the request (URL guard, inputs) and fix every parameter of the run."""
    guard = OutboundGuard(settings)
    await guard.resolve(req.base_url.rstrip("/") + "/", "base_url")
    if req.output_dir is not None:
        blob_name(req.output_dir)
    allowed = {h.lower() for h in req.headers_allowlist}
    sent = {k: v for k, v in req.headers.items() if k.lower() in allowed}
    bundle_id = f"bundle_{now.strftime('%Y%m%d_%H%M%S')}_{secrets.token_hex(5)}"
    if req.output_dir:
        bundle_id = f"{bundle_id}_{req.output_dir}"
    rules = req.redaction_rules
    return {
        "workspace_id": workspace,
        "bundle_id": bundle_id,
        "created_at": now.isoformat(),
        "base_url": req.base_url.rstrip("/"),
        "url_paths": req.url_paths,
        "headers": sent,
        "probe": {"sample_count": req.sample_count, "concurrency": req.concurrency, "timeout_ms": req.timeout_ms, "warmup_count": req.warmup_count},
        "redaction_rules": rules.model_dump(),
        "recorded": {
            "base_url": redact_url(req.base_url.rstrip("/"), rules),
            "headers": {k: ("[REDACTED]" if _SECRET_HEADER.search(k) else v) for k, v in sent.items()},
            "headers_dropped": sorted(k for k in req.headers if k.lower() not in allowed),
        },
        "inventory": await _inventory(req, settings, blobs, workspace),
        "retention": (req.retention or Retention()).model_dump(),
    }


async def run_path(the_plan: dict[str, Any], path: str, settings: Settings) -> list[dict[str, Any]]:
    """Warm-up samples, then the measured ones, `concurrency` at a time; recorded paths are redacted."""
    guard = OutboundGuard(settings)
    p = the_plan["probe"]
    rules = RedactionRules(**the_plan["redaction_rules"])
    recorded = recorded_path(path, rules.strip_query_params)
    url = the_plan["base_url"] + "/"
    gate = asyncio.Semaphore(p["concurrency"])

    async def one(warmup: bool) -> dict[str, Any]:
        async with gate:
            result = await probe(guard, url, path, the_plan["headers"], p["timeout_ms"] / 1000)
        return {"method": "GET", "url_path": recorded, "warmup": warmup, **result}

    warm = [await one(True) for _ in range(p["warmup_count"])]
    measured = await asyncio.gather(*(one(False) for _ in range(p["sample_count"])))
    return warm + list(measured)


async def finish(the_plan: dict[str, Any], samples: list[dict[str, Any]], store: PerfStore, settings: Settings, now: Callable[[], datetime]) -> dict[str, Any]:
    """Write timings.json and manifest.json (timings first: a manifest always points at a whole bundle), index it, apply retention."""
    ws, bundle_id = the_plan["workspace_id"], the_plan["bundle_id"]
    rel = f"bundles/{bundle_id}"
    timings = {"format": "collector-v1", "base_url": the_plan["recorded"]["base_url"], "created_at": the_plan["created_at"], "samples": samples}
    ingest = [{k: v for k, v in item.items() if k in ("blob", "path")} for item in the_plan["inventory"]] + [{"blob": f"{rel}/timings.json"}]
    manifest = {
        "format": "collector-bundle-v1", "run": {"bundle_id": bundle_id, "created_at": the_plan["created_at"], "finished_at": now().isoformat()},
        "base_url": the_plan["recorded"]["base_url"], "url_paths": [recorded_path(p, the_plan["redaction_rules"]["strip_query_params"]) for p in the_plan["url_paths"]],
        "headers": the_plan["recorded"]["headers"], "headers_dropped": the_plan["recorded"]["headers_dropped"], "probe": the_plan["probe"],
        "redaction_rules": the_plan["redaction_rules"], "inventory": the_plan["inventory"], "timings": f"{rel}/timings.json", "ingest_artifacts": ingest,
    }
    await store.blobs.put(artifact_blob(ws, f"{rel}/timings.json"), json.dumps(timings, indent=1), content_type="application/json")
    await store.blobs.put(artifact_blob(ws, f"{rel}/manifest.json"), json.dumps(manifest, indent=1), content_type="application/json")
    counts = inventory_counts(the_plan, samples)
    await store.runs.upsert({"id": bundle_id, "type": "bundle", "workspace_id": ws, "bundle_id": bundle_id, "created_at": the_plan["created_at"], "updated_at": the_plan["created_at"],
                       "artifact_counts": counts, "ingest_artifacts": ingest, "errors": sum(1 for s in samples if s["error"])})
    retention = the_plan["retention"]
    removed = await store.prune_bundles(retention["keep_last_n"] or settings.perf_keep_last_n, retention["ttl_days"] or settings.perf_ttl_days, now())
    return {"bundle_id": bundle_id, "artifact_counts": counts, "ingest_artifacts": ingest, "removed_by_retention": removed}


def paths_of(workspace: str, bundle_id: str) -> dict[str, str]:
    base = artifact_blob(workspace, f"bundles/{bundle_id}")
    return {"bundle_dir": base, "manifest_path": f"{base}/manifest.json", "timings_path": f"{base}/timings.json"}
