"""RBAC gaps: a refused action next to the Role bound to the account, and the verb that Role lacks."""

from __future__ import annotations

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.rbac import denials, granted_verbs
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role


def rbac_gaps(ctx: Context) -> list[Finding]:
    """A refused action next to the Role that should allow it: which verb that Role lacks on which resource."""
    roles = [s for s in ctx.seen if s.kind in ("Role", "ClusterRole") and s.role is Role.DESCRIBE]
    out: list[Finding] = []
    for log in ctx.logs:
        for d in denials(log.output[-200_000:]):
            for s in roles:
                verbs, quote = granted_verbs(s.rec.output[:200_000], d.resource)
                if d.verb in verbs or "*" in verbs:
                    continue
                has = f"only {', '.join(sorted(verbs))}" if verbs else "nothing"
                out.append(
                    Finding(
                        rule="rbac_missing_verb",
                        subject=s.name,
                        cause=f"Service account {d.account} may not {d.verb} {d.resource}: the {s.kind} {s.name} "
                        f"bound to it allows {has} on {d.resource}; the `{d.verb}` verb is missing.",
                        evidence=([ev(s.rec, quote)] if quote else []) + [ev(log, d.line)],
                        remediation=[
                            f"add `{d.verb}` to the verbs of {s.kind} {s.name}'s rule for {d.resource} "
                            f"(`kubectl edit {s.kind.lower()} {s.name}"
                            + (f" -n {s.namespace}`)" if s.namespace else "`)")
                        ],
                        confidence=0.92,
                    )
                )
    return out
