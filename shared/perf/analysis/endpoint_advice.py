"""Advice for one endpoint (TTFB or wall/total time): which endpoint, which phase, and what its profile says.

Timings are cumulative from the request start, like curl's -w: `tls` (or `connect`) is when the connection
was ready, `ttfb` when the first byte came, `total` when the last did. In order:
- `ttfb_dominant`: this endpoint's p95 is at least DOMINANT times every other measured endpoint's, so it is
  *the* slow endpoint (for the wall/total metric: when its time to first byte is most of its total);
- `connection_setup`: DNS + connect + TLS is at least half the time to first byte;
- `slow_download`: at least half the total comes after the first byte (body size, streaming);
- `endpoint_profiled`: SPX profiles exist; the advice names the function with the most own time in them
  and what its rule found;
- `slow_server`: otherwise, the server's time before its first byte, to be profiled with SPX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.perf.analysis.advice import Advice, AdviceContext, ms
from shared.perf.analysis.span_advice import span_advice

DOMINANT = 2.0
_SHORT = {
    "n_plus_one": "N+1 queries or calls",
    "external_wait": "waiting on an external resource",
    "off_cpu_wait": "waiting, not computing",
    "cpu_bound": "CPU work in its own code",
    "likely_io": "probably waiting on I/O",
    "many_calls": "many cheap calls",
    "own_code": "its own code",
    "in_callees": "its callees",
}


def _p95(phases: dict[str, Any] | None) -> float | None:
    value = (phases or {}).get("p95")
    return float(value) if value is not None else None


def _value(e: dict[str, Any], metric: str) -> float | None:
    if metric == "endpoint_ttfb_ms":
        return _p95(e.get("ttfb_ms"))
    return _p95(e.get("wall_ms") or e.get("total_ms"))


def _top_span(e: dict[str, Any], ctx: AdviceContext) -> dict[str, Any] | None:
    """The function with the most own time in this endpoint's profiles (roots are the script, not a cause)."""
    keys = set(e.get("profiles") or [])
    spans = [s for (p, _), s in ctx.spans.items() if p in keys and not s.get("is_root")]
    return max(spans, key=lambda s: (float(s["self_ms"]), s["function"]), default=None)


def _profile_note(e: dict[str, Any], ctx: AdviceContext, facts: dict[str, Any]) -> str:
    top = _top_span(e, ctx)
    if top is None:
        return ""
    found = span_advice(top, "span_self_ms", ctx)
    facts["top_function"], facts["top_function_pattern"] = top["function"], found.pattern
    return (
        f" Its SPX profile spends the most own time in {top['function']} ({ms(float(top['self_ms']))}: "
        f"{_SHORT.get(found.pattern, found.pattern)}); see that function's finding."
    )


def endpoint_advice(e: dict[str, Any], metric: str, ctx: AdviceContext) -> Advice:
    """The advice for an endpoint graded on `metric` (endpoint_ttfb_ms or endpoint_wall_ms)."""
    name = e["endpoint"]
    value = _value(e, metric) or 0.0
    others = [
        (o["endpoint"], v) for o in ctx.endpoints if o["endpoint"] != name and (v := _value(o, metric)) is not None
    ]
    phases = e.get("phases_ms") or {}
    ttfb, total = _p95(e.get("ttfb_ms")), _p95(e.get("total_ms"))
    setup = _p95(phases.get("tls")) or _p95(phases.get("connect"))
    facts: dict[str, Any] = {"p95_ms": value, "ttfb_p95_ms": ttfb, "total_p95_ms": total, "setup_p95_ms": setup}
    label = "to first byte" if metric == "endpoint_ttfb_ms" else "in all"
    if others:
        worst_other = max(others, key=lambda ov: (ov[1], ov[0]))
        facts["next_endpoint"], facts["next_p95_ms"] = worst_other
        mostly_ttfb = metric == "endpoint_ttfb_ms" or (ttfb is not None and total and ttfb >= 0.8 * total)
        if mostly_ttfb and value >= DOMINANT * max(worst_other[1], 1e-9):
            return Advice(
                "ttfb_dominant",
                f"{name} is the slow endpoint: {ms(value)} {label} at p95, against at most {ms(worst_other[1])} "
                f"for the {len(others)} other endpoint(s) measured ({worst_other[0]}). The server spends it before "
                f"the first byte, so the cause is in {name}'s handling: profile that endpoint with SPX (or read its "
                "profile's findings) and fix it first." + _profile_note(e, ctx, facts),
                facts,
            )
    if metric == "endpoint_ttfb_ms" and ttfb and setup is not None and setup >= 0.5 * ttfb:
        return Advice(
            "connection_setup",
            f"Of {name}'s {ms(ttfb)} to first byte, {ms(setup)} is DNS, connect and TLS set-up: the network and "
            "connection, not the application. Reuse connections (keep-alive), resume TLS sessions, and measure "
            "from closer to the server.",
            facts,
        )
    if metric != "endpoint_ttfb_ms" and ttfb is not None and total and total - ttfb >= 0.5 * total:
        return Advice(
            "slow_download",
            f"{name} sends its first byte after {ms(ttfb)} but finishes after {ms(total)}: the body takes most of "
            "the time. Check the response size, compression and whether the server streams slowly (flushes, "
            "generation while sending).",
            facts,
        )
    note = _profile_note(e, ctx, facts)
    if note:
        return Advice("endpoint_profiled", f"{name} takes {ms(value)} {label} at p95.{note}", facts)
    return Advice(
        "slow_server",
        f"{name} takes {ms(value)} {label} at p95, most of it in the server before the first byte: profile this "
        "endpoint with SPX and ingest the profile to see where the time goes.",
        facts,
    )


def endpoint_rule(metric: str, ctx: AdviceContext) -> Callable[[dict[str, Any]], Advice]:
    return lambda e: endpoint_advice(e, metric, ctx)
