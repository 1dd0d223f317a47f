"""A namespace quota near or at its limit: how full it is, and what uses it up (the largest consumers)."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_state import read_object
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role

NEARLY_FULL = 0.8
_UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "m": 1e-3}
_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|m)?$")


def quantity(text: str) -> float | None:
    """A Kubernetes quantity (`1500Gi`, `9250m`, `24`) as a number, or None."""
    m = _QUANTITY.match(text.strip())
    return float(m.group(1)) * _UNITS[m.group(2) or ""] if m else None


def consumers_kind(resource: str) -> str | None:
    """Which kind uses up a quota resource: claims for storage, pods for compute and pod counts."""
    if "storage" in resource or resource == "persistentvolumeclaims":
        return "PersistentVolumeClaim"
    if resource in ("pods", "count/pods") or resource.split(".")[-1] in ("cpu", "memory"):
        return "Pod"
    return None


def nearly_full(output: str) -> list[tuple[str, str, str, float, str]]:
    """(resource, used, hard, share, quoted line) of a quota's resources at NEARLY_FULL of their limit or more."""
    out = []
    for item in read_object(output, "ResourceQuota").quotas[:50]:
        used, hard = quantity(item.used), quantity(item.hard)
        if used is not None and hard and used / hard >= NEARLY_FULL:
            out.append((item.resource, item.used, item.hard, used / hard, item.quote))
    return out


def quota_consumers(ctx: Context) -> list[Finding]:
    """A quota resource nearly used up, with the objects that use the most of it (from the namespace's listing)."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "ResourceQuota" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        for resource, used, hard, share, quote in nearly_full(s.rec.output[:200_000])[:2]:
            kind = consumers_kind(resource)
            listing = next(
                (x.rec for x in ctx.seen if x.role is Role.LIST and x.kind == kind and not x.rec.is_error), None
            )
            rows = parse.table(listing.output[:200_000]) if listing is not None else []
            sized = sorted(
                ((quantity(r.get("CAPACITY")) or 0.0, r) for r in rows if r.get("NAME")), key=lambda qr: -qr[0]
            )
            top = [r for _, r in sized[:4]]
            who = ", ".join(
                f"{r.get('NAME')} ({r.get('CAPACITY')})" if r.get("CAPACITY") else r.get("NAME") for r in top
            )
            cause = (
                f"ResourceQuota {s.name} has {used} of {hard} {resource} in use ({share:.0%})"
                + (f"; the largest of the {len(rows)} {kind}s counting against it: {who}" if top else "")
                + ". New objects that need more are refused once it is full."
            )
            out.append(
                Finding(
                    rule="quota_nearly_full",
                    subject=f"{s.name} {resource}",
                    cause=cause,
                    evidence=[ev(s.rec, quote)] + ([ev(listing, top[0].line.strip())] if listing and top else []),
                    remediation=[
                        (
                            f"free {resource}: delete {kind}s no longer used (claims a scaled-down StatefulSet left "
                            "behind are kept on purpose and still count), or raise the quota's hard limit"
                        )
                    ],
                    confidence=0.6 if share < 1 else 0.8,
                )
            )
    return out
