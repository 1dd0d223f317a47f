"""RBAC gaps: a refused action next to the Role bound to the account, and the verb that Role lacks."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
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


_SA_SUBJECT = re.compile(
    r"ServiceAccount(?:/[a-z0-9][-a-z0-9]{0,62})?/([a-z0-9][-a-z0-9]{0,62})"  # listing: ServiceAccount/ns/name
    r"|ServiceAccount[\"',\s]{1,40}(?:name[\"':\s]{1,10})?([a-z0-9][-a-z0-9]{0,62})"  # describe, YAML, JSON
)


def _subjects(text: str) -> set[str]:
    return {m.group(1) or m.group(2) for m in _SA_SUBJECT.finditer(text[:50_000])} - {"name", "namespace", "kind"}


def binding_subjects(ctx: Context) -> list[Finding]:
    """A refused account next to a RoleBinding meant for its workload that binds another account (`flagd-sa`
    where the pods run as `flagd`): the permission exists, granted to the wrong subject."""
    refused = [(log, d) for log in ctx.logs for d in denials(log.output[-200_000:])]
    if not refused:
        return []
    bindings: list[tuple[CallRecord, str, set[str], str]] = []
    for s in ctx.seen:
        if s.kind != "RoleBinding" or s.rec.is_error:
            continue
        if s.role is Role.LIST:
            bindings += [
                (s.rec, r.get("NAME"), _subjects(r.get("SUBJECTS") or r.line), r.line.strip())
                for r in parse.table(s.rec.output[:200_000])
                if r.get("NAME")
            ]
        elif s.role is Role.DESCRIBE and s.name:
            line = parse.line_matching(s.rec.output[:50_000], r"ServiceAccount")
            bindings.append((s.rec, s.name, _subjects(s.rec.output), line))
    out: list[Finding] = []
    for log, d in refused[:1]:
        for rec, name, subjects, line in bindings:
            meant = name.startswith(d.account + "-") or any(x.startswith(d.account + "-") for x in subjects)
            if not subjects or d.account in subjects or not meant:
                continue
            others = ", ".join(sorted(subjects))
            out.append(
                Finding(
                    rule="binding_wrong_subject",
                    subject=name,
                    cause=f"Service account {d.account} may not {d.verb} {d.resource}: RoleBinding {name}, meant for "
                    f"it, binds service account {others} instead, not {d.account} (the account the pods run as), "
                    "so the permission exists but is granted to the wrong subject.",
                    evidence=[ev(rec, line or name), ev(log, d.line)],
                    remediation=[
                        (
                            f"Update RoleBinding {name}: add ServiceAccount {d.account} (namespace {d.namespace}) to "
                            f"its subjects or fix the subject's name (`kubectl edit rolebinding {name} -n "
                            f"{d.namespace}`), or run the pods as {others}."
                        )
                    ],
                    confidence=0.9,
                )
            )
            break
    return out
