"""NetworkPolicies against the pods they govern: does a policy that selects the target admit the client?

`kubectl describe networkpolicy` prints the policy's PodSelector and, per direction, the peers it allows
(`From:` / `To:` with `PodSelector:`, `NamespaceSelector:`, `IPBlock:`). A pod selected by a policy of a type
(Ingress/Egress) receives only what some rule of those policies allows; an empty rule list denies everything.
Read line by line; only label equality selectors are compared (set-based expressions count as "cannot tell").
"""

from __future__ import annotations

from typing import NamedTuple


class Policy(NamedTuple):
    """What one policy says, as far as equality selectors go."""

    name: str
    selector: dict[str, str] | None  # None: selects every pod (`<none>`)
    types: set[str]
    ingress_from: list[dict[str, str] | None]  # one entry per pod-selector peer; None = any pod in the namespace
    ingress_open: bool  # a rule with no `From` (all sources) or an IP/namespace peer we cannot judge
    egress_to: list[dict[str, str] | None]
    egress_open: bool
    quote: str


def labels(text: str) -> dict[str, str] | None:
    """`app=web,tier=api` as a dict; `<none>` (all pods) as None; set expressions dropped."""
    text = text.strip()
    if text in ("", "<none>"):
        return None
    return dict(p.split("=", 1) for p in text.split(",") if "=" in p and "!" not in p)


def matches(selector: dict[str, str] | None, pod_labels: dict[str, str]) -> bool:
    return selector is None or all(pod_labels.get(k) == v for k, v in selector.items())


def read_policy(describe: str) -> Policy | None:
    """The policy of a describe text, or None when the text is not one."""
    lines = describe.splitlines()[:400]
    name = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Name:")), "")
    if not name or not any("PodSelector:" in ln for ln in lines):
        return None
    selector: dict[str, str] | None = None
    types: set[str] = set()
    direction = ""
    ingress: list[dict[str, str] | None] = []
    egress: list[dict[str, str] | None] = []
    open_in = open_out = False
    quote = ""
    for ln in lines:
        s = ln.strip()
        if s.startswith("PodSelector:") and not direction:
            selector = labels(s.split(":", 1)[1])
        elif s.startswith("Allowing ingress traffic"):
            direction = "in"
        elif s.startswith("Allowing egress traffic"):
            direction = "out"
        elif s.startswith(("Not affecting", "Policy Types:")):
            if s.startswith("Policy Types:"):
                types = {t.strip() for t in s.split(":", 1)[1].split(",") if t.strip()}
            direction = "" if s.startswith("Policy Types:") else direction
        elif direction and s.startswith("PodSelector:"):
            (ingress if direction == "in" else egress).append(labels(s.split(":", 1)[1]))
            quote = quote or s
        elif direction and (s.startswith(("NamespaceSelector:", "IPBlock:")) or "<any>" in s):
            if direction == "in":
                open_in = True
            else:
                open_out = True
    return Policy(name, selector, types, ingress, open_in, egress, open_out, quote)


def blocks_ingress(policy: Policy, target: dict[str, str], client: dict[str, str]) -> bool:
    """The policy governs the target's ingress and none of its pod peers admits the client (and no rule it has
    is open to sources this reading cannot judge)."""
    if "Ingress" not in policy.types or not matches(policy.selector, target) or policy.ingress_open:
        return False
    return not any(matches(peer, client) for peer in policy.ingress_from)
