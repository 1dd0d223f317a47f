"""Uploads for POST /api/artifacts: raw or multipart bodies, checked like artifacts.validate, then stored.

Every file of a request is checked first and the request is refused as a whole if any is unusable,
so a bad upload writes nothing. SHA-256 is computed over the bytes that are stored.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

from shared.core.errors import ValidationFailed
from shared.perf.artifacts import artifact_blob, blob_name
from shared.perf.parsers.detect import detect
from shared.perf.uploads.multipart import MAX_PARTS, MultipartError, parse_multipart
from shared.storage.blob import BlobStore

BLOCK_BYTES = 4 * 1024 * 1024


def _invalid(message: str, problem: str, field: str = "(body)") -> ValidationFailed:
    return ValidationFailed.on_field(
        field,
        problem,
        message,
        suggestions=[
            "POST the file as the body with ?name=<file name>, or as multipart/form-data with a filename per part."
        ],
    )


def split_body(body: bytes, content_type: str, name: str | None) -> list[tuple[str, bytes]]:
    """(name, bytes) per file in the request; multipart limits are enforced while parsing
    (CPU-bound: run off the loop)."""
    if content_type.lower().startswith("multipart/form-data"):
        try:
            parts = parse_multipart(body, content_type, max_parts=MAX_PARTS)
        except MultipartError as exc:
            raise _invalid(str(exc), exc.problem) from None
        files = [
            (p.filename or (name if len(parts) == 1 else None), p.data) for p in parts if p.filename or len(parts) == 1
        ]
        if not files:
            raise _invalid("multipart body has no file part", "add a part with a filename")
        out = []
        for fname, data in files:
            if not fname:
                raise _invalid("a file part has no filename and no ?name= was given", "missing filename", "name")
            out.append((fname.replace("\\", "/").rsplit("/", 1)[-1] if fname != name else fname, data))
        return out
    if not name:
        raise _invalid("missing ?name=<file name> for a raw upload", "required", "name")
    return [(name, body)]


def _check(name: str, data: bytes) -> dict[str, Any]:
    if not data:
        raise _invalid(f"{name}: empty file (0 bytes)", "empty", name)
    d = detect(name, len(data), lambda: io.BytesIO(data))
    if not d.ok:
        raise ValidationFailed.on_fields(
            f"{name}: {d.errors[0] if d.errors else 'not a usable artifact'}",
            ((name, e) for e in d.errors),
            detection=d.to_dict(),
            suggestions=[
                "Upload the artifact as written by SPX, the MySQL server or collect.run (gzip must be complete)."
            ],
        )
    return d.to_dict()


def _chunks(data: bytes) -> Any:
    view = memoryview(data)
    for start in range(0, len(view), BLOCK_BYTES):
        yield view[start : start + BLOCK_BYTES]


async def store_uploads(
    blobs: BlobStore, workspace_id: str, body: bytes, content_type: str, name: str | None
) -> list[dict[str, Any]]:
    files = [(blob_name(n), data) for n, data in await asyncio.to_thread(split_body, body, content_type, name)]
    checked = [await asyncio.to_thread(_check, n, data) for n, data in files]
    stored = []
    for (n, data), detection in zip(files, checked, strict=False):
        # Staged blocks, SHA-256 on the way; the blob appears only when its block list is committed.
        size, sha256 = await blobs.put_blocks(artifact_blob(workspace_id, n), _chunks(data))
        stored.append(
            {
                "blob": n,
                "size_bytes": size,
                "sha256": sha256,
                "detected_type": detection["detected_type"],
                "detected_version": detection["detected_version"],
                "metadata": detection["metadata"],
            }
        )
    return stored
