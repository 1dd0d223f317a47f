"""`python -m shared.perf digest FILE... [--format json|md]`: analyse slow logs without the server (for CI jobs)."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from shared.perf.slowlog.aggregate import digest
from shared.perf.slowlog.parser import parse


def _open(path: Path) -> BinaryIO:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")  # type: ignore[return-value]


def _entries(paths: list[Path]):  # type: ignore[no-untyped-def]
    for path in paths:
        with _open(path) as stream:
            yield from parse(stream)


def markdown(report: dict[str, Any], top: int) -> str:
    lines = [
        "# Slow query digest",
        "",
        f"{report['entries']} statements in {report['classes']} classes, {report['query_time_total']:.3f} s of query time.",
        "",
        "| rank | share | calls | total s | p95 s | max s | rows examined (avg) | class |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report["ranked"][:top]:
        q = c["query_time"]
        fp = c["fingerprint"].replace("|", "\\|")[:120]
        lines.append(f"| {c['rank']} | {c['share_of_time']:.1%} | {c['count']} | {q['sum']:.3f} | {q['p95']:.3f} | {q['max']:.3f} | {c['rows_examined']['avg']:.0f} | `{fp}` |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shared.perf", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("digest", help="aggregate MySQL/MariaDB slow logs (plain or gzip) by query class")
    d.add_argument("files", nargs="+", type=Path)
    d.add_argument("--format", choices=["json", "md"], default="json")
    d.add_argument("--top", type=int, default=20, help="classes in the Markdown table")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        print(f"not a file: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        report = digest(_entries(args.files))
    except (EOFError, OSError, gzip.BadGzipFile) as exc:
        # Truncated or corrupt gzip, unreadable file: say which, never a traceback.
        print(f"cannot read the input: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(report, indent=1) + "\n" if args.format == "json" else markdown(report, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
