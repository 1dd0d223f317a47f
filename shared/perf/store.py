"""Snapshots, reports and bundles of one workspace: files in Blob, the run index in Cosmos `perf_runs`.

Write order makes a half-written run invisible: blobs first, the index document last; readers go
through the index, so blobs without an index entry (a crash mid-write) are never served, and the
next ingest of the same content writes them again. Deleting goes the other way: index first.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta
from typing import Any

from shared.core.errors import Conflict, NotFound
from shared.perf.artifacts import workspace_prefix
from shared.perf.models import SNAPSHOT_ID
from shared.storage.blob import BlobStore
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer

PERF_RUNS_CONTAINER = ContainerSpec(
    "perf_runs", "/workspace_id", "Perf snapshot and report index for runs.list / runs.get."
)

JSON = "application/json"


def _flame_name(index: int) -> str:
    return f"profile_{index + 1}.collapsed.txt"


def _speedscope_name(index: int) -> str:
    return f"profile_{index + 1}.speedscope.json"


# The only file names a profile download may ask for (the route passes the caller's text through this).
_SNAPSHOT = re.compile(SNAPSHOT_ID)
PROFILE_FILE = re.compile(r"profile_[1-9][0-9]{0,4}\.(?:collapsed\.txt|speedscope\.json)")


class PerfStore:
    def __init__(self, blobs: BlobStore, runs: CosmosContainer, workspace_id: str) -> None:
        self.blobs, self.runs, self.workspace = blobs, runs, workspace_id
        self.prefix = workspace_prefix(workspace_id)

    def snapshot_dir(self, sid: str) -> str:
        return f"{self.prefix}/snapshots/snapshot_{sid}"

    def report_blob(self, file_name: str) -> str:
        return f"{self.prefix}/reports/{file_name}"

    # -- snapshots -------------------------------------------------------------------------------
    async def save_snapshot(
        self,
        sid: str,
        content: dict[str, Any],
        metadata: dict[str, Any],
        flames: dict[str, str],
        now: datetime,
        speedscopes: dict[str, dict[str, Any]] | None = None,
    ) -> bool:
        """Store a snapshot; False (and only the index refreshed) when this content is already stored.

        Each SPX profile's collapsed stacks and speedscope JSON are stored beside it (profile_files)."""
        speedscopes = speedscopes or {}
        existing = await self.runs.read(f"snapshot_{sid}", self.workspace)
        stamp = now.isoformat()
        if existing is not None:
            # Re-ingesting refreshes the run; hints given before survive an ingest that gives none.
            existing.update(
                updated_at=stamp,
                environment_hints=metadata["environment_hints"] or existing.get("environment_hints", {}),
                sources=metadata["sources"],
            )
            await self.runs.upsert(existing)
            return False
        base = self.snapshot_dir(sid)
        keys = [p["key"] for p in content["profiles"]]
        # Serialising and parsing snapshots is CPU work proportional to their size: off the event loop.
        files = {
            f"{base}/snapshot.json": await asyncio.to_thread(
                json.dumps, content, sort_keys=True, separators=(",", ":")
            ),
            f"{base}/metadata.json": json.dumps(
                {
                    **metadata,
                    "normalized_snapshot_id": sid,
                    "created_at": stamp,
                    "flamegraphs": {k: _flame_name(i) for i, k in enumerate(keys) if k in flames},
                    "speedscope": {k: _speedscope_name(i) for i, k in enumerate(keys) if k in speedscopes},
                },
                indent=1,
            ),
        }
        files.update({f"{base}/{_flame_name(i)}": flames[k] for i, k in enumerate(keys) if k in flames})
        for i, k in enumerate(keys):
            if k in speedscopes:
                files[f"{base}/{_speedscope_name(i)}"] = await asyncio.to_thread(
                    json.dumps, speedscopes[k], separators=(",", ":")
                )
        await asyncio.gather(
            *(
                self.blobs.put(name, data, content_type=JSON if name.endswith(".json") else "text/plain")
                for name, data in files.items()
            )
        )
        await self.runs.upsert(
            {
                "id": f"snapshot_{sid}",
                "type": "snapshot",
                "workspace_id": self.workspace,
                "snapshot_id": sid,
                "created_at": stamp,
                "updated_at": stamp,
                "counts": metadata["counts"],
                "environment_hints": metadata["environment_hints"],
                "sources": metadata["sources"],
                "profiles": [
                    {"key": p["key"], "kind": p["kind"], "endpoint": p["endpoint"], "wall_ms": p["wall_ms"]}
                    for p in content["profiles"]
                ],
                "report_ids": [],
            }
        )
        return True

    async def index(self, sid: str) -> dict[str, Any]:
        doc = await self.runs.read(f"snapshot_{sid}", self.workspace)
        if doc is None or doc.get("type") != "snapshot":
            raise NotFound(
                f"No snapshot {sid} in this workspace",
                details={"normalized_snapshot_id": sid},
                recovery_suggestions=[
                    "Call runs.list for the workspace's snapshots, or artifacts.ingest to create one."
                ],
            )
        return doc

    async def load_snapshot(self, sid: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(content, metadata) of an indexed snapshot: two blob reads."""
        await self.index(sid)
        base = self.snapshot_dir(sid)
        raw, meta_raw = await asyncio.gather(
            self.blobs.get(f"{base}/snapshot.json"), self.blobs.get(f"{base}/metadata.json")
        )
        if raw is None or meta_raw is None:
            raise NotFound(
                f"Snapshot {sid} is indexed but its files are gone",
                recovery_suggestions=["Ingest the artifacts again; the same content gets the same id."],
            )
        return await asyncio.to_thread(json.loads, raw), json.loads(meta_raw)

    async def load_flames(self, sid: str, metadata: dict[str, Any], keys: list[str]) -> dict[str, str]:
        """Collapsed stacks of the given profiles only (a report draws a few, analysis none)."""
        names = {k: n for k, n in metadata.get("flamegraphs", {}).items() if k in keys}
        texts = await asyncio.gather(*(self.blobs.get(f"{self.snapshot_dir(sid)}/{n}") for n in names.values()))
        return {k: t.decode() for k, t in zip(names, texts, strict=False) if t is not None}

    async def profile_files(self, sid: str) -> dict[str, dict[str, str]]:
        """Per profile key, the file names of its collapsed stacks and speedscope JSON (what was stored).

        For a snapshot the caller has found in this workspace's index (the metadata is under its prefix)."""
        meta_raw = await self.blobs.get(f"{self.snapshot_dir(sid)}/metadata.json")
        if meta_raw is None:
            return {}
        meta = json.loads(meta_raw)
        out: dict[str, dict[str, str]] = {}
        for kind, names in (("collapsed", meta.get("flamegraphs", {})), ("speedscope", meta.get("speedscope", {}))):
            for key, name in names.items():
                out.setdefault(key, {})[kind] = name
        return out

    async def profile_file(self, sid: str, file_name: str) -> bytes:
        """One stored profile export of a snapshot of this workspace (the index read checks the owner)."""
        if not (_SNAPSHOT.fullmatch(sid) and PROFILE_FILE.fullmatch(file_name)):
            raise NotFound(
                f"No profile file {file_name[:100]!r}",
                recovery_suggestions=["Use a name from runs.get's profiles[].downloads."],
            )
        await self.index(sid)
        data = await self.blobs.get(f"{self.snapshot_dir(sid)}/{file_name}")
        if data is None:
            raise NotFound(
                f"Snapshot {sid} has no {file_name}",
                recovery_suggestions=["Use a name from runs.get's profiles[].downloads."],
            )
        return data

    # -- reports -----------------------------------------------------------------------------------
    async def save_report(
        self,
        sid: str,
        rid: str,
        markdown: str,
        report: dict[str, Any],
        charts: dict[str, str],
        now: datetime,
        *,
        finding_count: int | None = None,
        baseline: str | None = None,
    ) -> list[str]:
        """Store a report of snapshot `sid` (a comparison report names its `baseline`); answers its file names.

        NOT_FOUND, with nothing left behind, when the snapshot is gone (retention may remove it while a
        report renders): its index is never written back and no report outlives it."""
        snapshot_doc = await self.index(sid)
        files = {
            f"report_{rid}.md": (markdown, "text/markdown; charset=utf-8"),
            f"report_{rid}.json": (await asyncio.to_thread(json.dumps, report, indent=1, sort_keys=True), JSON),
        }
        files.update({name: (svg, "image/svg+xml") for name, svg in charts.items()})
        await asyncio.gather(
            *(self.blobs.put(self.report_blob(name), data, content_type=ct) for name, (data, ct) in files.items())
        )
        await self.runs.upsert(
            {
                "id": f"report_{rid}",
                "type": "report",
                "workspace_id": self.workspace,
                "snapshot_id": sid,
                "report_id": rid,
                "created_at": now.isoformat(),
                "files": sorted(files),
                "finding_count": report["summary"]["finding_count"] if finding_count is None else finding_count,
                **({"kind": "comparison", "baseline_snapshot_id": baseline} if baseline else {"kind": "analysis"}),
            }
        )
        for _ in range(20):
            if rid in snapshot_doc.get("report_ids", []):
                return sorted(files)
            snapshot_doc["report_ids"] = sorted([*snapshot_doc.get("report_ids", []), rid])
            try:
                # etag-checked: an upsert would bring back a snapshot deleted meanwhile, or drop a concurrent id.
                await self.runs.replace(snapshot_doc, etag=snapshot_doc.get("_etag"))
                return sorted(files)
            except NotFound:
                break
            except Conflict:
                fresh = await self.runs.read(f"snapshot_{sid}", self.workspace)
                if fresh is None:
                    break
                snapshot_doc = fresh
        else:
            raise Conflict("too many concurrent writes to this snapshot's index; retry")
        await self.runs.delete(f"report_{rid}", self.workspace)
        await asyncio.gather(*(self.blobs.delete(self.report_blob(name)) for name in files))
        raise NotFound(
            f"Snapshot {sid} was removed (retention) while its report was written",
            recovery_suggestions=["Ingest the artifacts again; the same content gets the same id."],
        )

    def report_locations(self, rid: str, charts: list[str], files: list[str], route: str) -> dict[str, Any]:
        """Where a stored report's files are: blob names for the result, and authenticated GET URLs per file."""
        return {
            "markdown_path": self.report_blob(f"report_{rid}.md"),
            "json_path": self.report_blob(f"report_{rid}.json"),
            "charts": [self.report_blob(n) for n in sorted(charts)],
            "downloads": {f: route + f for f in files},
        }

    async def reports(self, sid: str, limit: int = 200) -> list[dict[str, Any]]:
        """The snapshot's reports, newest first, at most `limit`."""
        return await self.runs.query_all(
            self.workspace,
            "c.type = 'report' AND c.snapshot_id = @sid",
            {"@sid": sid},
            order_by="c.created_at DESC",
            limit=limit,
        )

    async def report_file(self, file_name: str) -> bytes:
        """A report file by name, only if its report is indexed in this workspace."""
        rid = file_name.removeprefix("report_")[:16]
        doc = await self.runs.read(f"report_{rid}", self.workspace)
        if doc is None or file_name not in doc.get("files", []):
            raise NotFound(
                f"No report file {file_name!r} in this workspace",
                recovery_suggestions=["Use a name from report.export's downloads."],
            )
        data = await self.blobs.get(self.report_blob(file_name))
        if data is None:
            raise NotFound(f"Report file {file_name!r} was removed (retention)")
        return data

    # -- upload quota ------------------------------------------------------------------------------
    async def stored_artifact_bytes(self) -> int:
        """Bytes stored under the workspace's artifacts/ (uploads and collect bundles): one listing."""
        return sum([size async for _, size in self.blobs.list_sizes(f"{self.prefix}/artifacts/")])

    async def claim_upload_url(self, now: datetime, expires: datetime, max_open: int) -> str | None:
        """Record one more upload URL expiring at `expires`, unless `max_open` are unexpired: then the
        earliest expiry (ISO 8601), when a slot frees. One document per workspace, etag-checked."""
        for _ in range(20):
            doc = await self.runs.read("upload_urls", self.workspace)
            open_urls = sorted(t for t in (doc or {}).get("expires", []) if t > now.isoformat())
            if len(open_urls) >= max_open:
                return str(open_urls[0])
            fresh = {
                "id": "upload_urls",
                "type": "upload_urls",
                "workspace_id": self.workspace,
                "expires": [*open_urls, expires.isoformat()],
            }
            try:
                if doc is None:
                    await self.runs.create(fresh)
                else:
                    await self.runs.replace(fresh, etag=doc["_etag"])
                return None
            except Conflict:
                await asyncio.sleep(0.01)
        raise Conflict("too many concurrent upload URL requests for this workspace; retry")

    # -- listing and retention ---------------------------------------------------------------------
    async def list_runs(self, limit: int, continuation: str | None) -> tuple[list[dict[str, Any]], str | None]:
        return await self.runs.query(
            self.workspace,
            "c.type = 'snapshot'",
            order_by="c.updated_at DESC",
            max_items=limit,
            continuation=continuation,
        )

    async def _expired(self, kind: str, keep_last_n: int, ttl_days: int | None, now: datetime) -> list[dict[str, Any]]:
        """Index entries of `kind` beyond the newest keep_last_n or not refreshed for ttl_days."""
        docs = await self.runs.query_all(
            self.workspace, "c.type = @kind", {"@kind": kind}, order_by="c.updated_at DESC", limit=5000
        )
        cutoff = (now - timedelta(days=ttl_days)).isoformat() if ttl_days else None
        return [d for i, d in enumerate(docs) if i >= keep_last_n or (cutoff and d["updated_at"] < cutoff)]

    async def prune(self, keep_last_n: int, ttl_days: int | None, now: datetime) -> list[str]:
        """Remove snapshots beyond the newest keep_last_n or older than ttl_days, with their reports."""
        doomed = await self._expired("snapshot", keep_last_n, ttl_days, now)
        for run in doomed:
            await self.delete_snapshot(run["snapshot_id"])
        return [r["snapshot_id"] for r in doomed]

    async def prune_bundles(self, keep_last_n: int, ttl_days: int | None, now: datetime) -> list[str]:
        """collect.run bundles, by the same rule: index entry, then files."""
        doomed = await self._expired("bundle", keep_last_n, ttl_days, now)
        for b in doomed:
            await self.runs.delete(b["id"], self.workspace)
            names = [n async for n in self.blobs.list(f"{self.prefix}/artifacts/bundles/{b['bundle_id']}/")]
            await asyncio.gather(*(self.blobs.delete(n) for n in names))
        return [b["bundle_id"] for b in doomed]

    async def delete_snapshot(self, sid: str) -> None:
        await self.runs.delete(f"snapshot_{sid}", self.workspace)
        # reports() answers a page of them: a snapshot compared with many baselines can have more.
        while reports := await self.reports(sid):
            for report in reports:
                await self.runs.delete(report["id"], self.workspace)
                await asyncio.gather(*(self.blobs.delete(self.report_blob(f)) for f in report.get("files", [])))
        names = [n async for n in self.blobs.list(self.snapshot_dir(sid) + "/")]
        await asyncio.gather(*(self.blobs.delete(n) for n in names))
