"""Where perf artifacts live and how a tool gets at them: Blob names per workspace, local paths by setting.

Blob layout (one container, every name under the workspace's prefix, so no reference can leave it):
    perf/<workspace>/artifacts/<name>                      uploads (POST /api/artifacts, upload URLs)
    perf/<workspace>/snapshots/snapshot_<id>/snapshot.json  + metadata.json, profile_<n>.collapsed.txt
    perf/<workspace>/reports/report_<id>.md|.json|*.svg
    perf/<workspace>/artifacts/bundles/<bundle_id>/manifest.json + timings.json (collect.run: an artifact like any upload)
A tool reads an artifact by streaming it into a temporary file (SHA-256 on the way), so the parsers
work on a local file whatever the source and memory does not grow with the artifact.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from shared.core.errors import ValidationFailed
from shared.core.settings import Settings
from shared.perf.models import ArtifactRef
from shared.storage.blob import BlobStore

_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
MAX_SEGMENTS = 6


def blob_name(name: str) -> str:
    """A caller's artifact name, checked: safe segments separated by '/', no traversal, no empty parts."""
    parts = name.split("/")
    if len(parts) > MAX_SEGMENTS or not all(_SEGMENT.match(p) and ".." not in p for p in parts):
        raise ValidationFailed(
            f"artifact name {name[:100]!r} is not allowed",
            details={"errors": [{"field": "name", "problem": "use letters, digits, '.', '_' and '-', with '/' between at most 6 folders; no '..'"}]},
            recovery_suggestions=["Rename the artifact, e.g. 'spx/run1/spx-full-20260216-web1-4242-1.txt.gz' or 'slow.log'."],
        )
    return name


def workspace_prefix(workspace_id: str) -> str:
    return f"perf/{quote(workspace_id, safe='')}"


def artifact_blob(workspace_id: str, name: str) -> str:
    return f"{workspace_prefix(workspace_id)}/artifacts/{blob_name(name)}"


@dataclass
class LocalArtifact:
    """An artifact readable on this machine: `name` as the caller gave it, `file` to parse."""

    ref: ArtifactRef
    file: Path | None
    size: int = 0
    sha256: str = ""
    error: str | None = None

    @property
    def name(self) -> str:
        return self.ref.name


def hash_file(path: Path) -> tuple[int, str]:
    """(size, SHA-256 hex) of a local file, read in 1 MB chunks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


class ArtifactFetcher:
    """Fetches artifacts into a private temporary directory; use as `async with`."""

    def __init__(self, blobs: BlobStore, settings: Settings, workspace_id: str) -> None:
        self._blobs, self._settings, self._workspace = blobs, settings, workspace_id
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    async def __aenter__(self) -> ArtifactFetcher:
        self._tmp = tempfile.TemporaryDirectory(prefix="firebreak-perf-")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    async def fetch_all(self, refs: list[ArtifactRef]) -> list[LocalArtifact]:
        return [await self.fetch(ref, i) for i, ref in enumerate(refs)]

    async def fetch(self, ref: ArtifactRef, index: int) -> LocalArtifact:
        limit = self._settings.perf_max_artifact_bytes
        if ref.path is not None:
            if not self._settings.perf_allow_local_paths:
                return LocalArtifact(ref, None, error="local paths are not accepted here: upload the file (POST /api/artifacts or artifacts.upload_url) and pass {\"blob\": name}")
            path = Path(ref.path)
            if not path.is_absolute():
                return LocalArtifact(ref, None, error="path must be absolute")
            if not path.is_file():
                return LocalArtifact(ref, None, error="artifact file not found")
            if path.stat().st_size > limit:
                return LocalArtifact(ref, None, error=f"artifact is larger than the {limit}-byte limit")
            try:
                size, sha = await asyncio.to_thread(hash_file, path)
            except OSError as exc:
                return LocalArtifact(ref, None, error=f"cannot read file: {exc.strerror or type(exc).__name__}")
            return LocalArtifact(ref, path, size, sha)
        try:
            name = artifact_blob(self._workspace, str(ref.blob))
        except ValidationFailed as exc:
            return LocalArtifact(ref, None, error=exc.message)
        assert self._tmp is not None
        # Keep the artifact's own base name: detection pairs SPX halves by it.
        target = Path(self._tmp.name) / f"{index:03d}" / os.path.basename(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(target, "wb") as sink:
                got = await self._blobs.download_to(name, sink, limit=limit)
        except ValueError as exc:
            return LocalArtifact(ref, None, error=f"artifact is too large: {exc}")
        if got is None:
            return LocalArtifact(ref, None, error="artifact blob not found: upload it first (POST /api/artifacts?name=...)")
        return LocalArtifact(ref, target, got[0], got[1])
