"""The pod that fills a node: the kubelet's eviction messages name the container that used the most of the
resource under pressure (`Container renderer was using 33012470Ki, request is 0, has larger consumption of
ephemeral-storage`). A workload evicted again and again for the same resource is the one to bound."""

from __future__ import annotations

import re
from collections import defaultdict

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_view.values import bytes_text, quantity
from shared.investigations.rules.objects import ObjRef, owner_by_name
from shared.investigations.rules.state import CallRecord, Finding

_USING = re.compile(
    r"Container ([\w.-]{1,63}) was using (\d{1,20}(?:Ki|Mi|Gi|Ti|k|M|G)?), (?:request is (\S{1,30}), )?"
    r"has larger consumption of ([\w.-]{1,40})"
)


_THRESHOLD = re.compile(r"Threshold quantity: (\d{1,20}(?:Ki|Mi|Gi|Ti|k|M|G)?)")


def _little(rec: CallRecord, e: parse.Event, workload: str, resource: str, most: float) -> Finding:
    """Evicted pods that used little: what fills the node is not counted against any pod."""
    return Finding(
        rule="pressure_outside_pods",
        subject=workload,
        cause=f"The pods the kubelet evicts for {resource} use little of it ({workload}'s use at most "
        f"{bytes_text(most)}, far below what the kubelet must reclaim): the space goes to what it does not count "
        "against pods (a hostPath volume, container logs, images), so evicting pods cannot reclaim it.",
        evidence=[ev(rec, e.message)],
        remediation=[
            (
                "Find what fills the node's disk outside the pods' accounting (hostPath volumes of the pods on it, "
                "large container logs, unused images) and clean or bound it; evictions stop once it is freed."
            )
        ],
        confidence=0.7,
    )


def heavy_consumers(ctx: Context) -> list[Finding]:
    """Workloads whose pods the kubelet evicts for using the most of a resource, with what they used."""
    hits: dict[tuple[str, str, str], list[tuple[CallRecord, parse.Event, re.Match[str]]]] = defaultdict(list)
    for rec in [*ctx.events, *ctx.pods]:
        ns = str(rec.args.get("namespace") or "")
        for e in parse.events(rec.output[:200_000]):
            m = _USING.search(e.message[:1000])
            if m is None:
                continue
            owner = owner_by_name(ObjRef("Pod", e.obj_name, ns or None))
            workload = owner.name if owner is not None else e.obj_name
            hits[(ns, workload, m.group(4).rstrip("."))].append((rec, e, m))
    out: list[Finding] = []
    for (ns, workload, resource), seen in sorted(hits.items(), key=lambda kv: -len(kv[1]))[:2]:
        rec, e, m = seen[0]
        used = [q for _, _, x in seen if (q := quantity(x.group(2))) is not None]
        threshold = _THRESHOLD.search(e.message)
        limit = quantity(threshold.group(1)) if threshold else None
        if used and limit and max(used) < limit * 0.1:
            out.append(_little(rec, e, workload, resource, max(used)))
            continue
        request = m.group(3) or "unset"
        again = f"{len(seen)} of its pods were evicted" if len(seen) > 1 else "a pod was evicted"
        most = f" (up to {bytes_text(max(used))})" if used else ""
        out.append(
            Finding(
                rule="heavy_consumer",
                subject=workload,
                cause=f"{workload} ({ns or 'its namespace'}) fills its node's {resource}: {again} because container "
                f"{m.group(1)} used the most of it{most} with its request for it at {request}; each replacement "
                "can land on a node and fill it again.",
                evidence=[ev(rec, e.message)],
                remediation=[
                    (
                        f"Bound what {workload}'s container {m.group(1)} writes: set {resource} requests and limits "
                        "(and a sizeLimit on the emptyDir it writes to), and clean up what it keeps (caches, "
                        "intermediate files, logs); give it a volume of its own if it needs that much."
                    )
                ],
                confidence=0.85 if len(seen) > 1 else 0.75,
            )
        )
    return out
