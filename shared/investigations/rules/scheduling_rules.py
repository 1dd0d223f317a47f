"""Why the scheduler places a pod nowhere (`0/4 nodes are available: ...`) and the fix for each reason, with the
pod's own node selector or the taint it does not tolerate."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding


def scheduling(rec: CallRecord, e: parse.Event, ctx: Context) -> Finding:
    reasons = [reason for _, reason in scheduler_reasons(e.message)]
    if "unbound immediate PersistentVolumeClaims" in e.message:
        reasons.append("unbound PersistentVolumeClaim")
    pod = _pod_doc(ctx, e.obj_name)
    daemon = bool(re.search(r"(?m)^Controlled By:\s+DaemonSet/", pod)) or _daemonset_pod(ctx, e.obj_name)
    note = ""
    if daemon and len(reasons) > 1:
        # A DaemonSet's pod is bound by node affinity to its one node: every other node "doesn't match" by design.
        kept = [r for r in reasons if "affinity/selector" not in r and "node selector" not in r]
        if kept and kept != reasons:
            reasons = kept
            note = " (a DaemonSet pod is bound to one node; the others not matching its affinity is by design)"
    what = ", ".join(dict.fromkeys(reasons)) or "no node fits"
    fixes = []
    for r in reasons:
        if r == "unbound PersistentVolumeClaim":
            fixes.append("bind the pod's PersistentVolumeClaim (see the claim's events: StorageClass, provisioner)")
        elif r.startswith("Insufficient"):
            res = r.split(" ", 1)[1]
            asked = _requested(pod, res)
            if asked:
                what += f" (the pod requests {asked} {res})"
            where = "its node" if daemon else "a node"
            fixes.append(
                f"lower the {res} request" + (f" ({asked})" if asked else "") + f" or free or add {res} on {where}"
                + (" (or give the DaemonSet a priorityClassName such as system-node-critical so it can preempt)"
                   if daemon else " (e.g. a node pool that has it)")
            )  # fmt: skip
        elif r == "Too many pods":
            fixes.append("add nodes or raise the nodes' max pods")
        else:
            fixes.append(_placement_fix(r, _pod_doc(ctx, e.obj_name)))
    if _scheduled_since(pod):
        # The pod has a node now: the event is history (a node that was not ready, a moment without room).
        return Finding(
            rule="scheduling",
            subject=e.obj_name,
            cause=f"Pod {e.obj_name} could not be scheduled for a while ({what}), but has a node now.",
            evidence=[ev(rec, e.message)],
            remediation=["Nothing to do for placement now; see what happens to the pod on its node."],
            confidence=0.3,
            symptom=True,
        )
    return Finding(
        rule="scheduling",
        subject=e.obj_name,
        cause=f"Pod {e.obj_name} cannot be scheduled (Pending, FailedScheduling): {what}{note}.",
        evidence=[ev(rec, e.message)],
        remediation=fixes or ["Check the pod's requests, node selectors, affinity and taints against the nodes."],
        confidence=0.9,
    )


def scheduler_reasons(message: str) -> list[tuple[int, str]]:
    """The scheduler's `0/4 nodes are available: 1 node(s) had untolerated taint {a: b}, 3 Insufficient cpu.` as
    (count, reason), most nodes first; the control-plane taint (nodes that never take workloads) last."""
    body = message.split("are available:", 1)[-1].split(" preemption:", 1)[0].strip().rstrip(".")
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(body[:4000]):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:4000])
    out: list[tuple[int, str]] = []
    for part in parts:
        m = re.match(r"\s*(\d{1,6}) (.+)", part)
        if m:
            out.append((int(m.group(1)), m.group(2).strip().rstrip(".")))
    return sorted(out, key=lambda cr: ("control-plane" in cr[1] or "master" in cr[1], -cr[0]))


def _scheduled_since(pod: str) -> bool:
    """The pod's description shows it on a node (PodScheduled True, or a node assigned), so it is not Pending."""
    if not pod:
        return False
    return bool(
        re.search(r"(?m)^[ \t]*PodScheduled\s+True", pod[:100_000])
        or re.search(r"(?m)^Node:\s+[a-z0-9][-a-z0-9.]*(?:/[\d.]+)?\s*$", pod[:20_000])
    ) and not re.search(r"(?m)^Status:\s+Pending", pod[:20_000])


def _daemonset_pod(ctx: Context, name: str) -> bool:
    """The pod was listed among a DaemonSet's pods (its description may not have been read)."""
    return any(
        s.kind == "DaemonSet" and s.name and name.startswith(s.name + "-") and len(name) - len(s.name) <= 7
        for s in ctx.seen
    )


def _requested(pod: str, resource: str) -> str:
    """What the pod's containers request of a resource, as written when one container asks (`1Gi`)."""
    asked = [c.quantity("Requests", resource) for c in parse.containers(pod) if not c.init]
    asked = [a for a in asked if a]
    return asked[0] if len(asked) == 1 else (" + ".join(asked) if asked else "")


def _pod_doc(ctx: Context, name: str) -> str:
    return next((rec.output for rec in ctx.pods if rec.args.get("name") == name), "")


def _placement_fix(reason: str, pod: str) -> str:
    """The fix for a placement constraint no node meets, with the pod's own selector or the node's taint."""
    if "affinity/selector" in reason or "node selector" in reason:
        selector = parse.field_value(pod, "Node-Selectors")
        if selector and selector != "<none>":
            return (
                f"no node has the label `{selector}` that the pod's nodeSelector requires: add the label to a node "
                f"(`kubectl label node <node> {selector}`) or remove or fix the nodeSelector (or node affinity)"
            )
        return "no node matches the pod's node selector or affinity: label a node to match, or relax the rule"
    if "taint" in reason:
        return (
            f"the nodes carry a taint the pod does not tolerate ({reason}): add a matching toleration or remove "
            "the taint"
        )
    if "anti-affinity" in reason:
        return (
            "the pod's anti-affinity rule leaves no node (more replicas than eligible nodes): add nodes, lower the "
            "replicas, or make the rule preferred instead of required"
        )
    if "persistent volumes to bind" in reason:
        return (
            "no PersistentVolume can bind the pod's claim: with a StorageClass that does not provision volumes "
            "(kubernetes.io/no-provisioner, local volumes) create a PersistentVolume for each claim, or use a "
            "class with a dynamic provisioner"
        )
    if "unschedulable" in reason:
        return "the nodes are cordoned (unschedulable): uncordon them or add nodes"
    if "control-plane" in reason:
        return f"({reason}: control-plane nodes take no workloads; expected)"
    if "volume node affinity" in reason:
        return "the pod's volume is bound to another zone or node: schedule in that zone or recreate the volume"
    return f"check taints, affinity and node selectors ({reason})"
