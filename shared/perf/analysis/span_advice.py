"""Advice for one SPX function (a span): where its time goes, decided from its numbers, then what to do.

The numbers first: own (self) time vs its callees' share of its total, calls per request (one SPX profile
is one request or command), time per call, and, when the profile recorded SPX's `ct`, how much of its own
time was on the CPU. Then, in order:
1. Most of the total in callees (span_total_ms with self < half): `in_callees`, naming the largest callee,
   its share, and what that callee waits on when it is one of PHP's waiting functions.
2. One of PHP's own waiting functions (curl_exec, PDOStatement::execute, usleep, fread, ...): mostly on
   the CPU (ct), or without ct 100+ calls under TINY_CALL_MS each, it did not wait (buffered reads,
   in-memory fetches): `cpu_bound`/`many_calls`; else many calls of a database/remote/cache one per
   request is `n_plus_one`, the rest `external_wait`.
3. `ct` recorded: own time mostly off the CPU is waiting (`off_cpu_wait`, or `n_plus_one` when it repeats
   N_PLUS_ONE_CALLS times or more), mostly on it is computing (`cpu_bound`), in between `own_code`.
4. No `ct`: a name that suggests the database, a remote service or a cache, called N_PLUS_ONE_CALLS times
   or more, is `n_plus_one` (said to rest on the name); fewer calls `likely_io`; a cheap function called
   MANY_CALLS times `many_calls`; the rest `own_code`, saying that waiting cannot be ruled out.
"""

from __future__ import annotations

from typing import Any

from shared.perf.analysis.advice import Advice, AdviceContext, ms, pct
from shared.perf.analysis.call_kinds import KIND_WAITS_ON, external_kind, is_connect, name_hint

N_PLUS_ONE_CALLS = 20  # per request: a page of 20 items each loading its own row is the classic N+1
MANY_CALLS = 1000
TINY_CALL_MS = 0.05  # a waiting call costs at least a system call and usually a round trip: more than this
OFF_CPU = 0.3  # own time with less than this share on the CPU is waiting
ON_CPU = 0.7  # own time with at least this share on the CPU is computing
_ROUND_TRIP_KINDS = ("database", "remote", "cache")
_NO_CT = (
    "This profile has no CPU time (SPX's default metrics are wt,zm), so waiting cannot be told from computing: "
    "re-profile with SPX_METRICS=wt,ct and SPX_BUILTINS=1 to see CPU time and the internal calls inside it."
)


def _shares(s: dict[str, Any]) -> dict[str, Any]:
    total, own = float(s["total_ms"]), float(s["self_ms"])
    calls = max(int(s["calls"]), 1)
    facts: dict[str, Any] = {
        "calls": int(s["calls"]),
        "self_ms": own,
        "total_ms": total,
        "self_share": round(own / total, 4) if total > 0 else 1.0,
        "callee_share": round(max(total - own, 0.0) / total, 4) if total > 0 else 0.0,
        "self_ms_per_call": round(own / calls, 4),
    }
    top = (s.get("top_callees") or [None])[0]
    if top:
        facts["top_callee"] = top["function"]
        facts["top_callee_ms"] = float(top["total_ms"])
        facts["top_callee_share"] = round(min(float(top["total_ms"]) / total, 1.0), 4) if total > 0 else 0.0
    cpu = s.get("cpu_self_ms")
    if cpu is not None and own > 0:
        facts["cpu_self_ms"] = float(cpu)
        facts["cpu_share"] = round(min(max(float(cpu) / own, 0.0), 1.0), 4)
    return facts


def loop_owner(s: dict[str, Any], ctx: AdviceContext) -> tuple[str, int, str, int] | None:
    """(direct caller, its calls of s, the function that loops, how many times it loops) or None.

    Up the busiest caller chain while each caller runs as often as it calls (a 1:1 wrapper), to the first
    caller that runs at most half as often as it calls: that is where the loop is."""
    callers = s.get("top_callers") or []
    if not callers:
        return None
    direct, direct_calls = callers[0]["function"], int(callers[0]["calls"])
    current, edge_calls = s, direct_calls
    for _ in range(12):
        top = (current.get("top_callers") or [None])[0]
        if top is None:
            return None
        parent = ctx.span(current["profile"], top["function"])
        edge_calls = int(top["calls"])
        if parent is None:
            return None
        if int(parent["calls"]) * 2 <= edge_calls:
            return direct, direct_calls, parent["function"], edge_calls
        current = parent
    return None


_WAITING = ("external_wait", "n_plus_one", "off_cpu_wait", "likely_io")
_COMPUTING = ("cpu_bound", "many_calls")


def _callees_advice(s: dict[str, Any], facts: dict[str, Any], ctx: AdviceContext) -> Advice:
    name, top = s["function"], facts.get("top_callee")
    text = (
        f"{pct(facts['callee_share'])} of {name}'s {ms(facts['total_ms'])} is in the functions it calls "
        f"(its own code: {ms(facts['self_ms'])}, {pct(facts['self_share'])})"
    )
    if top:
        text += f"; the largest is {top} with {ms(facts['top_callee_ms'])} ({pct(facts['top_callee_share'])})"
        # Down the largest-callee chain to the first function whose time is its own, and what its rule says.
        callee, chain = ctx.span(s["profile"], top), 0
        while callee is not None and chain < 12 and float(callee["self_ms"]) < 0.5 * float(callee["total_ms"]):
            below = (callee.get("top_callees") or [None])[0]
            callee, chain = (ctx.span(s["profile"], below["function"]) if below else None), chain + 1
        found = _own_time(callee["function"], _shares(callee), facts["request"], ctx, callee) if callee else None
        if found and callee:
            facts["time_ends_in"], facts["time_ends_in_pattern"] = callee["function"], found.pattern
            if chain:
                text += f", whose time is mostly in {callee['function']}"
        kind = (found.facts.get("kind") or found.facts.get("name_hint")) if found else external_kind(top)
        if found is not None and found.pattern == "n_plus_one":
            text += f": N+1, {found.facts['calls']:,} calls per request (see its finding)"
        elif (found is None or found.pattern in _WAITING) and kind in KIND_WAITS_ON:
            facts["top_callee_kind"] = kind
            text += f", which waits on {KIND_WAITS_ON[kind]}"
            if kind == "remote":
                text += ": a remote call (timeout, cache, parallel or asynchronous), not PHP code, is the cost"
        elif found is not None and found.pattern in _COMPUTING:
            text += ", which computes (see its finding)"
        text += ". Start with that callee's finding or the flame graph"
    return Advice("in_callees", text + ".", facts)


def _external_text(name: str, kind: str, facts: dict[str, Any], where: str) -> str:
    own, calls = facts["self_ms"], facts["calls"]
    cpu = f", {ms(facts['cpu_self_ms'])} of it on the CPU" if "cpu_self_ms" in facts else ""
    head = f"{name} waits on {KIND_WAITS_ON[kind]}: {ms(own)} in {where} over {calls:,} call(s){cpu}. "
    if kind == "sleep":
        return head + (
            "The request sleeps on purpose: find why (retry back-off, rate limiting, polling) and take the sleep "
            "off the request path or move the work to a queue. Faster code will not change it."
        )
    if kind == "remote":
        return head + (
            "The time is the remote service's response (or the network), not PHP: set connect and total timeouts, "
            "cache the responses, call services in parallel (curl_multi, an async client) or move the call off "
            "the request path (a queue); check the remote side's own latency."
        )
    if kind == "database":
        if is_connect(name):
            return head + (
                "Opening a database connection: reuse connections (persistent connections or a pooler) and check "
                "DNS and TLS set-up time to the server."
            )
        return head + (
            "Database time: the slow log's classes show which statements; fix those (EXPLAIN, indexes, fewer "
            "round trips) rather than the PHP code."
        )
    if kind == "cache":
        return head + "Cache round trips: fetch keys in one call (MGET, getMulti, pipelining) and keep values small."
    if kind == "session":
        return head + (
            "session_start blocks while another request of the same user holds the session file lock: call "
            "session_write_close() as soon as the session is no longer written."
        )
    if kind == "process":
        return head + "An external process runs inside the request: move it to a queue or cache its output."
    return head + (
        "Filesystem I/O: avoid re-reading the same files, buffer writes, and check for a slow or network filesystem."
    )


def _n_plus_one(name: str, facts: dict[str, Any], where: str, owner: Any, basis: str) -> Advice:
    calls, per_call = facts["calls"], facts["self_ms_per_call"]
    text = (
        f"{name} ran {calls:,} times in {where} ({ms(per_call)} each, {ms(facts['self_ms'])} together; "
        f"{pct(facts['self_share'])} of its time is its own, not its callees'). {basis}: one query or call per "
        "item, the N+1 pattern, or a slow database/service answering many small requests. "
    )
    if owner:
        direct, direct_calls, looper, loops = owner
        facts["direct_caller"], facts["loop_owner"] = direct, looper
        text += f"The calls come from {direct} ({direct_calls:,} of them)"
        text += f", looped by {looper} ({loops:,} calls). " if looper != direct else ", which issues them in a loop. "
    text += (
        "Fetch the rows in one query (WHERE id IN (...), a JOIN, the ORM's eager loading) or batch the calls, "
        "or cache the results; optimising the PHP code of this function will not help."
    )
    if per_call >= 5:
        text += (
            f" At {ms(per_call)} per call each one is also slow: check that statement in the slow log (EXPLAIN) "
            "and the round-trip time to the server."
        )
    return Advice("n_plus_one", text, facts)


def _own_time(name: str, facts: dict[str, Any], where: str, ctx: AdviceContext, s: dict[str, Any]) -> Advice:
    calls = facts["calls"]
    kind = external_kind(name)
    share = facts.get("cpu_share")
    if kind:
        facts["kind"] = kind
        per_call = facts["self_ms_per_call"]
        if kind != "sleep" and (
            (share is not None and share >= ON_CPU) or (share is None and per_call < TINY_CALL_MS and calls >= 100)
        ):
            # Buffered reads, fetches from a result already in memory, parsing: PHP's own work, not a wait.
            measured = f"{pct(share)} of it on the CPU" if share is not None else f"{ms(per_call)} per call"
            return Advice(
                "many_calls" if calls >= MANY_CALLS or share is None else "cpu_bound",
                f"{name} is one of PHP's {kind} functions, but its {ms(facts['self_ms'])} in {where} over "
                f"{calls:,} call(s) is not a wait ({measured}): it is work on data already in memory or in a buffer "
                "(parsing, copying). Call it less (read in bigger chunks, process fewer rows) rather than looking "
                f"at {KIND_WAITS_ON[kind]}.",
                facts,
            )
        if kind in _ROUND_TRIP_KINDS and calls >= N_PLUS_ONE_CALLS and not is_connect(name):
            return _n_plus_one(name, facts, where, loop_owner(s, ctx), f"{name} is PHP's own {kind} call")
        return Advice("external_wait", _external_text(name, kind, facts, where), facts)
    own = (
        f"{ms(facts['self_ms'])} of its own time in {where} "
        f"({pct(facts['self_share'])} of its total, {calls:,} call(s))"
    )
    if share is not None:
        cpu = f"only {ms(facts['cpu_self_ms'])} ({pct(share)}) of it on the CPU"
        if share < OFF_CPU:
            if calls >= N_PLUS_ONE_CALLS:
                basis = f"Each call mostly waits ({cpu})"
                return _n_plus_one(name, facts, where, loop_owner(s, ctx), basis)
            return Advice(
                "off_cpu_wait",
                f"{name} spends {own}, {cpu}: it waits, on I/O, a lock, a remote call or a sleep made through "
                "PHP's own functions, which SPX records separately only with SPX_BUILTINS=1 (re-profile with it to "
                "see which). Optimising its PHP code will not help; shorten or remove the wait (timeouts, caching, "
                "asynchronous work).",
                facts,
            )
        if share >= ON_CPU:
            many = (
                f" Each of its {calls:,} calls is cheap ({ms(facts['self_ms_per_call'])}): call it less (cache, hoist "
                "out of the loop, precompute) or make the per-call work smaller."
                if calls >= MANY_CALLS
                else " Profile its code (a better algorithm, less work per call, caching the result)."
            )
            return Advice(
                "cpu_bound",
                f"{name} computes: {own}, {pct(share)} of it on the CPU ({ms(facts['cpu_self_ms'])}). The time "
                f"is in its own code and the internal PHP functions it calls.{many}",
                facts,
            )
        return Advice(
            "own_code",
            f"{name} spends {own}, {pct(share)} of it on the CPU: partly computing, partly waiting. Re-profile "
            "with SPX_BUILTINS=1 to see the internal calls that wait, and look at its own code for the rest.",
            facts,
        )
    hint = name_hint(name)
    if hint:
        facts["name_hint"] = hint
    if hint in _ROUND_TRIP_KINDS and calls >= N_PLUS_ONE_CALLS:
        basis = f"Its name suggests {KIND_WAITS_ON[hint]}, and it repeats per request"
        advice = _n_plus_one(name, facts, where, loop_owner(s, ctx), basis)
        return Advice(advice.pattern, f"{advice.text} {_NO_CT}", advice.facts)
    if hint:
        return Advice(
            "likely_io",
            f"{name} spends {own}, and its name suggests it waits on {KIND_WAITS_ON[hint]}. SPX counts the time "
            f"of PHP's internal calls (curl, PDO, sleep) as the caller's own time unless SPX_BUILTINS=1. {_NO_CT}",
            facts,
        )
    if calls >= MANY_CALLS:
        return Advice(
            "many_calls",
            f"{name} spends {own}, {ms(facts['self_ms_per_call'])} per call: call it less (cache, hoist out of "
            f"loops, precompute) or make each call cheaper. {_NO_CT}",
            facts,
        )
    return Advice(
        "own_code",
        f"{name} spends {own}: the time is in its own code, including PHP's internal functions it calls (SPX "
        f"records those separately only with SPX_BUILTINS=1). {_NO_CT} If it computes, look at its algorithm "
        "and at caching its result.",
        facts,
    )


def span_advice(s: dict[str, Any], metric: str, ctx: AdviceContext) -> Advice:
    """The advice for a span graded on `metric` (span_self_ms or span_total_ms)."""
    name = s["function"]
    facts = _shares(s)
    where = ctx.request(s["profile"])
    facts["request"] = where
    if metric == "span_total_ms" and facts["self_share"] < 0.5 and facts["callee_share"] > 0:
        return _callees_advice(s, facts, ctx)
    return _own_time(name, facts, where, ctx, s)
