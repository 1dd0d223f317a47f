"""A node the control plane stopped hearing from (tainted unreachable / not-ready) and what that does to its pods."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role

# The node lifecycle controller's taints on a node it stopped hearing from.
_LOST_NODE_TAINT = re.compile(r"node\.kubernetes\.io/(unreachable|not-ready):(NoExecute|NoSchedule)")


def lost_nodes(ctx: Context) -> list[Finding]:
    """A node the control plane marked unreachable / not-ready: what that does to its pods."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Node" or s.role is not Role.DESCRIBE:
            continue
        line = parse.line_matching(s.rec.output[:200_000], _LOST_NODE_TAINT.pattern)
        m = _LOST_NODE_TAINT.search(line)
        if not m:
            continue
        out.append(
            Finding(
                rule="node_tainted_lost",
                subject=s.name,
                cause=f"The node controller marked Node {s.name} {m.group(1)} (taint node.kubernetes.io/"
                f"{m.group(1)}:{m.group(2)}): no new pods land on it, and with NoExecute its pods are evicted "
                "(rescheduled elsewhere) once their toleration expires (300 s by default).",
                evidence=[ev(s.rec, line)],
                remediation=[
                    (
                        f"bring {s.name} back (power, network, `systemctl restart kubelet` and `journalctl -u "
                        "kubelet`) or drain and remove it so its pods run elsewhere"
                    )
                ],
                confidence=0.6,
                symptom=True,
            )
        )
    return out
