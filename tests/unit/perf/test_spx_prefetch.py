"""SPX read-ahead: the same profile, and the same errors at the same place, with and without it."""

from __future__ import annotations

import gzip
import io
import json
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from shared.perf.parsers.spx import readahead
from shared.perf.parsers.spx import trace as trace_module
from shared.perf.parsers.spx.trace import TraceFormatError, aggregate_trace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "spx"
KEYS = sorted(p.name.removesuffix(".json") for p in FIXTURES.glob("*.json"))
TRACE = b"[events]\n0 1 0 0\n1 1 1 1\n1 0 3 3\n0 0 7 7\n[functions]\nmain\nchild\n"


def outcome(data: bytes, read_ahead: bool, open_as_gzip: bool = True, **meta: Any) -> Any:
    """The profile, or the exception's type and message."""
    metrics = meta.get("metrics", ["wt", "zm"])
    count = meta.get("count")
    source: Any = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") if open_as_gzip else io.BytesIO(data)
    try:
        with source:
            return aggregate_trace(source, metrics, count, read_ahead=read_ahead)
    except (EOFError, OSError, zlib.error, TraceFormatError) as exc:
        return (type(exc), str(exc))


def test_the_fixtures_exist() -> None:
    assert len(KEYS) >= 10


@pytest.mark.parametrize("block", [trace_module.BLOCK_BYTES, 4096])
@pytest.mark.parametrize("key", KEYS)
def test_fixture_traces_give_the_same_profile(key: str, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "BLOCK_BYTES", block)
    meta = json.loads((FIXTURES / f"{key}.json").read_text())
    data = (FIXTURES / f"{key}.txt.gz").read_bytes()
    kw = {"metrics": meta["enabled_metrics"], "count": meta["called_function_count"]}
    ahead, plain = outcome(data, True, **kw), outcome(data, False, **kw)
    assert ahead == plain
    assert ahead.events > 0


def test_a_file_opened_with_gzip_open_gives_the_same_profile(tmp_path: Path) -> None:
    path = tmp_path / "t.txt.gz"
    path.write_bytes(gzip.compress(TRACE))
    with gzip.open(path, "rb") as a, gzip.open(path, "rb") as b:
        assert aggregate_trace(a, ["wt", "zm"], read_ahead=True) == aggregate_trace(b, ["wt", "zm"], read_ahead=False)


def test_members_and_zero_padding_are_read_as_gzip_reads_them() -> None:
    data = gzip.compress(TRACE[:30]) + b"\x00" * 5 + gzip.compress(TRACE[30:]) + b"\x00" * 3
    ahead = outcome(data, True)
    assert ahead == outcome(data, False)
    assert ahead.events == 4


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[: len(d) // 2],  # truncated inside the deflate stream
        lambda d: d[:-5],  # truncated inside the trailer
        lambda d: d[:-8] + bytes([d[-8] ^ 1]) + d[-7:],  # CRC
        lambda d: d[:-4] + bytes([d[-4] ^ 1]) + d[-3:],  # length
        lambda d: d + b"junk",  # not a member after the last one
        lambda d: d[:20] + bytes([d[20] ^ 0xFF]) + d[21:],  # a corrupt deflate stream
        lambda d: b"plain text",  # not gzip at all
    ],
    ids=["truncated", "truncated-trailer", "crc", "length", "trailing-junk", "corrupt", "not-gzip"],
)
def test_a_damaged_gzip_raises_the_same_error(damage: Any) -> None:
    big = TRACE.replace(b"[functions]", b"".join(b"1 1 1 1\n1 0 2 2\n" for _ in range(20_000)) + b"[functions]")
    data = damage(gzip.compress(big))
    ahead = outcome(data, True)
    assert isinstance(ahead, tuple)
    assert ahead == outcome(data, False)


def test_the_large_fixture_truncated_raises_what_it_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "BLOCK_BYTES", 64 * 1024)  # many blocks before the cut
    key = "spx-full-20261122_030648-vm-31172-1804289383"
    meta = json.loads((FIXTURES / f"{key}.json").read_text())
    data = (FIXTURES / f"{key}.txt.gz").read_bytes()[:600_000]
    kw = {"metrics": meta["enabled_metrics"], "count": meta["called_function_count"]}
    ahead = outcome(data, True, **kw)
    assert ahead == (EOFError, "Compressed file ended before the end-of-stream marker was reached")
    assert ahead == outcome(data, False, **kw)


def test_plain_streams_and_half_read_gzips_take_the_plain_read_path() -> None:
    assert outcome(TRACE, True, open_as_gzip=False) == outcome(TRACE, False, open_as_gzip=False)
    source = gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(b"x" + TRACE)), mode="rb")
    assert source.read(1) == b"x"
    assert not readahead._fresh_gzip(source)
    assert aggregate_trace(source, ["wt", "zm"]) == outcome(gzip.compress(TRACE), False)


def test_a_consumer_that_stops_early_leaves_no_thread_behind() -> None:
    before = threading.active_count()
    blocks = readahead.blocks(gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(b"y" * 100_000)), mode="rb"), 1000)
    assert next(blocks) == b"y" * 1000
    blocks.close()
    assert threading.active_count() == before
