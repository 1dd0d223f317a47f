"""Perf analysis without the server, for CI jobs.

python -m shared.perf digest SLOW.log [more.log.gz ...] [--format json|md] [--top N]
    slow-log classes as pt-query-digest groups them;
python -m shared.perf analyze FILE... [--format json|md] [--top-n N] [--thresholds JSON] [--out DIR]
        [--fail-on P0|P1|P2]
    SPX pairs, slow logs and collector-v1 timings -> the analysis.run JSON or the report.export Markdown,
    the same as the tools give (same snapshot and report ids); --out also writes the report files and
    charts; --fail-on exits 3 when a finding of that severity or worse exists (a CI gate).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shared.core.errors import ValidationFailed
from shared.perf.parsers.slowlog.parallel import digest_files
from shared.perf.parsers.slowlog.parser import SlowEntry, open_log, parse


def _entries(paths: list[Path]) -> Iterator[SlowEntry]:
    for path in paths:
        with open_log(path) as stream:
            yield from parse(stream)


def markdown(report: dict[str, Any], top: int) -> str:
    lines = [
        "# Slow query digest",
        "",
        (
            f"{report['entries']} statements in {report['classes']} classes, "
            f"{report['query_time_total']:.3f} s of query time."
        ),
        "",
        "| rank | share | calls | total s | p95 s | max s | rows examined (avg) | class |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report["ranked"][:top]:
        q = c["query_time"]
        fp = c["fingerprint"].replace("|", "\\|")[:120]
        lines.append(
            f"| {c['rank']} | {c['share_of_time']:.1%} | {c['count']} | {q['sum']:.3f} | {q['p95']:.3f} "
            f"| {q['max']:.3f} | {c['rows_examined']['avg']:.0f} | `{fp}` |"
        )
    return "\n".join(lines) + "\n"


def analyze(args: argparse.Namespace) -> int:
    from shared.perf.analysis.ranking import analyze as run_analysis
    from shared.perf.analysis.report import render
    from shared.perf.artifacts import LocalArtifact, hash_file
    from shared.perf.models import ArtifactRef
    from shared.perf.parsers.snapshot import build

    artifacts = [LocalArtifact(ArtifactRef(path=str(p.resolve())), p.resolve(), *hash_file(p)) for p in args.files]
    try:
        thresholds = json.loads(args.thresholds) if args.thresholds else None
        built, _ = build(artifacts)
        result = run_analysis(built.content, built.snapshot_id, top_n=args.top_n, thresholds=thresholds)
    except json.JSONDecodeError as exc:
        print(f"--thresholds is not JSON: {exc}", file=sys.stderr)
        return 2
    except ValidationFailed as exc:
        print(f"cannot analyse: {exc.message}", file=sys.stderr)
        for item in exc.details.get("results", []):
            if not item["ok"]:
                print(f"  {item['path']}: {'; '.join(item['errors'])}", file=sys.stderr)
        return 2
    rendered = render(built.content, result, built.flamegraphs)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"report_{rendered.report_id}.md").write_text(rendered.markdown)
        (args.out / f"report_{rendered.report_id}.json").write_text(
            json.dumps(rendered.report, indent=1, sort_keys=True)
        )
        for name, svg in rendered.charts.items():
            (args.out / name).write_text(svg)
    sys.stdout.write(json.dumps(result, indent=1) + "\n" if args.format == "json" else rendered.markdown)
    if args.fail_on:
        worst = [f for f in result["findings"] if f["severity"] <= args.fail_on]  # "P0" < "P1" < "P2"
        if worst:
            print(f"{len(worst)} finding(s) at {args.fail_on} or worse", file=sys.stderr)
            return 3
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shared.perf", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("digest", help="aggregate MySQL/MariaDB slow logs (plain or gzip) by query class")
    d.add_argument("files", nargs="+", type=Path)
    d.add_argument("--format", choices=["json", "md"], default="json")
    d.add_argument("--top", type=int, default=20, help="classes in the Markdown table")
    a = sub.add_parser("analyze", help="SPX pairs, slow logs and timings -> analysis JSON or report Markdown")
    a.add_argument("files", nargs="+", type=Path)
    a.add_argument("--format", choices=["json", "md"], default="md")
    a.add_argument("--top-n", type=int, default=None, help="items ranked per metric (1..20, default 5)")
    a.add_argument("--thresholds", help='JSON, e.g. \'{"span_self_ms": {"P0": 700, "P1": 280, "P2": 90}}\'')
    a.add_argument("--out", type=Path, help="also write report_<id>.md/.json and the SVG charts here")
    a.add_argument(
        "--fail-on", choices=["P0", "P1", "P2"], help="exit 3 when a finding at this severity or worse exists"
    )
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        print(f"not a file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.command == "analyze":
        return analyze(args)
    try:
        report = digest_files(args.files)  # large logs on two cores: the same report as one pass
    except (EOFError, OSError, gzip.BadGzipFile) as exc:
        # Truncated or corrupt gzip, unreadable file: say which, never a traceback.
        print(f"cannot read the input: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(report, indent=1) + "\n" if args.format == "json" else markdown(report, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
