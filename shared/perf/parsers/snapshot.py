"""Validated artifacts → one normalised snapshot: endpoints, queries, spans (and the SPX profiles behind them).

Runs synchronously on local files (the service calls it in a worker thread). The snapshot id is the
SHA-256 of the canonical JSON of the content (sorted keys, no whitespace, numbers rounded to 3
decimals), and the content holds only what the inputs determine (their SHA-256s, never names, times
or hints), so the same inputs always give the same id. Sizes are bounded: MAX_QUERIES classes,
SPANS_PER_PROFILE functions per profile (the top ones by self and by total time).

For advice (analysis/*_advice.py) spans keep their `top_callers` (calls per caller) beside `top_callees`
(inclusive time per callee, nested same-pair calls counted once: parsers/spx/edges.py) and, when the
profile recorded SPX's `ct`, `cpu_self_ms`/`cpu_total_ms` (else None); profiles say whether SPX recorded
internal functions (`builtins`); query classes keep `signals` (parsers/slowlog/signals.py); and
`slow_log_servers` lists the flavour and version of the servers that wrote the slow logs. SPX halves
without their pair are skipped (`Built.skipped`) and are not among the `inputs`.

For comparisons (analysis.compare needs confidence intervals) each endpoint keeps its raw samples,
`samples_ms: {"ttfb": [...], "total": [...], "wall": [...]}` (sorted; a phase with more than
MAX_SAMPLES values keeps MAX_SAMPLES evenly spaced order statistics, min and max included), and each
query class its Query_time histogram, `query_time_histogram: [[upper_ms, count], ...]` (the
aggregator's 5 %-wide log buckets, ascending) and the range of its rows examined (`rows_examined_min`,
`rows_examined_max`: with the average they bound its confidence interval).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.core.errors import ValidationFailed
from shared.perf.artifacts import LocalArtifact
from shared.perf.parsers.detect import Detection, detect, pair_spx
from shared.perf.parsers.slowlog.aggregate import bucket_upper_ms, digest
from shared.perf.parsers.slowlog.parser import MAX_STATEMENT_BYTES, SlowEntry, open_log
from shared.perf.parsers.slowlog.parser import parse as parse_slowlog
from shared.perf.parsers.spx import metadata as spx_metadata
from shared.perf.parsers.spx.edges import call_edges
from shared.perf.parsers.spx.export import collapsed, speedscope
from shared.perf.parsers.spx.trace import SpxProfile, TraceFormatError, aggregate_trace
from shared.perf.parsers.timings import TimingSample, TimingsFile, aggregate_timings, percentile

SCHEMA = "firebreak-perf-snapshot-v1"
MAX_QUERIES = 500
SPANS_PER_PROFILE = 100
TOP_CALLEES = 3
MAX_SAMPLES = 2000  # per endpoint and phase
SAMPLE_PHASES = ("ttfb", "total")  # the timing phases whose samples are kept (wall comes from SPX)
_NS_PER_MS = 1_000_000


def validate(artifacts: list[LocalArtifact]) -> list[Detection]:
    """One detection per artifact, SPX halves paired; fetch errors (missing blob, bad name) included."""
    detections = []
    for a in artifacts:
        if not a.readable:
            detections.append(Detection(a.name, False, "unknown", None, [a.error or "not readable"]))
            continue
        try:
            detections.append(detect(a.name, a.size, a.open))
        except OSError as exc:  # a blob removed while it was being read
            detections.append(Detection(a.name, False, "unknown", None, [f"cannot read: {str(exc)[:200]}"]))
    return pair_spx(detections)


def _short_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def _r(value: float) -> float:
    return round(float(value), 3)


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "p50": _r(percentile(values, 0.5)),
        "p95": _r(percentile(values, 0.95)),
        "max": _r(max(values)),
        "count": len(values),
    }


def kept_samples(values: list[float]) -> list[float]:
    """Sorted and rounded; beyond MAX_SAMPLES, evenly spaced order statistics (deterministic, min and max kept)."""
    ordered = sorted(_r(v) for v in values)
    n = len(ordered)
    if n <= MAX_SAMPLES:
        return ordered
    return [ordered[round(i * (n - 1) / (MAX_SAMPLES - 1))] for i in range(MAX_SAMPLES)]


def _timing_samples(samples: list[TimingSample]) -> dict[str, dict[str, list[float]]]:
    """Per endpoint, each kept phase's values, chosen as aggregate_timings chooses them (no warm-up, no error)."""
    out: dict[str, dict[str, list[float]]] = {}
    for s in samples:
        if s.warmup or s.error:
            continue
        slot = out.setdefault(f"{s.method} {s.url_path.split('?', 1)[0]}", {})
        for phase in SAMPLE_PHASES:
            value = getattr(s.timings_ms, phase)
            if value is not None:
                slot.setdefault(phase, []).append(value)
    return out


def canonical(content: Any) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


def snapshot_id(content: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(content)).hexdigest()


@dataclass
class Skipped:
    name: str
    reason: str


@dataclass
class Built:
    content: dict[str, Any]
    snapshot_id: str
    flamegraphs: dict[str, str] = field(default_factory=dict)  # profile key -> collapsed stacks
    speedscopes: dict[str, dict[str, Any]] = field(default_factory=dict)  # profile key -> speedscope JSON
    skipped: list[Skipped] = field(default_factory=list)  # usable artifacts left out (SPX halves without a pair)


def _invalid(name: str, problem: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        name,
        problem,
        f"{name}: {problem}",
        suggestions=[
            "Run artifacts.validate on the same artifacts to see each one's status, fix or drop the failing one."
        ],
    )


def _local_file(item: LocalArtifact) -> Path:
    """The artifact's local file: ingest fetches every artifact to disk before the snapshot is built."""
    if item.file is None:
        raise _invalid(item.name, "the artifact was not fetched to a local file")
    return item.file


def _profile(meta_item: LocalArtifact, trace_item: LocalArtifact) -> tuple[dict[str, Any], SpxProfile]:
    try:
        meta = json.loads(_local_file(meta_item).read_bytes())
        wrong = spx_metadata.problems(meta) if isinstance(meta, dict) else ["not a JSON object"]
        if wrong:
            raise _invalid(meta_item.name, "; ".join(wrong))
        with gzip.open(_local_file(trace_item), "rb") as f:
            profile = aggregate_trace(f, list(meta["enabled_metrics"]), meta.get("called_function_count"))
    except TraceFormatError as exc:
        raise _invalid(trace_item.name, f"SPX trace is inconsistent: {exc}") from None
    except (EOFError, OSError, zlib.error, ValueError, KeyError) as exc:
        raise _invalid(trace_item.name, f"SPX pair cannot be read: {type(exc).__name__}: {str(exc)[:200]}") from None
    return meta, profile


def _top(edges: dict[int, Any], n: int) -> list[tuple[int, Any]]:
    return sorted(edges.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _cpu_ms(f: Any, ct: int | None) -> dict[str, float | None]:
    """A function's CPU time (SPX's `ct`) beside its wall time, or None when the profile did not record ct."""
    if ct is None:
        return {"cpu_self_ms": None, "cpu_total_ms": None}
    return {"cpu_self_ms": _r(f.exclusive[ct] / _NS_PER_MS), "cpu_total_ms": _r(f.inclusive[ct] / _NS_PER_MS)}


def _spx_part(meta: dict[str, Any], profile: SpxProfile, sha: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    metrics = profile.metrics
    wt = metrics.index("wt") if "wt" in metrics else None
    is_http = not meta.get("cli") and meta.get("http_method") not in (None, "n/a")
    path = str(meta.get("http_request_uri") or "").split("?", 1)[0]  # query strings may hold secrets: never kept
    key = str(meta.get("key") or sha[:16])
    roots = {profile.tree[c].fn for c in profile.tree[0].children.values()}
    info = {
        "key": key,
        "kind": "http" if is_http else "cli",
        "endpoint": f"{meta.get('http_method')} {path}" if is_http else None,
        "command": None if is_http else str(meta.get("cli_command_line") or ""),
        "wall_ms": _r(profile.wall_time_ns / _NS_PER_MS),
        "events": profile.events,
        "max_depth": profile.max_depth,
        "function_count": sum(1 for f in profile.functions if f.calls),
        "enabled_metrics": metrics,
        "repaired_lines": profile.repaired_lines,
        "tree_truncated": profile.tree_truncated,
        # SPX names internal functions only with SPX_BUILTINS=1, and then always adds these pseudo-functions.
        "builtins": any(f.name.startswith("::") for f in profile.functions if f.calls),
        "trace_sha256": sha,
    }
    if wt is None:
        return info, []
    edges = call_edges(profile, wt)
    ct = metrics.index("ct") if "ct" in metrics else None
    index = {f.name: i for i, f in enumerate(profile.functions)}
    called = [f for f in profile.functions if f.calls]
    by_self = sorted(called, key=lambda f: (-f.exclusive[wt], f.name))[:SPANS_PER_PROFILE]
    by_total = sorted(called, key=lambda f: (-f.inclusive[wt], f.name))[:SPANS_PER_PROFILE]
    chosen = {f.name: f for f in by_self + by_total}
    spans = []
    for name in sorted(chosen):
        f = chosen[name]
        fn = index[name]
        spans.append(
            {
                "span_id": _short_id(key, name),
                "profile": key,
                "function": name,
                "calls": f.calls,
                "self_ms": _r(f.exclusive[wt] / _NS_PER_MS),
                "total_ms": _r(f.inclusive[wt] / _NS_PER_MS),
                "max_recursion": f.max_recursion,
                "is_root": fn in roots,
                "share_of_wall": _r(f.inclusive[wt] / profile.wall_time_ns) if profile.wall_time_ns else 0.0,
                "top_callees": [
                    {"function": profile.functions[c].name, "total_ms": _r(t / _NS_PER_MS)}
                    for c, t in _top(edges.callees.get(fn, {}), TOP_CALLEES)
                ],
                "top_callers": [
                    {"function": profile.functions[c].name, "calls": n}
                    for c, n in _top(edges.callers.get(fn, {}), TOP_CALLEES)
                ],
                **_cpu_ms(f, ct),
                "metrics": {
                    m: {"inclusive": _r(f.inclusive[k]), "exclusive": _r(f.exclusive[k])}
                    for k, m in enumerate(metrics)
                    if m not in ("wt", "ct", "it")
                },
            }
        )
    return info, spans


def _queries(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for c in report["ranked"][:MAX_QUERIES]:
        q = c["query_time"]
        out.append(
            {
                "query_id": _short_id(c["fingerprint"]),
                "fingerprint": c["fingerprint"],
                "count": c["count"],
                "total_time_ms": _r(q["sum"] * 1000),
                "avg_ms": _r(q["avg"] * 1000),
                "p95_ms": _r(q["p95"] * 1000),
                "max_ms": _r(q["max"] * 1000),
                "lock_time_ms": _r(c["lock_time"]["sum"] * 1000),
                "rows_examined_avg": _r(c["rows_examined"]["avg"]),
                "rows_sent_avg": _r(c["rows_sent"]["avg"]),
                "share_of_time": c["share_of_time"],
                "databases": c["databases"],
                "users": c["users"],
                "first_seen": c["first_seen"],
                "last_seen": c["last_seen"],
                "worst_sample": {
                    "query": c["worst_sample"]["query"],
                    "query_time_ms": _r(c["worst_sample"]["query_time"] * 1000),
                },
                "truncated_statements": c["truncated_statements"],
                "signals": c.get("signals", {}),
                "rows_examined_min": _r(c["rows_examined"]["min"]),
                "rows_examined_max": _r(c["rows_examined"]["max"]),
                "query_time_histogram": [
                    [_r(bucket_upper_ms(int(b))), n] for b, n in c["query_time_histogram"].items()
                ],
            }
        )
    return out


def _endpoints(timing_samples: list[Any], profiles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    if timing_samples:
        for e in aggregate_timings(TimingsFile(format="collector-v1", samples=timing_samples)):
            method, path = e["endpoint"].split(" ", 1)
            key = f"{method} {path.split('?', 1)[0]}"
            phases = e["phases_ms"]
            merged[key] = {
                "endpoint": key,
                "samples": e["samples"],
                "errors": e["errors"],
                "error_rate": e["error_rate"],
                "statuses": e["statuses"],
                "ttfb_ms": phases.get("ttfb"),
                "total_ms": phases.get("total"),
                "phases_ms": phases,
                "wall_ms": None,
                "profiles": [],
                "sources": ["timings"],
            }
    walls: dict[str, list[float]] = {}
    for p in profiles:
        if p["endpoint"]:
            walls.setdefault(p["endpoint"], []).append(p["wall_ms"])
            slot = merged.setdefault(
                p["endpoint"],
                {
                    "endpoint": p["endpoint"],
                    "samples": 0,
                    "errors": 0,
                    "error_rate": 0.0,
                    "statuses": {},
                    "ttfb_ms": None,
                    "total_ms": None,
                    "phases_ms": {},
                    "wall_ms": None,
                    "profiles": [],
                    "sources": [],
                },
            )
            slot["profiles"].append(p["key"])
            if "spx" not in slot["sources"]:
                slot["sources"].append("spx")
    for key, values in walls.items():
        merged[key]["wall_ms"] = _stats(values)
    raw = _timing_samples(timing_samples)
    for key, slot in merged.items():
        slot["profiles"].sort()
        phases = raw.get(key, {})
        slot["samples_ms"] = {p: kept_samples(phases.get(p, [])) for p in SAMPLE_PHASES}
        slot["samples_ms"]["wall"] = kept_samples(walls.get(key, []))
    return [merged[k] for k in sorted(merged)]


def _unpaired(detections: list[Detection]) -> list[Skipped]:
    """The SPX halves without their pair, to leave out; a VALIDATION_ERROR when nothing else is left."""
    skipped = [
        Skipped(d.name, "; ".join(d.metadata.get("warnings") or ["SPX half without its pair"]))
        for d in detections
        if d.detected_type == "spx" and d.metadata.get("pair_status") == "partial"
    ]
    if skipped and len(skipped) == len(detections):
        raise ValidationFailed(
            f"nothing to ingest: all {len(detections)} artifact(s) are SPX halves without their pair: "
            + "; ".join(k.reason for k in skipped[:3]),
            details={"results": [d.to_dict() for d in detections]},
            recovery_suggestions=["Send each SPX profile as its pair: the metadata .json and the trace .txt.gz."],
        )
    return skipped


def build(
    artifacts: list[LocalArtifact], max_statement_bytes: int = MAX_STATEMENT_BYTES
) -> tuple[Built, list[Detection]]:
    """Strict: every artifact must validate (else VALIDATION_ERROR with each result), then parse and normalise.

    An SPX half without its other half (pair_status "partial") is skipped and listed in `Built.skipped`, the
    rest ingested; with nothing else to ingest it is a VALIDATION_ERROR. Skipped files are not among the
    snapshot's inputs, so they do not change its id. Slow-log statements keep `max_statement_bytes` (the
    setting perf_max_statement_bytes)."""
    detections = validate(artifacts)
    failed = [d for d in detections if not d.ok]
    if failed:
        raise ValidationFailed(
            f"{len(failed)} of {len(detections)} artifact(s) failed validation: "
            + "; ".join(f"{d.name}: {d.errors[0] if d.errors else 'invalid'}" for d in failed[:3]),
            details={"results": [d.to_dict() for d in detections]},
            recovery_suggestions=[
                (
                    "Fix or drop the failing artifacts (see details.results) and ingest again; "
                    "artifacts.validate shows the same results without ingesting."
                )
            ],
        )
    skipped = _unpaired(detections)
    left_out = {k.name for k in skipped}
    artifacts = [a for a in artifacts if a.name not in left_out]
    detections_used = [d for d in detections if d.name not in left_out]
    by_name = {a.name: a for a in artifacts}
    spx_halves: dict[str, dict[str, LocalArtifact]] = {}
    slowlogs, timing_samples = [], []
    for d in detections_used:
        item = by_name[d.name]
        if d.detected_type == "spx":
            spx_halves.setdefault(str(d.metadata["pair"]), {})[str(d.detected_version)] = item
        elif d.detected_type == "mysql_slow_log":
            slowlogs.append(item)
        elif d.detected_type == "ttfb_timings":
            try:
                timing_samples.extend(TimingsFile.model_validate_json(_local_file(item).read_bytes()).samples)
            except ValueError as exc:
                raise _invalid(item.name, f"collector-v1 timings do not match the format: {str(exc)[:300]}") from None
    profiles, spans, flames, speedscopes = [], [], {}, {}
    metas = {d.name: str(d.metadata.get("key")) for d in detections_used if d.detected_version == "spx-json-v2"}
    # In key order (then by trace content): the snapshot does not depend on the artifacts' names.
    for name in sorted(spx_halves, key=lambda n: (metas[n], spx_halves[n]["spx-text-gz-v1"].sha256)):
        pair = spx_halves[name]
        meta, profile = _profile(pair["spx-json-v2"], pair["spx-text-gz-v1"])
        info, profile_spans = _spx_part(meta, profile, pair["spx-text-gz-v1"].sha256)
        profiles.append(info)
        spans.extend(profile_spans)
        if "wt" in profile.metrics:
            flames[info["key"]] = collapsed(profile, "wt")
            label = info["endpoint"] or info["command"] or info["key"]
            speedscopes[info["key"]] = speedscope(profile, f"{label} ({info['key']})", "wt")

    def entries() -> Iterator[SlowEntry]:
        for item in sorted(slowlogs, key=lambda a: a.sha256):
            with open_log(_local_file(item)) as stream:
                yield from parse_slowlog(stream, max_statement_bytes)

    try:
        queries = _queries(digest(entries())) if slowlogs else []
    except (EOFError, OSError, zlib.error) as exc:
        raise _invalid(
            slowlogs[0].name if len(slowlogs) == 1 else "slow logs",
            f"cannot read: {type(exc).__name__}: {str(exc)[:200]}",
        ) from None
    servers = {
        (str(d.metadata.get("flavor") or "unknown"), str(d.metadata.get("server_version") or ""))
        for d in detections_used
        if d.detected_type == "mysql_slow_log"
    }
    content = {
        "schema": SCHEMA,
        "inputs": sorted({a.sha256 for a in artifacts}),
        # What wrote the slow logs: what Lock_time counts depends on it (row-lock waits from MySQL 8.0.28 on).
        "slow_log_servers": [{"flavor": f, "version": v or None} for f, v in sorted(servers)],
        "endpoints": _endpoints(timing_samples, profiles),
        "queries": queries,
        "spans": sorted(spans, key=lambda s: (s["profile"], s["function"])),
        "profiles": profiles,
    }
    return Built(content, snapshot_id(content), flames, speedscopes, skipped), detections
