"""RBAC gaps: a refused action next to the Role bound to the account, and the verb that Role lacks."""

from __future__ import annotations

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.rbac import Denial, denials, granted_verbs
from shared.investigations.rules.seen import Seen
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role


def rbac_gaps(ctx: Context) -> list[Finding]:
    """A refused action next to the Role that should allow it: which verb that Role lacks on which resources
    (one finding per Role and verb, naming every resource the logs show refused)."""
    roles = [s for s in ctx.seen if s.kind in ("Role", "ClusterRole") and s.role is Role.DESCRIBE]
    gaps: dict[tuple[str, str, str], list[tuple[Denial, str, set[str], CallRecord, Seen]]] = {}
    for log in ctx.logs:
        for d in denials(log.output[-200_000:]):
            for s in roles:
                verbs, quote = granted_verbs(s.rec.output[:200_000], d.resource)
                if d.verb in verbs or "*" in verbs:
                    continue
                gaps.setdefault((s.name, d.account, d.verb), []).append((d, quote, verbs, log, s))
    return [_finding(found) for found in gaps.values()]


def _finding(found: list[tuple[Denial, str, set[str], CallRecord, Seen]]) -> Finding:
    d, quote, verbs, log, s = found[0]
    resources = list(dict.fromkeys(x[0].resource for x in found))
    has = f"only {', '.join(sorted(verbs))}" if verbs else "nothing"
    what = ", ".join(resources)
    edit = f"`kubectl edit {s.kind.lower()} {s.name}" + (f" -n {s.namespace}`" if s.namespace else "`")
    extra = " (and watch, which a controller's informers need)" if d.verb == "list" else ""
    fix = (
        f"add a rule to {s.kind} {s.name} that grants {d.verb}{extra} on {what} ({edit})"
        if not verbs
        else f"add {d.verb} to the verbs of {s.kind} {s.name}'s rule for {what} ({edit})"
    )
    return Finding(
        rule="rbac_missing_verb",
        subject=s.name,
        cause=f"Service account {d.account} may not {d.verb} {what}: the {s.kind} {s.name} bound to it allows "
        f"{has} on {resources[0]}" + (" or the others" if len(resources) > 1 else "") + f"; the `{d.verb}` verb "
        "is missing.",
        evidence=([ev(s.rec, quote)] if quote else []) + [ev(log, x[0].line) for x in found[:2]],
        remediation=[fix],
        confidence=0.92,
    )
