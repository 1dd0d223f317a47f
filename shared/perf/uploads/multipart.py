"""A bounded multipart/form-data parser: part count, header bytes and total bytes are checked while it parses.

Werkzeug's incremental decoder (what the Functions library's `req.files` uses underneath) is fed the body
in small chunks, so a body of 200,000 empty parts is refused at the 21st part instead of being parsed
whole first. `req.files` itself cannot be bounded: azure-functions builds its parser with no part, size or
memory limit and spools file parts over 500 KB to temporary files before any check (pinned by
tests/unit/perf/test_multipart.py). CPU-bound: call it off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.http import parse_options_header
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData, State

MAX_PARTS = 20
MAX_PART_HEADER_BYTES = 8 * 1024
_CHUNK = 16 * 1024
# The decoder buffers at most one chunk plus one part's headers; anything more is a malformed body.
_MAX_BUFFER = _CHUNK + MAX_PART_HEADER_BYTES + 1024


class MultipartError(ValueError):
    """The body is not multipart/form-data this route accepts; `problem` is a short machine-readable reason."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


@dataclass
class Part:
    """One form-data part: the form field name, its filename (None for a plain field) and its bytes."""

    name: str | None
    filename: str | None
    data: bytes


def boundary_of(content_type: str) -> bytes:
    """The boundary of a multipart/form-data content type, or MultipartError."""
    media, options = parse_options_header(content_type)
    boundary = options.get("boundary", "")
    if media != "multipart/form-data" or not boundary or len(boundary) > 200:
        raise MultipartError("multipart body without a usable boundary (check the Content-Type)", "no boundary")
    try:
        return boundary.encode("ascii")
    except UnicodeEncodeError:
        raise MultipartError("the multipart boundary must be ASCII", "bad boundary") from None


def parse_multipart(
    body: bytes, content_type: str, *, max_parts: int = MAX_PARTS, max_total_bytes: int | None = None
) -> list[Part]:
    """Every part of `body`, refusing as soon as a limit is crossed (parts, header bytes, total bytes)."""
    reader = _Reader(boundary_of(content_type), max_parts, len(body) if max_total_bytes is None else max_total_bytes)
    view = memoryview(body)
    try:
        for start in range(0, len(view), _CHUNK):
            reader.feed(bytes(view[start : start + _CHUNK]))
            if reader.decoder.state in (State.EPILOGUE, State.COMPLETE):
                break  # whatever follows the closing boundary is an epilogue: not read
        reader.feed(None)
    except RequestEntityTooLarge:
        raise MultipartError(f"at most {max_parts} parts per request", "too many parts") from None
    except MultipartError:
        raise
    except UnicodeDecodeError:
        raise MultipartError("multipart part headers are not UTF-8", "malformed") from None
    except ValueError as exc:  # the decoder's own complaints: no Content-Disposition, a body cut short
        if "Content-Disposition" in str(exc):
            raise MultipartError("a multipart part has no Content-Disposition header", "malformed") from None
        raise MultipartError(
            "multipart body ends before its closing boundary (check the boundary)", "truncated"
        ) from None
    if not reader.parts:
        raise MultipartError("multipart body without parts (check the boundary)", "no parts")
    return reader.parts


class _Reader:
    """Drives the decoder one chunk at a time and collects parts, checking each limit as events arrive."""

    def __init__(self, boundary: bytes, max_parts: int, max_total_bytes: int) -> None:
        self.decoder = MultipartDecoder(boundary, max_parts=max_parts)
        self.parts: list[Part] = []
        self._limit = max_total_bytes
        self._total = 0
        self._current: Part | None = None
        self._chunks: list[bytes] = []

    def feed(self, data: bytes | None) -> None:
        self.decoder.receive_data(data)
        event = self.decoder.next_event()
        while not isinstance(event, (NeedData, Epilogue)):
            if isinstance(event, (Field, File)):
                if sum(len(k) + len(v) + 4 for k, v in event.headers.items()) > MAX_PART_HEADER_BYTES:
                    raise MultipartError(
                        f"part {len(self.parts) + 1} has more than {MAX_PART_HEADER_BYTES} bytes of headers",
                        "part headers too large",
                    )
                self._current, self._chunks = (
                    Part(event.name, event.filename if isinstance(event, File) else None, b""),
                    [],
                )
            elif isinstance(event, Data):
                self._total += len(event.data)
                if self._total > self._limit:
                    raise MultipartError(f"the parts hold more than {self._limit} bytes", "too large")
                self._chunks.append(event.data)
                if not event.more_data and self._current is not None:
                    self._current.data = b"".join(self._chunks)
                    self.parts.append(self._current)
                    self._current, self._chunks = None, []
            event = self.decoder.next_event()
        if len(self.decoder.buffer) > _MAX_BUFFER:
            # Headers (or a preamble) that never end: refuse now rather than buffer the rest of the body.
            what = "part headers too large" if self.decoder.state == State.PART else "no boundary"
            raise MultipartError(f"multipart body is malformed ({what})", what)
