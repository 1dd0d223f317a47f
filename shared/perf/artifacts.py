"""Where perf artifacts live and how a tool gets at them: Blob names per workspace, local paths by setting.

Blob layout (one container, every name under the workspace's prefix, so no reference can leave it):
    perf/<workspace>/artifacts/<name>                      uploads (POST /api/artifacts, upload URLs)
    perf/<workspace>/snapshots/snapshot_<id>/snapshot.json  + metadata.json, profile_<n>.collapsed.txt
    perf/<workspace>/reports/report_<id>.md|.json|*.svg
    perf/<workspace>/artifacts/bundles/<bundle_id>/manifest.json + timings.json
    (collect.run: an artifact like any upload)
artifacts.ingest streams each artifact into a temporary file (SHA-256 on the way), so the parsers work
on a local file whatever the source and memory does not grow with the artifact. artifacts.validate
writes nothing: detection reads blobs as ranged streams (BlobReader), only as far as it needs.
Both take each distinct artifact once (`unique_refs`) and read at most perf_max_request_bytes in total.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import io
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

from shared.core.errors import ValidationFailed
from shared.core.settings import Settings
from shared.perf.models import ArtifactRef
from shared.perf.settings import PerfSettings
from shared.storage.blob import BlobStore

_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
MAX_SEGMENTS = 6


def blob_name(name: str) -> str:
    """A caller's artifact name, checked: safe segments separated by '/', no traversal, no empty parts."""
    parts = name.split("/")
    if len(parts) > MAX_SEGMENTS or not all(_SEGMENT.match(p) and ".." not in p for p in parts):
        raise ValidationFailed.on_field(
            "name",
            "use letters, digits, '.', '_' and '-', with '/' between at most 6 folders; no '..'",
            f"artifact name {name[:100]!r} is not allowed",
            suggestions=["Rename the artifact, e.g. 'spx/run1/spx-full-20260216-web1-4242-1.txt.gz' or 'slow.log'."],
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
    opener: Callable[[], BinaryIO] | None = None  # streamed artifacts (validate): no local file

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def readable(self) -> bool:
        return self.file is not None or self.opener is not None

    def open(self) -> BinaryIO:
        """A fresh binary stream of the artifact (call from a worker thread for blobs)."""
        if self.opener is not None:
            return self.opener()
        assert self.file is not None
        return open(self.file, "rb")


def unique_refs(refs: list[ArtifactRef]) -> list[ArtifactRef]:
    """The refs with each blob or path once (the first occurrence, with its hints): a repeat adds no information."""
    seen: set[tuple[str, str]] = set()
    out = []
    for ref in refs:
        key = ("blob", ref.blob) if ref.blob is not None else ("path", str(ref.path))
        if key not in seen:
            seen.add(key)
            out.append(ref)
    return out


class BlobReader(io.RawIOBase):
    """A blob as a synchronous binary stream for a worker thread: each read fetches the next range on the event loop.

    The first range is small (a sniff reads only the head); later ones are RANGE_BYTES.
    """

    FIRST_RANGE_BYTES = 256 * 1024
    RANGE_BYTES = 4 * 1024 * 1024

    def __init__(self, blobs: BlobStore, name: str, size: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._blobs, self._name, self._size, self._loop = blobs, name, size, loop
        self._pos = 0
        self._buf = memoryview(b"")

    def readable(self) -> bool:
        return True

    async def _range(self, offset: int, length: int) -> bytes:
        download = await self._blobs.open_download(self._name, offset=offset, length=length)
        if download is None:
            raise FileNotFoundError(f"blob {self._name} disappeared while being read")
        return bytes(await download.readall())

    def readinto(self, b: Any) -> int:
        if not self._buf:
            if self._pos >= self._size:
                return 0
            length = min(self.FIRST_RANGE_BYTES if self._pos == 0 else self.RANGE_BYTES, self._size - self._pos)
            chunk = asyncio.run_coroutine_threadsafe(self._range(self._pos, length), self._loop).result()
            if not chunk:
                self._size = self._pos  # the blob shrank: end of stream
                return 0
            self._pos += len(chunk)
            self._buf = memoryview(chunk)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


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
        self._used = 0  # bytes read for this request so far

    async def __aenter__(self) -> ArtifactFetcher:
        self._tmp = tempfile.TemporaryDirectory(prefix="firebreak-perf-")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def _over_budget(self, size: int) -> str | None:
        """Why `size` more bytes cannot be read in this request (None if they can); counts them if they can."""
        total = self._settings.section(PerfSettings).max_request_bytes
        if self._used + size > total:
            return (
                f"the artifacts of this request would exceed {total} bytes in total "
                f"(FIREBREAK_PERF_MAX_REQUEST_BYTES): "
                "validate or ingest them in smaller groups"
            )
        self._used += size
        return None

    async def stream_all(self, refs: list[ArtifactRef]) -> list[LocalArtifact]:
        """Each distinct artifact as a stream to sniff (no temporary file): blobs are read in ranges, on demand."""
        loop = asyncio.get_running_loop()
        out = []
        for ref in unique_refs(refs):
            if ref.path is not None:
                local = await self._local(ref)
                if local.file is not None:
                    problem = self._over_budget(local.size)
                    local = LocalArtifact(ref, None, error=problem) if problem else local
                out.append(local)
                continue
            try:
                name = artifact_blob(self._workspace, str(ref.blob))
            except ValidationFailed as exc:
                out.append(LocalArtifact(ref, None, error=exc.message))
                continue
            head = await self._blobs.open_download(name, offset=0, length=1)
            if head is None:
                out.append(
                    LocalArtifact(
                        ref, None, error="artifact blob not found: upload it first (POST /api/artifacts?name=...)"
                    )
                )
                continue
            size = int(
                str(head.properties.content_range).rsplit("/", 1)[-1]
            )  # `bytes 0-0/<blob size>`; `.size` is the range's
            limit = self._settings.section(PerfSettings).max_artifact_bytes
            problem = (
                f"artifact is too large: {size} bytes is over the {limit}-byte artifact limit"
                if size > limit
                else self._over_budget(size)
            )
            if problem:
                out.append(LocalArtifact(ref, None, error=problem))
                continue
            out.append(
                LocalArtifact(
                    ref,
                    None,
                    size,
                    opener=functools.partial(_blob_opener, self._blobs, name, size, loop),
                )
            )
        return out

    async def _local(self, ref: ArtifactRef) -> LocalArtifact:
        limit = self._settings.section(PerfSettings).max_artifact_bytes
        if not self._settings.section(PerfSettings).allow_local_paths:
            return LocalArtifact(
                ref,
                None,
                error="local paths are not accepted here: upload the file (POST /api/artifacts or "
                'create_upload_url) and pass {"blob": name}',
            )
        path = Path(str(ref.path))
        problem = await asyncio.to_thread(_local_file_problem, path, limit)
        if problem:
            return LocalArtifact(ref, None, error=problem)
        try:
            size, sha = await asyncio.to_thread(hash_file, path)
        except OSError as exc:
            return LocalArtifact(ref, None, error=f"cannot read file: {exc.strerror or type(exc).__name__}")
        return LocalArtifact(ref, path, size, sha)

    async def fetch(self, ref: ArtifactRef, index: int) -> LocalArtifact:
        """One artifact as a local file (blobs are downloaded into the temporary directory), within the
        request's byte budget."""
        limit = self._settings.section(PerfSettings).max_artifact_bytes
        if ref.path is not None:
            local = await self._local(ref)
            problem = self._over_budget(local.size) if local.file is not None else None
            return LocalArtifact(ref, None, error=problem) if problem else local
        try:
            name = artifact_blob(self._workspace, str(ref.blob))
        except ValidationFailed as exc:
            return LocalArtifact(ref, None, error=exc.message)
        assert self._tmp is not None
        # Keep the artifact's own base name: detection pairs SPX halves by it.
        target = Path(self._tmp.name) / f"{index:03d}" / os.path.basename(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        remaining = self._settings.section(PerfSettings).max_request_bytes - self._used
        try:
            sink = await asyncio.to_thread(open, target, "wb")
            with sink:
                got = await self._blobs.download_to(name, sink, limit=min(limit, remaining))
        except ValueError as exc:
            target.unlink(missing_ok=True)
            if remaining < limit:
                return LocalArtifact(ref, None, error=self._over_budget(remaining + 1))
            return LocalArtifact(ref, None, error=f"artifact is too large: {exc}")
        if got is None:
            return LocalArtifact(
                ref, None, error="artifact blob not found: upload it first (POST /api/artifacts?name=...)"
            )
        self._used += got[0]
        return LocalArtifact(ref, target, got[0], got[1])


def _local_file_problem(path: Path, limit: int) -> str | None:
    """Why a local artifact path cannot be used, or None (file system calls: run off the event loop)."""
    if not path.is_absolute():
        return "path must be absolute"
    if not path.is_file():
        return "artifact file not found"
    if path.stat().st_size > limit:
        return f"artifact is larger than the {limit}-byte limit"
    return None


def _blob_opener(blobs: BlobStore, name: str, size: int, loop: asyncio.AbstractEventLoop) -> io.BufferedReader:
    """A buffered reader over one blob, for parsers that run in a worker thread."""
    return io.BufferedReader(BlobReader(blobs, name, size, loop))
