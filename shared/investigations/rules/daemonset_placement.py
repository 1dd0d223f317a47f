"""A DaemonSet's pods on nodes it should not (or no longer) run on: a node's taint the DaemonSet does not
tolerate, or a label its node selector does not match. NoSchedule keeps new pods off a node but never evicts the
ones already there, so a taint added to running nodes leaves "misscheduled" pods behind; an untolerated taint on
new nodes leaves them without the agent. The planner describes one node per node pool the pods run on; the rule
compares each node's taints and labels with the DaemonSet's tolerations and node selector."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

_MISSCHEDULED = re.compile(r"(?m)^Number of Nodes Misscheduled:\s+([1-9]\d{0,5})")
# Labels that name a node's pool on the common clouds and installers.
_POOL_LABELS = (
    "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name",
    "kubernetes.azure.com/agentpool", "agentpool", "karpenter.sh/nodepool", "node.kubernetes.io/instance-type",
)  # fmt: skip
_TAINT = re.compile(r"^([\w./-]{1,253})(?:=([\w./-]{0,63}))?:(NoSchedule|NoExecute|PreferNoSchedule)$")


def misscheduled(describe: str) -> int:
    """How many nodes run the DaemonSet's pod although they should not (its description's count)."""
    m = _MISSCHEDULED.search(describe[:50_000])
    return int(m.group(1)) if m else 0


def node_pools(listing: str) -> dict[str, str]:
    """Each listed node's pool (a pool label, else its name without the last part)."""
    pools: dict[str, str] = {}
    for row in parse.table(listing[:400_000]):
        name = row.get("NAME")
        if not name:
            continue
        labels = dict(p.split("=", 1) for p in row.get("LABELS").split(",") if "=" in p)
        pools[name] = next((labels[k] for k in _POOL_LABELS if labels.get(k)), name.rsplit("-", 1)[0])
    return pools


_DESIRED = re.compile(r"(?m)^Desired Number of Nodes Scheduled:\s+(\d{1,6})")


def desired(describe: str) -> int | None:
    """How many nodes the DaemonSet controller thinks should run its pod (None when not said)."""
    m = _DESIRED.search(describe[:50_000])
    return int(m.group(1)) if m else None


def uncovered_nodes(node_listing: str, pod_listing: str, ds: str, pools: dict[str, str], limit: int = 2) -> list[str]:
    """Ready nodes that run no pod of the DaemonSet, one per pool."""
    hosts = {r.get("NODE") for r in parse.table(pod_listing[:400_000]) if r.get("NAME").startswith(ds + "-")}
    ready = [r.get("NAME") for r in parse.table(node_listing[:400_000]) if r.get("STATUS").startswith("Ready")]
    missing = [n for n in ready if n and n not in hosts]
    by_pool: dict[str, str] = {}
    for node in missing:
        by_pool.setdefault(pools.get(node, node.rsplit("-", 1)[0]), node)
    return list(by_pool.values())[:limit]


def nodes_to_describe(pod_listing: str, pools: dict[str, str], limit: int = 3) -> list[str]:
    """One node per pool that the listed pods run on, the pools with the fewest of them first (the odd ones out)."""
    hosts = [r.get("NODE") for r in parse.table(pod_listing[:400_000]) if r.get("NODE") not in ("", "<none>")]
    by_pool: dict[str, list[str]] = {}
    for node in hosts:
        by_pool.setdefault(pools.get(node, node.rsplit("-", 1)[0]), []).append(node)
    ordered = sorted(by_pool.values(), key=len)
    return [nodes[0] for nodes in ordered][:limit]


def _taints(describe: str) -> list[str]:
    """`Taints:` of a node description (one per line under it)."""
    out: list[str] = []
    inside = False
    for line in describe[:50_000].splitlines():
        if line.startswith("Taints:"):
            inside, line = True, line[len("Taints:") :]
        elif inside and not line.startswith((" ", "\t")):
            break
        value = line.strip()
        if inside and value and value != "<none>" and _TAINT.match(value):
            out.append(value)
    return out


def _tolerations(describe: str) -> list[str]:
    """A pod template's `Tolerations:` lines (`key=value:Effect`, `key:Effect op=Exists`, `op=Exists`)."""
    out: list[str] = []
    inside = False
    for line in describe[:50_000].splitlines():
        s = line.strip()
        if s.startswith("Tolerations:"):
            inside, s = True, s[len("Tolerations:") :].strip()
        elif inside and (not s or not _TOLERATION_VALUE.match(s)):
            inside = False
        if inside and s and s != "<none>":
            out.append(s)
    return out


_TOLERATION_VALUE = re.compile(r"^[\w./-]{0,253}(?:=[\w./-]{0,63})?(?::\w+)?(?: op=\w+)?(?: for \d+s)?$")


def _tolerated(taint: str, tolerations: list[str]) -> bool:
    m = _TAINT.match(taint)
    if m is None:
        return True
    key, value, effect = m.group(1), m.group(2) or "", m.group(3)
    for t in tolerations:
        t_main = t.split(" ")[0]
        exists = "op=Exists" in t
        t_key, _, rest = t_main.partition(":") if "=" not in t_main else t_main.partition("=")
        if "=" in t_main:
            t_value, _, t_effect = rest.partition(":")
        else:
            t_value, t_effect = "", rest
        if t_main in ("", "op=Exists") and exists:
            return True  # tolerates everything
        if t_key != key:
            continue
        if t_effect and t_effect != effect:
            continue
        if exists or t_value == value:
            return True
    return False


def _ds_pods_on(ctx: Context, node: str, ds: str) -> list[str]:
    return sorted(
        {
            r.get("NAME")
            for rec in ctx.lists
            for r in parse.table(rec.output[:400_000])
            if r.get("NODE") == node and r.get("NAME").startswith(ds + "-")
        }
    )


def daemonset_placement(ctx: Context) -> list[Finding]:
    """DaemonSet pods on nodes whose taints it does not tolerate (or whose labels miss its node selector)."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "DaemonSet" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        count = misscheduled(s.rec.output)
        tolerations = _tolerations(s.rec.output)
        pools: dict[str, str] = {}
        for rec in ctx.lists:
            pools.update(node_pools(rec.output))
        for node in (n for n in ctx.seen if n.kind == "Node" and n.role is Role.DESCRIBE and not n.rec.is_error):
            bad = [t for t in _taints(node.rec.output) if not _tolerated(t, tolerations)]
            if not bad:
                continue
            if count:
                out.append(_finding(ctx, s.name, s.rec, node.name, node.rec, bad, pools, count))
            elif not _ds_pods_on(ctx, node.name, s.name):
                out.append(_uncovered(ctx, s.name, s.rec, node.name, node.rec, bad[0], pools))
    return out


def _uncovered(
    ctx: Context, ds: str, ds_rec: CallRecord, node: str, node_rec: CallRecord, taint: str, pools: dict[str, str]
) -> Finding:
    """A node the DaemonSet does not run on, because of a taint it does not tolerate."""
    pool = pools.get(node)
    siblings = sorted(n for n, p in pools.items() if pool and p == pool and n != node)
    key_value, _, effect = taint.rpartition(":")
    scheduled = parse.line_matching(ds_rec.output[:50_000], _DESIRED.pattern.removeprefix("(?m)"))
    cause = (
        f"DaemonSet {ds} does not run on node {node}"
        + (f" or the other nodes of its pool {pool} ({', '.join(siblings)})" if siblings else "")
        + f": the node carries the taint {taint}, which the DaemonSet does not tolerate, so the controller places "
        f"no pod there ({scheduled or 'fewer nodes scheduled than there are'})."
    )
    return Finding(
        rule="daemonset_untolerated",
        subject=ds,
        cause=cause,
        evidence=[ev(node_rec, f"Taints:             {taint}")] + ([ev(ds_rec, scheduled)] if scheduled else []),
        remediation=[
            (
                f"Add a toleration for {key_value}:{effect} (or `operator: Exists` for that key) to DaemonSet {ds}'s "
                "pod template so it runs on those nodes too; if it must not run there, this is expected."
            )
        ],
        confidence=0.85,
    )


def _finding(
    ctx: Context, ds: str, ds_rec: CallRecord, node: str, node_rec: CallRecord, taints: list[str],
    pools: dict[str, str], count: int,
) -> Finding:  # fmt: skip
    pool = pools.get(node)
    siblings = sorted(n for n, p in pools.items() if pool and p == pool and n != node)
    nodes = [node, *siblings]
    pods = [p for n in nodes for p in _ds_pods_on(ctx, n, ds)]
    taint = taints[0]
    key_value, _, effect = taint.rpartition(":")
    evicts = effect == "NoExecute"
    cause = (
        f"DaemonSet {ds} has {count} misscheduled pod(s)"
        + (f" ({', '.join(pods)})" if pods else "")
        + f": node {node} carries the taint {taint}, which the DaemonSet does not tolerate, so it is no longer "
        + "one of its nodes"
        + (
            f" (the other nodes of its pool {pool}, {', '.join(siblings)}, are likely tainted alike)"
            if siblings
            else ""
        )
        + ". "
        + (
            "NoExecute evicts pods that do not tolerate it."
            if evicts
            else f"{effect} keeps new pods off but does not evict those already running, so they keep running there."
        )
    )
    return Finding(
        rule="daemonset_taint",
        subject=ds,
        cause=cause,
        evidence=[ev(node_rec, f"Taints:             {taint}"), ev(ds_rec, _line(ds_rec.output))],
        remediation=[
            f"If {ds} should run on those nodes, add a toleration for {key_value}:{effect} to the DaemonSet's pod "
            f"template; if not, delete the pods on them"
            + (f" (`kubectl delete pod -n {ds_rec.args.get('namespace')} {' '.join(pods)}`)" if pods else "")
            + " (or remove the taint if it was added by mistake)."
        ],
        confidence=0.85,
    )


def _line(output: str) -> str:
    return parse.line_matching(output[:50_000], _MISSCHEDULED.pattern.removeprefix("(?m)"))
