"""A pod that asks for more than any node can give: its request against a node's Allocatable."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.quota_rules import quantity
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role

_INSUFFICIENT = re.compile(r"Insufficient ([\w./-]+)")


def allocatable(node: str, resource: str) -> tuple[str, str]:
    """A node description's Allocatable value of one resource, and the line to quote ("", "" when absent)."""
    at = node.find("Allocatable:")
    for line in node[at:].splitlines()[1:20] if at >= 0 else []:
        if line and not line[0].isspace():
            break
        m = re.match(r"\s+([\w./-]+):\s+(\S+)", line)
        if m and m.group(1) == resource:
            return m.group(2), line.strip()
    return "", ""


def requests_over_allocatable(ctx: Context) -> list[Finding]:
    """A Pending pod whose summed container requests of a resource exceed what a node can allocate at all."""
    nodes = [s.rec for s in ctx.seen if s.kind == "Node" and s.role is Role.DESCRIBE and not s.rec.is_error]
    out: list[Finding] = []
    for rec in ctx.pods if nodes else []:
        text = rec.output[:200_000]
        for resource in dict.fromkeys(_INSUFFICIENT.findall(text)[:5]):
            asked = sum(quantity(c.quantity("Requests", resource)) or 0.0 for c in parse.containers(text))
            have_text, line = allocatable(nodes[0].output[:200_000], resource)
            have = quantity(have_text) if have_text else None
            if not asked or have is None or asked <= have:
                continue
            pod = str(rec.args.get("name"))
            node = str(nodes[0].args.get("name"))
            out.append(
                Finding(
                    rule="request_over_allocatable",
                    subject=pod,
                    cause=f"Pod {pod} requests more {resource} than a node can allocate (node {node}: allocatable "
                    f"{resource} {have_text}), so no node will ever fit it; Insufficient {resource} is permanent.",
                    evidence=[
                        ev(nodes[0], line),
                        ev(rec, parse.line_matching(text, rf"Insufficient {re.escape(resource)}")),
                    ],
                    remediation=[
                        (
                            f"lower the pod's {resource} request below the nodes' allocatable ({have_text}), or "
                            "add a node pool with larger nodes"
                        )
                    ],
                    confidence=0.92,
                )
            )
    return out
