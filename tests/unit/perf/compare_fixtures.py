"""Copies of the real perf fixtures with one injected change (or split in two halves), written into tmp_path.

Each builder edits the artifact the way a slower (or repeated) run would have written it, so the
comparison sees ordinary artifacts through the real parsers and snapshot builder.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from shared.perf.artifacts import LocalArtifact, hash_file
from shared.perf.models import ArtifactRef
from shared.perf.parsers.slowlog.aggregate import class_key
from shared.perf.parsers.slowlog.fingerprint import fingerprint
from shared.perf.parsers.slowlog.parser import open_log, parse
from shared.perf.parsers.snapshot import build

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TIMINGS = FIXTURES / "perf" / "timings.json"
SMALL_LOG = FIXTURES / "slowlog" / "small.log"
SPX_DIR = FIXTURES / "spx"
FRAMEWORK = "spx-full-20261122_030646-vm-31168-1804289383"  # CLI framework.php, about 1.4 s
_QUERY_TIME = re.compile(rb"^# Query_time: (\d+(?:\.\d+)?)", re.MULTILINE)


def snapshot(paths: list[Path]) -> dict[str, Any]:
    """The snapshot content the service would build from these files."""
    artifacts = [LocalArtifact(ArtifactRef(path=str(p.resolve())), p.resolve(), *hash_file(p)) for p in paths]
    return build(artifacts)[0].content


def spx_pair(directory: Path, key: str) -> list[Path]:
    return [directory / f"{key}.json", directory / f"{key}.txt.gz"]


# --- timings (collector-v1) ---


def timings_scaled(tmp: Path, url_path: str, factor: float, source: Path = TIMINGS) -> Path:
    """A copy where every sample of `url_path` took `factor` times as long to its first and last byte."""
    doc = json.loads(source.read_text())
    for s in doc["samples"]:
        if s["url_path"] == url_path:
            for phase in ("ttfb", "total"):
                if s["timings_ms"].get(phase) is not None:
                    s["timings_ms"][phase] = round(s["timings_ms"][phase] * factor, 3)
    out = tmp / f"timings-{url_path.strip('/').replace('/', '_')}-x{factor}.json"
    out.write_text(json.dumps(doc))
    return out


def timings_halves(tmp: Path, source: Path = TIMINGS) -> tuple[Path, Path]:
    """The measured samples dealt alternately per endpoint into two files (warm-ups kept in both)."""
    doc = json.loads(source.read_text())
    halves: tuple[list[Any], list[Any]] = ([], [])
    seen: dict[str, int] = {}
    for s in doc["samples"]:
        if s.get("warmup"):
            halves[0].append(s)
            halves[1].append(s)
            continue
        i = seen.get(s["url_path"], 0)
        seen[s["url_path"]] = i + 1
        halves[i % 2].append(s)
    paths = (tmp / "timings-half-a.json", tmp / "timings-half-b.json")
    for path, samples in zip(paths, halves, strict=True):
        path.write_text(json.dumps({**doc, "samples": samples}))
    return paths


# --- slow logs ---


def _blocks(source: Path) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(the text before the first entry, [(class fingerprint, the entry's bytes)]) in file order."""
    raw = source.read_bytes()
    with open_log(source) as stream:
        entries = [(e.offset, class_key(fingerprint(e.query))) for e in parse(stream)]
    ends = [offset for offset, _ in entries[1:]] + [len(raw)]
    head = raw[: entries[0][0]] if entries else raw
    return head, [(fp, raw[start:end]) for (start, fp), end in zip(entries, ends, strict=True)]


def slowlog_classes(source: Path = SMALL_LOG) -> dict[str, int]:
    """Executions per class, counted from the log's entries."""
    counts: dict[str, int] = {}
    for fp, _ in _blocks(source)[1]:
        counts[fp] = counts.get(fp, 0) + 1
    return counts


def slowlog_scaled(tmp: Path, fp: str, factor: float, source: Path = SMALL_LOG) -> Path:
    """A copy where every execution of class `fp` has `factor` times its Query_time."""
    head, blocks = _blocks(source)

    def scale(match: re.Match[bytes]) -> bytes:
        return b"# Query_time: " + f"{float(match.group(1)) * factor:.6f}".encode()

    out = tmp / f"slow-x{factor}.log"
    out.write_bytes(head + b"".join(_QUERY_TIME.sub(scale, b, count=1) if f == fp else b for f, b in blocks))
    return out


def slowlog_halves(tmp: Path, source: Path = SMALL_LOG) -> tuple[Path, Path]:
    """The entries dealt into two logs by a hash of their position (both keep the server header).

    A pseudo-random deal, not alternation: a log of two connections taking turns would put each
    connection in its own half, and two connections are two workloads."""
    head, blocks = _blocks(source)
    halves: tuple[list[bytes], list[bytes]] = ([], [])
    for i, (_, block) in enumerate(blocks):
        halves[hashlib.sha256(str(i).encode()).digest()[0] % 2].append(block)
    paths = (tmp / "slow-half-a.log", tmp / "slow-half-b.log")
    for path, parts in zip(paths, halves, strict=True):
        path.write_bytes(head + b"".join(parts))
    return paths


# --- SPX ---


def spx_scaled(tmp: Path, function: str, factor: float, key: str = FRAMEWORK) -> list[Path]:
    """A copy of an SPX pair where `function`'s own (exclusive) wall time is `factor` times as long.

    Every interval between two events during which `function` is the running frame is stretched, and
    every later reading of the cumulative `wt` shifted by the time added so far; other metrics are kept."""
    meta = json.loads((SPX_DIR / f"{key}.json").read_text())
    wt = meta["enabled_metrics"].index("wt")
    text = gzip.decompress((SPX_DIR / f"{key}.txt.gz").read_bytes()).decode("ascii")
    events, functions = text.split("[functions]\n", 1)
    names = functions.splitlines()
    target = names.index(function)
    stack: list[int] = []
    previous = shift = 0
    out_lines = ["[events]"]
    for line in events.splitlines()[1:]:
        fields = line.split(" ")
        fn, start, value = int(fields[0]), fields[1] == "1", int(fields[2 + wt])
        if stack and stack[-1] == target:
            shift += round((value - previous) * (factor - 1))
        previous = value
        fields[2 + wt] = str(value + shift)
        out_lines.append(" ".join(fields))
        if start:
            stack.append(fn)
        else:
            stack.pop()
    meta["wall_time_ms"] = (previous + shift) // 1000  # SPX's field is in microseconds
    directory = tmp / f"spx-x{factor}"
    directory.mkdir(exist_ok=True)
    (directory / f"{key}.json").write_text(json.dumps(meta))
    (directory / f"{key}.txt.gz").write_bytes(
        gzip.compress(("\n".join(out_lines) + "\n[functions]\n" + functions).encode("ascii"))
    )
    return spx_pair(directory, key)
