"""Workload settings that hold a rollout back on purpose: a StatefulSet's update partition, a paused Deployment."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role

_PARTITION = re.compile(r"^\s*\"?[Pp]artition\"?:\s*(\d{1,6})\b")
_PAUSED = re.compile(r"^\s*\"?paused\"?:\s*true\b")


def held_rollouts(ctx: Context) -> list[Finding]:
    """A StatefulSet with a rolling-update partition above 0 updates only the pods at or above that ordinal; a
    paused Deployment rolls nothing out. Both look like a stuck rollout and are a setting, not a failure."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.role is not Role.DESCRIBE or s.kind not in ("StatefulSet", "Deployment") or s.rec.is_error:
            continue
        text = s.rec.output[:200_000]
        partition = next((m for line in text.splitlines()[:400] if (m := _PARTITION.match(line))), None)
        if s.kind == "StatefulSet" and partition and int(partition.group(1)) > 0:
            n = int(partition.group(1))
            out.append(
                Finding(
                    rule="rollout_partition",
                    subject=s.name,
                    cause=f"StatefulSet {s.name} has a rolling-update partition of {n}: only pods with ordinal {n} "
                    f"and above get the new revision; pods {s.name}-0 to {s.name}-{n - 1} stay on the old one, so "
                    "the update never finishes.",
                    evidence=[ev(s.rec, partition.group(0).strip())],
                    remediation=[
                        (
                            "when the new revision is good, lower the partition to 0 "
                            f"(`kubectl patch statefulset {s.name} "
                            '-p \'{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}\'`) so the remaining '
                            "pods roll too"
                        )
                    ],
                    confidence=0.8,
                )
            )
        paused = parse.line_matching(text, _PAUSED.pattern)
        if s.kind == "Deployment" and paused:
            out.append(
                Finding(
                    rule="rollout_paused",
                    subject=s.name,
                    cause=f"Deployment {s.name} is paused: changes to its template are not rolled out.",
                    evidence=[ev(s.rec, paused)],
                    remediation=[f"resume it: `kubectl rollout resume deployment/{s.name}`"],
                    confidence=0.75,
                )
            )
    return out
