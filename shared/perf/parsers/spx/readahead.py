"""Read-ahead for SPX traces: a thread reads (decompresses) the next blocks of a stream while the caller parses.

`blocks(source, size)` yields what `while piece := source.read(size)` yields, and raises what it raises,
where it raises it (the blocks before an error, then the error; a partial block is dropped, as read()
drops it). At most READ_AHEAD_BLOCKS blocks wait; when the caller stops early the thread is stopped
and joined before `blocks` returns, so nothing reads `source` afterwards.

A gzip.GzipFile opened for reading and not read yet is decompressed from its underlying file with zlib
directly, in steps of COMPRESSED_STEP bytes: GzipFile's own reader takes the GIL back for every ~32 KB
(it reads 8 KB of input at a time), so the thread would wait on the parser for each of them. The
members, headers, CRC and length checks, zero padding and the truncation error are gzip's: its header
reader, padded file and messages are reused (gzip._read_gzip_header, gzip._PaddedFile, gzip._read_exact,
the strings of _GzipReader._read_eof), and tests/unit/perf/test_spx_prefetch.py compares both ways on
good, truncated, corrupt, padded and multi-member files. Memory: READ_AHEAD_BLOCKS + 2 blocks.
"""

from __future__ import annotations

import gzip
import queue
import struct
import threading
import zlib
from collections.abc import Generator, Iterator
from typing import Any

READ_AHEAD_BLOCKS = 2
COMPRESSED_STEP = 1024 * 1024
_TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"


def _members(fileobj: Any, out_max: int) -> Iterator[bytes]:
    """Decompressed pieces (at most out_max bytes each) of every gzip member in `fileobj`, checked as gzip does."""
    padded = gzip._PaddedFile(fileobj)  # gzip's own, for its header reader
    while gzip._read_gzip_header(padded) is not None:  # type: ignore[attr-defined]
        inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        crc, size = 0, 0
        while not inflate.eof:
            data = inflate.unconsumed_tail or padded.read(COMPRESSED_STEP)
            if not data:
                raise EOFError(_TRUNCATED)
            piece = inflate.decompress(data, out_max)
            if piece:
                crc = zlib.crc32(piece, crc)
                size += len(piece)
                yield piece
        if inflate.unused_data:
            padded.prepend(inflate.unused_data)
        stored_crc, stored_size = struct.unpack("<II", gzip._read_exact(padded, 8))  # type: ignore[attr-defined]
        if stored_crc != crc:
            raise gzip.BadGzipFile(f"CRC check failed {hex(stored_crc)} != {hex(crc)}")
        if stored_size != size & 0xFFFFFFFF:
            raise gzip.BadGzipFile("Incorrect length of data produced")
        pad = b"\x00"
        while pad == b"\x00":  # members may be padded with zeros
            pad = padded.read(1)
        if pad:
            padded.prepend(pad)


def _exact_blocks(pieces: Iterator[bytes], size: int) -> Iterator[bytes]:
    """Pieces regrouped in blocks of `size` bytes (the last shorter), as a buffered read(size) returns them."""
    pending = bytearray()
    for piece in pieces:
        pending += piece
        while len(pending) >= size:
            yield bytes(memoryview(pending)[:size])  # one copy (a bytearray slice would make two)
            del pending[:size]
    if pending:
        yield bytes(pending)


def _fresh_gzip(source: Any) -> bool:
    """A GzipFile for reading that nothing has read from yet (so its file is at the first member)."""
    return (
        isinstance(source, gzip.GzipFile)
        and source.mode == gzip.READ
        and not source.closed
        and source.fileobj is not None
        and source.tell() == 0
    )


def _reads(source: Any, size: int) -> Iterator[bytes]:
    while piece := source.read(size):
        yield piece


def blocks(source: Any, size: int) -> Generator[bytes, None, None]:
    """`source.read(size)` blocks until the end, read by a thread ahead of the caller."""
    step = min(size, COMPRESSED_STEP)  # decompressed pieces no larger than a block, nor than 1 MB
    produce = _exact_blocks(_members(source.fileobj, step), size) if _fresh_gzip(source) else _reads(source, size)
    waiting: queue.Queue[bytes | BaseException | None] = queue.Queue(READ_AHEAD_BLOCKS)
    stop = threading.Event()

    def put(item: bytes | BaseException | None) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def reader() -> None:
        try:
            for piece in produce:
                if not put(piece):
                    return
            put(None)
        except BaseException as exc:  # handed to the caller, raised there
            put(exc)

    thread = threading.Thread(target=reader, name="spx-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := waiting.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()
