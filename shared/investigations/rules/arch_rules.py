"""An image built for one CPU architecture on nodes of another: `exec format error` on some nodes while the same
pods run on others. The nodes' `kubernetes.io/arch` (or their System Info) says which architecture each has;
the pods that fail and those that run say which one the image was built for."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

EXEC_FORMAT = re.compile(r"exec format error")
_ARCH = re.compile(r"(?m)(?:kubernetes\.io/arch[=:]\s?|^[ \t]*Architecture:\s+)(amd64|arm64|arm|ppc64le|s390x|386)\b")


def node_arch(describe: str) -> tuple[str, str]:
    """A node's architecture and the line that says so."""
    m = _ARCH.search(describe[:100_000])
    return (m.group(1), m.group(0).strip()) if m else ("", "")


def pod_node(describe: str) -> str:
    """The node a pod description names (`Node:  ip-10-0-0-1/10.0.0.1`)."""
    value = parse.field_value(describe[:20_000], "Node")
    return value.split("/", 1)[0] if value and value != "<none>" else ""


def arch_mismatch(ctx: Context) -> list[Finding]:
    """Pods that fail with exec format error on nodes of one architecture while others run on another."""
    failing = {str(rec.args.get("name")) for rec in ctx.logs if EXEC_FORMAT.search(rec.output[-50_000:])}
    if not failing:
        return []
    arch: dict[str, tuple[str, str, CallRecord]] = {}
    for s in ctx.seen:
        if s.kind == "Node" and s.role is Role.DESCRIBE and not s.rec.is_error and s.name:
            a, line = node_arch(s.rec.output)
            if a:
                arch[s.name] = (a, line, s.rec)
    # Only the failing pods' own workload (its pods share the name up to their last part) says which
    # architecture its image runs on.
    siblings = tuple(name.rsplit("-", 1)[0] + "-" for name in failing)
    bad_arch: set[str] = set()
    good_arch: set[str] = set()
    for rec in ctx.pods:
        node, name = pod_node(rec.output), str(rec.args.get("name"))
        if node in arch and name in failing:
            bad_arch.add(arch[node][0])
    for listing in ctx.lists:
        for row in parse.table(listing.output[:400_000]):
            node, name = row.get("NODE"), row.get("NAME")
            if node in arch and name.startswith(siblings) and name not in failing and row.get("STATUS") == "Running":
                good_arch.add(arch[node][0])
    bad_arch -= good_arch
    if not bad_arch or not good_arch:
        return []
    bad, good = min(bad_arch), min(good_arch)
    bad_node = next(n for n, (a, _, _) in arch.items() if a == bad)
    line_rec = next(rec for rec in ctx.logs if EXEC_FORMAT.search(rec.output[-50_000:]))
    quote = parse.line_matching(line_rec.output[-50_000:], EXEC_FORMAT.pattern)
    return [
        Finding(
            rule="arch_mismatch",
            subject=str(line_rec.args.get("name") or ""),
            cause=f"The image's binary is built for {good} only: its pods fail with exec format error on {bad} "
            f"nodes (e.g. {bad_node}) and run on {good} nodes.",
            evidence=[ev(line_rec, quote), ev(arch[bad_node][2], arch[bad_node][1])],
            remediation=[
                (
                    f"Publish a multi-arch image (docker buildx build --platform linux/{good},linux/{bad}) or pin the "
                    f"workload to {good} nodes (nodeSelector kubernetes.io/arch={good}); or roll back to the last "
                    "image that ran on every node."
                )
            ],
            confidence=0.9,
        )
    ]
