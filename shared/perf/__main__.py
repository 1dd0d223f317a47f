"""Perf analysis without the server, for CI jobs.

python -m shared.perf digest SLOW.log [more.log.gz ...] [--format json|md] [--top N]
    slow-log classes as pt-query-digest groups them;
python -m shared.perf analyze FILE... [--format json|md] [--top-n N] [--thresholds JSON] [--out DIR]
        [--fail-on P0|P1|P2]
    SPX pairs, slow logs and collector-v1 timings -> the analysis.run JSON or the report.export Markdown,
    the same as the tools give (same snapshot and report ids); --out also writes the report files and
    charts and each SPX profile as speedscope JSON and collapsed stacks; --fail-on exits 3 when a finding of
    that severity or worse exists (a CI gate).
python -m shared.perf snapshot FILE... --out SNAPSHOT.json
    the normalised snapshot of SPX pairs, slow logs and timings: {"content", "snapshot_id", "flamegraphs"};
python -m shared.perf compare --baseline FILE... --candidate FILE... [--format json|md] [--options JSON]
        [--out DIR] [--fail-on P0|P1|P2]
    did the candidate get slower? Each side is artifact files (as analyze takes) or one SNAPSHOT.json;
    --out writes report_<id>.md/.json with the diff chart and differential flame graphs; --fail-on exits 3
    when a change of that grade or worse exists.
Exit codes: 0 done, 2 bad input (the reason on stderr), 3 the --fail-on gate tripped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from shared.core.errors import ValidationFailed
from shared.perf.analysis.compare import compare, worst_severity
from shared.perf.analysis.compare_charts import flame_pairs, merged_pair, render_report
from shared.perf.analysis.ranking import analyze as run_analysis
from shared.perf.analysis.report import render
from shared.perf.artifacts import LocalArtifact, hash_file
from shared.perf.models import ArtifactRef
from shared.perf.parsers.slowlog.parallel import digest_files
from shared.perf.parsers.snapshot import SCHEMA, build


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


def _write_report(out: Path, report_id: str, markdown: str, report: dict[str, Any], charts: dict[str, str]) -> None:
    """report_<id>.md and .json and the SVG charts, as report.export stores them."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"report_{report_id}.md").write_text(markdown)
    (out / f"report_{report_id}.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    for name, svg in charts.items():
        (out / name).write_text(svg)


def _local_artifacts(paths: list[Path]) -> list[LocalArtifact]:
    """Files on this machine as the snapshot builder takes them (hashed, read where they are)."""
    return [LocalArtifact(ArtifactRef(path=str(p.resolve())), p.resolve(), *hash_file(p)) for p in paths]


def analyze(args: argparse.Namespace) -> int:
    artifacts = _local_artifacts(args.files)
    try:
        thresholds = json.loads(args.thresholds) if args.thresholds else None
        built, _ = build(artifacts)
        _warn_skipped(built)
        result = run_analysis(built.content, built.snapshot_id, top_n=args.top_n, thresholds=thresholds)
    except json.JSONDecodeError as exc:
        print(f"--thresholds is not JSON: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print("--thresholds is nested too deeply", file=sys.stderr)
        return 2
    except ValidationFailed as exc:
        return _cannot("cannot analyse", exc)
    rendered = render(built.content, result, built.flamegraphs)
    if args.out:
        _write_report(args.out, rendered.report_id, rendered.markdown, rendered.report, rendered.charts)
        for i, key in enumerate(sorted(built.speedscopes)):
            # Each SPX profile as speedscope JSON (https://www.speedscope.app) beside its collapsed stacks.
            (args.out / f"profile_{i + 1}.speedscope.json").write_text(json.dumps(built.speedscopes[key]))
            (args.out / f"profile_{i + 1}.collapsed.txt").write_text(built.flamegraphs[key])
    sys.stdout.write(json.dumps(result, indent=1) + "\n" if args.format == "json" else rendered.markdown)
    if args.fail_on:
        worst = [f for f in result["findings"] if f["severity"] <= args.fail_on]  # "P0" < "P1" < "P2"
        if worst:
            print(f"{len(worst)} finding(s) at {args.fail_on} or worse", file=sys.stderr)
            return 3
    return 0


def _compare_commands(sub: Any) -> None:
    s = sub.add_parser("snapshot", help="SPX pairs, slow logs and timings -> a snapshot file for compare")
    s.add_argument("files", nargs="+", type=Path)
    s.add_argument("--out", type=Path, required=True, help="the SNAPSHOT.json to write")
    c = sub.add_parser("compare", help="baseline vs candidate (artifacts or SNAPSHOT.json each) -> graded changes")
    c.add_argument("--baseline", nargs="+", type=Path, required=True)
    c.add_argument("--candidate", nargs="+", type=Path, required=True)
    c.add_argument("--format", choices=["json", "md"], default="md")
    c.add_argument(
        "--options", help='JSON, e.g. \'{"min_samples": 10, "rules": {"ttfb_p95_ms": {"P1": {"relative": 0.3}}}}\''
    )
    c.add_argument(
        "--out", type=Path, help="also write report_<id>.md/.json, the diff chart and differential flame graphs here"
    )
    c.add_argument("--fail-on", choices=["P0", "P1", "P2"], help="exit 3 when a change at this grade or worse exists")


def _cannot(what: str, exc: ValidationFailed) -> int:
    print(f"{what}: {exc.message}", file=sys.stderr)
    for item in exc.details.get("results", []):
        if not item["ok"]:
            print(f"  {item['path']}: {'; '.join(item['errors'])}", file=sys.stderr)
        elif item["metadata"].get("warnings"):
            print(f"  {item['path']}: {'; '.join(item['metadata']['warnings'])}", file=sys.stderr)
    return 2


def _warn_skipped(built: Any) -> None:
    for skipped in built.skipped:
        print(f"skipped {skipped.name}: {skipped.reason}", file=sys.stderr)


def _snapshot_file(path: Path) -> tuple[dict[str, Any], dict[str, str]] | None:
    """(content, flame graphs) of a file `snapshot` wrote, or None when the file is not one (an artifact)."""
    if path.suffix != ".json" or path.stat().st_size > 512 * 1024 * 1024:
        return None
    try:
        doc = json.loads(path.read_bytes())
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        return None
    content = doc.get("content") if isinstance(doc, dict) else None
    if not (isinstance(content, dict) and content.get("schema") == SCHEMA):
        return None
    flames = doc.get("flamegraphs")
    valid = isinstance(flames, dict) and all(isinstance(v, str) for v in flames.values())
    return content, flames if valid else {}


def _side(paths: list[Path]) -> tuple[dict[str, Any], dict[str, str]]:
    """One side of a comparison, (content, collapsed stacks per profile): one SNAPSHOT.json, or artifacts built
    into a snapshot (ValidationFailed if bad)."""
    saved = _snapshot_file(paths[0]) if len(paths) == 1 else None
    if saved is not None:
        return saved
    built = build(_local_artifacts(paths))[0]
    _warn_skipped(built)
    return built.content, built.flamegraphs


def snapshot_command(args: argparse.Namespace) -> int:
    artifacts = _local_artifacts(args.files)
    try:
        built, _ = build(artifacts)
    except ValidationFailed as exc:
        return _cannot("cannot build the snapshot", exc)
    _warn_skipped(built)
    doc = {"content": built.content, "snapshot_id": built.snapshot_id, "flamegraphs": built.flamegraphs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, sort_keys=True))
    print(built.snapshot_id)
    return 0


def compare_command(args: argparse.Namespace) -> int:
    try:
        options = json.loads(args.options) if args.options else None
    except (ValueError, RecursionError) as exc:
        print(f"--options is not JSON: {exc}", file=sys.stderr)
        return 2
    sides = []
    for name, paths in (("baseline", args.baseline), ("candidate", args.candidate)):
        try:
            sides.append(_side(paths))
        except ValidationFailed as exc:
            return _cannot(f"cannot read the {name}", exc)
    (base, base_flames), (cand, cand_flames) = sides
    try:
        comparison = compare(base, cand, options)
        merged = [merged_pair(p, base_flames, cand_flames) for p in flame_pairs(base, cand)]
        rendered = render_report(comparison, merged)
    except ValidationFailed as exc:
        return _cannot("cannot compare", exc)
    # A hand-edited SNAPSHOT.json: wrong types, Infinity where a count goes, nesting past Python's depth.
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError, IndexError, RecursionError) as exc:
        print(
            f"cannot compare: a snapshot file lacks what `snapshot` writes ({type(exc).__name__}: {str(exc)[:200]})",
            file=sys.stderr,
        )
        return 2
    if args.out:
        # The same files report.export writes for a comparison: report_<id>.md/.json and its SVG charts.
        _write_report(args.out, rendered.report_id, rendered.markdown, rendered.report, rendered.charts)
    sys.stdout.write(json.dumps(comparison, indent=1) + "\n" if args.format == "json" else rendered.markdown)
    worst = worst_severity(comparison)
    if args.fail_on and worst is not None and worst <= args.fail_on:  # "P0" < "P1" < "P2"
        print(f"a change at {worst} (--fail-on {args.fail_on})", file=sys.stderr)
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
    a.add_argument(
        "--out",
        type=Path,
        help="also write report_<id>.md/.json, the SVG charts and profile_N.speedscope.json/.collapsed.txt here",
    )
    a.add_argument(
        "--fail-on", choices=["P0", "P1", "P2"], help="exit 3 when a finding at this severity or worse exists"
    )
    _compare_commands(sub)
    args = parser.parse_args(argv)
    given = args.baseline + args.candidate if args.command == "compare" else args.files
    missing = [str(p) for p in given if not p.is_file()]
    if missing:
        print(f"not a file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.command == "analyze":
        return analyze(args)
    if args.command == "snapshot":
        return snapshot_command(args)
    if args.command == "compare":
        return compare_command(args)
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
