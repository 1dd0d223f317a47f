"""A NetworkPolicy that drops a client's connections: the label it wants that the client lacks."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.netpol import blocks_ingress, labels, matches, read_policy
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role


def policies_dropping(ctx: Context) -> list[Finding]:
    """A client whose connections time out or are refused, a NetworkPolicy on the target that admits only other
    pods: which label the policy wants that the client lacks."""
    rows = {r.get("NAME"): r for rec in ctx.lists for r in parse.table(rec.output) if r.get("LABELS")}
    pod_labels = {name: labels(r.get("LABELS")) or {} for name, r in rows.items()}
    failing = [
        log for log in ctx.logs if re.search(r"(?i)time ?out|timed out|refused|unreachable", log.output[-100_000:])
    ]
    out: list[Finding] = []
    for s in ctx.seen:
        policy = read_policy(s.rec.output) if s.kind == "NetworkPolicy" and s.role is Role.DESCRIBE else None
        if policy is None:
            continue
        targets = [n for n, lab in pod_labels.items() if matches(policy.selector, lab)]
        for log in failing:
            client = str(log.args.get("name") or "")
            if (
                client not in pod_labels
                or not targets
                or not blocks_ingress(policy, pod_labels[targets[0]], pod_labels[client])
            ):
                continue
            wanted = ", ".join(f"{k}={v}" for peer in policy.ingress_from if peer for k, v in peer.items())
            has = ",".join(f"{k}={v}" for k, v in pod_labels[client].items() if k != "pod-template-hash")
            out.append(
                Finding(
                    rule="network_policy_blocks",
                    subject=policy.name,
                    cause=f"NetworkPolicy {policy.name} lets into pods {_show(policy.selector)} only traffic from pods "
                    f"labelled {wanted or 'nothing'}; pod {client} ({has}) is not, so its connections are dropped.",
                    evidence=[ev(s.rec, policy.quote or "PodSelector:"), ev(log, _last_match(log.output))],
                    remediation=[
                        (
                            f"allow the client in NetworkPolicy {policy.name} (add a `from` podSelector that matches "
                            f"{client}'s labels, e.g. {has.split(',')[-1] if has else 'its app label'}), or label the "
                            f"client with {wanted or 'the label the policy expects'}"
                        )
                    ],
                    confidence=0.85,
                )
            )
            break
    return out


def _show(selector: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in selector.items()) if selector else "(all)"


def _last_match(output: str) -> str:
    return next(
        (
            ln.strip()
            for ln in reversed(output.splitlines()[-500:])
            if re.search(r"(?i)time ?out|timed out|refused", ln)
        ),
        "",
    )
