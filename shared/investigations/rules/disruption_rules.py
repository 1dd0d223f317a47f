"""A drain that never finishes: a PodDisruptionBudget that allows no disruption (maxUnavailable 0, or minAvailable
equal to the replicas) refuses every eviction of its pods, so a cordoned node keeps them forever."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

_CORDONED = re.compile(r"(?im)^Unschedulable:\s+true|node\.kubernetes\.io/unschedulable|SchedulingDisabled")
_EVICTION_REFUSED = re.compile(r"(?i)violate the pod's disruption budget|disruption budget .{0,80}(?:needs|allows)")
_ALLOWED = re.compile(r"(?im)^[ \t]*(?:Allowed disruptions|disruptionsAllowed|\"disruptionsAllowed\"):\s*(\d+)")


def cordoned(describe: str) -> bool:
    """A node marked unschedulable (cordoned, as a drain does first)."""
    return bool(_CORDONED.search(describe[:100_000]))


def _blocking(ctx: Context) -> list[tuple[CallRecord, str, str, str]]:
    """(output, namespace, PDB name, the line that shows it) for each budget that allows no disruption."""
    found: list[tuple[CallRecord, str, str, str]] = []
    for s in ctx.seen:
        if s.kind != "PodDisruptionBudget" or s.rec.is_error:
            continue
        if s.role is Role.LIST:
            found += [
                (s.rec, row.get("NAMESPACE") or s.namespace or "", row.get("NAME"), row.line.strip())
                for row in parse.table(s.rec.output[:200_000])
                if row.get("ALLOWED DISRUPTIONS") == "0" and row.get("NAME")
            ]
        elif s.role is Role.DESCRIBE and (m := _ALLOWED.search(s.rec.output[:100_000])) and m.group(1) == "0":
            found.append((s.rec, s.namespace or "", s.name, m.group(0).strip()))
    return found


def drain_blocked(ctx: Context) -> list[Finding]:
    """A cordoned node (or refused evictions) and the budgets that allow no disruption."""
    node = next((s for s in ctx.seen if s.kind == "Node" and s.role is Role.DESCRIBE and cordoned(s.rec.output)), None)
    refused = next(
        ((rec, line) for rec in [*ctx.events, *ctx.gets] if (line := parse.line_matching(
            rec.output[:200_000], _EVICTION_REFUSED.pattern))),
        None,
    )  # fmt: skip
    if node is None and refused is None:
        return []
    out: list[Finding] = []
    for rec, ns, name, line in _blocking(ctx)[:3]:
        where = f"node {node.name} is cordoned for a drain" if node is not None else "evictions are refused"
        spec = parse.line_matching(rec.output[:100_000], r"(?i)max.?unavailable|min.?available") if rec else ""
        out.append(
            Finding(
                rule="drain_blocked",
                subject=name,
                cause=f"The drain cannot finish: {where}, and PodDisruptionBudget {ns}/{name} allows 0 "
                "disruptions, so the eviction of its pod on the node is refused and the pod stays "
                "(a budget of maxUnavailable 0, or minAvailable equal to the replicas, blocks every voluntary "
                "eviction).",
                evidence=[ev(rec, line)]
                + ([ev(node.rec, parse.line_matching(node.rec.output, _CORDONED.pattern))] if node else [])
                + ([ev(*refused)] if refused else [])
                + ([ev(rec, spec)] if spec and spec != line else []),
                remediation=[
                    (
                        f"Let the budget allow one disruption: set PodDisruptionBudget {name}'s maxUnavailable to 1 "
                        "(or minAvailable below the replicas), or scale the workload up by one first so a pod can "
                        "go; then the drain proceeds. Deleting the pod by hand bypasses the budget: only after "
                        "checking the workload survives it."
                    )
                ],
                confidence=0.85,
            )
        )
    return out
