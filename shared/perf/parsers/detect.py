"""What an artifact is, and whether it is usable: the core of artifacts.validate, with bounded work.

Types (the spec's): `spx` (metadata `.json`, version `spx-json-v2`; trace `.txt.gz`, `spx-text-gz-v1`),
`mysql_slow_log` (`mysql-slowlog-v1`, MySQL or MariaDB, plain or gzip) and `ttfb_timings`
(`collector-v1`, written by collect.run). Sniffing reads at most SNIFF_BYTES (a slow log's markers are
looked for in its first SLOWLOG_SNIFF_LINES = 500 lines, as the spec says, reading at most
SLOWLOG_SNIFF_BYTES for them);
gzip members are decompressed in full only to prove they are whole, under MAX_DECOMPRESSED bytes and
MAX_RATIO expansion, so neither a truncated file nor a zip bomb gets further than an error.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from shared.perf.parsers.spx import metadata as spx_metadata

SNIFF_BYTES = 64 * 1024
SNIFF_LINES = 200  # lines of an SPX trace's head looked at
SLOWLOG_SNIFF_LINES = 500  # the spec: slow-log validation scans up to the first 500 lines for its markers
SLOWLOG_SNIFF_BYTES = 4 * 1024 * 1024  # and never more bytes than this to get them
MAX_JSON_BYTES = 1024 * 1024
MAX_DECOMPRESSED = 4 * 1024**3
MAX_RATIO = 200  # SPX traces compress ~4x, slow logs ~10-20x; a bomb is thousands of times
_CHUNK = 1024 * 1024
_SPX_KEYS = {"key", "enabled_metrics", "wall_time_ms", "recorded_call_count"}
_SLOW_MARKERS = re.compile(
    rb"^(# Time: |# User@Host: |# Query_time: |\S*(?:mysqld|mariadbd)\S*, Version: )", re.MULTILINE
)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


@dataclass
class Detection:
    name: str
    ok: bool
    detected_type: str
    detected_version: str | None
    errors: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.name,
            "ok": self.ok,
            "detected_type": self.detected_type,
            "detected_version": self.detected_version,
            "errors": self.errors,
            "metadata": self.metadata,
        }


def safe_name(name: str) -> str:
    """The base name of an uploaded artifact, refusing traversal, hidden files and odd characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if name != base or not _SAFE_NAME.match(base) or ".." in base:
        raise ValueError(
            f"artifact name {name!r} is not allowed: use letters, digits, '.', '_' and '-' only, without directories"
        )
    return base


def _failed(name: str, kind: str, error: str, version: str | None = None, **metadata: Any) -> Detection:
    return Detection(name, False, kind, version, [error], dict(metadata))


def _check_gzip(open_stream: Callable[[], BinaryIO], compressed_size: int) -> str | None:
    """None if the gzip stream is whole and within the caps, else why not."""
    limit = min(MAX_DECOMPRESSED, max(compressed_size, 1) * MAX_RATIO)
    total = 0
    try:
        with open_stream() as raw, gzip.GzipFile(fileobj=raw) as gz:
            while chunk := gz.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    return (
                        f"decompresses to more than {limit} bytes ({MAX_RATIO}x the file or {MAX_DECOMPRESSED} bytes): "
                        "refused as a possible zip bomb"
                    )
    except EOFError:
        return f"truncated gzip: the stream ends after {total} decompressed bytes"
    except (gzip.BadGzipFile, zlib.error, OSError) as exc:
        return f"corrupt gzip: {exc}"
    return None


def _gunzipped_head(open_stream: Callable[[], BinaryIO]) -> bytes:
    with open_stream() as raw:
        try:
            with gzip.GzipFile(fileobj=raw) as gz:
                return gz.read(SNIFF_BYTES)
        except (EOFError, gzip.BadGzipFile, zlib.error, OSError):
            return b""


def detect(name: str, size: int, open_stream: Callable[[], BinaryIO]) -> Detection:
    """Classify one artifact. `open_stream` opens it afresh (a local file, or a Blob download stream)."""
    if size == 0:
        return _failed(name, "unknown", "empty file (0 bytes)")
    with open_stream() as stream:
        head = stream.read(SNIFF_BYTES)
    gzipped = head[:2] == b"\x1f\x8b"
    if gzipped:
        head = _gunzipped_head(open_stream)
    if gzipped:
        problem = _check_gzip(open_stream, size)
        if problem:
            kind, version = ("spx", "spx-text-gz-v1") if head.startswith(b"[events]") else ("unknown", None)
            return _failed(name, kind, problem, version)
    if head.startswith(b"[events]\n"):
        lines = head.split(b"\n", SNIFF_LINES)[1:SNIFF_LINES]
        first = lines[0].split() if lines else []
        if len(first) < 3 or not all(t.lstrip(b"-").replace(b".", b"", 1).isdigit() for t in first):
            return _failed(
                name, "spx", "trace does not start with an event line '<fn> <0|1> <values...>'", "spx-text-gz-v1"
            )
        return Detection(
            name,
            True,
            "spx",
            "spx-text-gz-v1",
            metadata={"key": _spx_key(name), "metric_count": len(first) - 2, "compressed": gzipped},
        )
    if b"\x00" in head[:4096]:
        return _failed(name, "unknown", "binary content: not an SPX trace, a slow log or a timings file")
    text_head = head.lstrip()
    if text_head.startswith((b"{", b"[")):
        return _detect_json(name, size, open_stream, gzipped)
    if _SLOW_MARKERS.search(_first_lines(open_stream, gzipped, head)):
        return _detect_slowlog(name, head, gzipped)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a multi-byte character cut by the sniff window
            return _failed(name, "unknown", f"not UTF-8 text (invalid byte at offset {exc.start})")
    return _failed(
        name,
        "unknown",
        (
            f"no slow-log header or '# Time:'/'# User@Host:' line in the first {SLOWLOG_SNIFF_LINES} lines, "
            "not an SPX trace or metadata, not collector timings"
        ),
    )


def _first_lines(open_stream: Callable[[], BinaryIO], gzipped: bool, head: bytes) -> bytes:
    """The first SLOWLOG_SNIFF_LINES lines (at most SLOWLOG_SNIFF_BYTES); read again only if the head lacks them."""
    if head.count(b"\n") >= SLOWLOG_SNIFF_LINES or len(head) < SNIFF_BYTES:
        return b"\n".join(head.split(b"\n")[:SLOWLOG_SNIFF_LINES])
    with open_stream() as raw:
        try:
            stream: BinaryIO = gzip.GzipFile(fileobj=raw) if gzipped else raw  # type: ignore[assignment]
            data = stream.read(SLOWLOG_SNIFF_BYTES)
        except (EOFError, gzip.BadGzipFile, zlib.error, OSError):
            data = head
    return b"\n".join(data.split(b"\n", SLOWLOG_SNIFF_LINES)[:SLOWLOG_SNIFF_LINES])


def _spx_key(name: str) -> str:
    name = name.replace("\\", "/").rsplit("/", 1)[-1]  # blob folders and local directories are not part of SPX's key
    for suffix in (".txt.gz", ".json", ".txt"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _detect_json(name: str, size: int, open_stream: Callable[[], BinaryIO], gzipped: bool) -> Detection:
    if size > MAX_JSON_BYTES and not gzipped:
        return _failed(name, "unknown", f"JSON artifacts are limited to {MAX_JSON_BYTES} bytes")
    with open_stream() as raw:
        data = gzip.GzipFile(fileobj=raw).read(MAX_JSON_BYTES + 1) if gzipped else raw.read(MAX_JSON_BYTES + 1)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        return _failed(name, "unknown", f"invalid JSON: {str(exc)[:120]}")
    if isinstance(doc, dict) and set(doc) >= _SPX_KEYS:
        wrong = spx_metadata.problems(doc)
        if wrong:
            return Detection(name, False, "spx", "spx-json-v2", wrong)
        metrics = doc["enabled_metrics"]
        return Detection(
            name,
            True,
            "spx",
            "spx-json-v2",
            metadata={
                "key": doc.get("key"),
                "enabled_metrics": metrics,
                "wall_time_us": doc.get("wall_time_ms"),  # SPX's wall_time_ms is in microseconds
                "http_method": doc.get("http_method"),
                "http_request_uri": doc.get("http_request_uri"),
                "cli": doc.get("cli"),
                "recorded_call_count": doc.get("recorded_call_count"),
            },
        )
    if isinstance(doc, dict) and doc.get("format") == "collector-v1":
        samples = doc.get("samples")
        if not isinstance(samples, list):
            return _failed(name, "ttfb_timings", "collector-v1 timings without a samples list", "collector-v1")
        return Detection(name, True, "ttfb_timings", "collector-v1", metadata={"samples": len(samples)})
    return _failed(name, "unknown", "JSON that is neither SPX metadata nor collector-v1 timings")


def _detect_slowlog(name: str, head: bytes, gzipped: bool) -> Detection:
    flavor = "mariadb" if b"mariadbd" in head or b"MariaDB" in head or b"# Thread_id:" in head else "mysql"
    version = re.search(rb", Version: (\S+)", head)
    return Detection(
        name,
        True,
        "mysql_slow_log",
        "mysql-slowlog-v1",
        metadata={
            "flavor": flavor,
            "server_version": version.group(1).decode(errors="replace") if version else None,
            "compressed": gzipped,
        },
    )


def _stem(name: str) -> str:
    """The artifact name without its SPX suffix, folders kept (`run1/a.txt.gz` -> `run1/a`)."""
    for suffix in (".txt.gz", ".json", ".txt"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def pair_spx(detections: Iterable[Detection]) -> list[Detection]:
    """Pair each SPX metadata `.json` with its trace: by file stem first (`run1.json` + `run1.txt.gz`),
    then by the key inside the JSON (SPX's own names, `<key>.txt.gz`). Both halves of a pair get
    metadata `pair_status: paired` and `pair` (the JSON's name); a half without its other half is an
    error that names the file and what was looked for."""
    items = list(detections)
    halves = [d for d in items if d.detected_type == "spx" and d.ok]
    metas = [d for d in halves if d.detected_version == "spx-json-v2"]
    traces = [d for d in halves if d.detected_version == "spx-text-gz-v1"]
    free: dict[int, Detection] = {id(t): t for t in traces}
    partner: dict[int, Detection] = {}

    def take(meta: Detection, match: Any) -> None:
        for t in traces:
            if id(t) in free and match(t):
                del free[id(t)]
                partner[id(meta)] = t
                return

    for m in metas:
        take(m, lambda t, m=m: _stem(t.name) == _stem(m.name))
    for m in metas:
        key = str(m.metadata.get("key") or "")
        if id(m) not in partner and key:
            take(m, lambda t, key=key: _spx_key(t.name) == key or _stem(t.name) == key)
    for m in metas:
        t = partner.get(id(m))
        if t is not None:
            for d in (m, t):
                d.metadata["pair_status"], d.metadata["pair"] = "paired", m.name
            continue
        key = str(m.metadata.get("key") or "")
        wanted = f"{_stem(m.name)}.txt.gz" + (
            f" or {key}.txt.gz" if key and f"{key}.txt.gz" != f"{_stem(m.name)}.txt.gz" else ""
        )
        _partial(
            m,
            f"SPX trace (.txt.gz) for {m.name} is missing: none of the artifacts is {wanted}; "
            "send both files of the pair (ingest skips this one and ingests the rest)",
        )
    for t in free.values():
        _partial(
            t,
            f"SPX metadata (.json) for {t.name} is missing: send {_stem(t.name)}.json "
            f"(or the SPX .json whose key is {_spx_key(t.name)}) with it (ingest skips this one and ingests the rest)",
        )
    return items


def _partial(d: Detection, warning: str) -> None:
    # Usable on its own terms (the spec: "SPX validates but metadata indicates pair status not fully paired"):
    # ok stays true, the pair status and a warning say what is missing, and ingest leaves it out.
    d.metadata["pair_status"] = "partial"
    d.metadata.setdefault("warnings", []).append(warning)
