"""Storage: a volume running out of space (and whether its claim can grow), a claim that stays Pending because its
StorageClass provisions nothing."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role

_DISK_FULL = re.compile(r"(?i)no space left on device|ENOSPC|disk (?:is )?full|quota exceeded for volume")
_SPACE_ALERT = re.compile(r"(?i)filling ?up|out of space|almost full|disk ?full|free space|% free|space left|inodes")


def volume_space(ctx: Context) -> list[Finding]:
    """A volume running out of space (the alert says so): the claim's capacity and whether its class can grow."""
    alert = ctx.state.alert
    said = " ".join([str(alert.get("title") or ""), str(alert.get("description") or "")])
    said += " " + " ".join(str(v) for v in (alert.get("annotations") or {}).values())
    full_logs = [log for log in ctx.logs if _DISK_FULL.search(log.output[-100_000:])]
    if full_logs:
        said = parse.line_matching(full_logs[0].output[-100_000:], _DISK_FULL.pattern) or said
    elif not _SPACE_ALERT.search(said):
        return []
    classes = {
        s.name: s.rec for s in ctx.seen if s.kind == "StorageClass" and s.role is Role.DESCRIBE and not s.rec.is_error
    }
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "PersistentVolumeClaim" or s.role is not Role.DESCRIBE:
            continue
        capacity = parse.field_value(s.rec.output, "Capacity") or "its size"
        klass = parse.field_value(s.rec.output, "StorageClass")
        sc = classes.get(klass)
        expandable = parse.field_value(sc.output, "AllowVolumeExpansion") if sc is not None else ""
        symptom = parse.line_matching(said, r"(?i)free|full|space") or said.strip()
        evidence = [ev(s.rec, f"Capacity:     {capacity}" if capacity != "its size" else f"StorageClass:  {klass}")]
        if sc is not None and expandable:
            evidence.append(ev(sc, f"AllowVolumeExpansion:  {expandable}"))
        if expandable.lower() == "true":
            grow = (
                f"expand the claim: raise spec.resources.requests.storage of {s.name} above {capacity} "
                f"(StorageClass {klass} allows volume expansion, so the volume grows in place)"
            )
        elif expandable:
            grow = f"StorageClass {klass} does not allow volume expansion: move the data to a larger volume"
        else:
            grow = (
                f"expand the PVC: raise spec.resources.requests.storage above {capacity} (StorageClass {klass} must "
                "allow volume expansion; otherwise move the data to a larger volume)"
            )
        out.append(
            Finding(
                rule="volume_space",
                subject=s.name,
                cause=f"PersistentVolumeClaim {s.name} ({capacity}, StorageClass {klass or 'default'}) is running out "
                f"of space: {symptom[:200]}",
                evidence=evidence,
                remediation=[
                    grow,
                    "find what fills it (data growth, logs, WAL or temp files) and clean up or set retention",
                ],
                confidence=0.75,
            )
        )
    return out


def unprovisioned_claims(ctx: Context) -> list[Finding]:
    """A Pending claim whose StorageClass provisions nothing (`kubernetes.io/no-provisioner`): it waits for a
    PersistentVolume someone has to create."""
    classes = {s.name: s.rec for s in ctx.seen if s.kind == "StorageClass" and s.role is Role.DESCRIBE}
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "PersistentVolumeClaim" or s.role is not Role.DESCRIBE:
            continue
        klass = parse.field_value(s.rec.output, "StorageClass")
        sc = classes.get(klass)
        provisioner = parse.field_value(sc.output, "Provisioner") if sc is not None else ""
        if sc is None or parse.field_value(s.rec.output, "Status") != "Pending" or "no-provisioner" not in provisioner:
            continue
        out.append(
            Finding(
                rule="claim_unprovisioned",
                subject=s.name,
                cause=f"PersistentVolumeClaim {s.name} stays Pending: its StorageClass {klass} has no provisioner "
                f"({provisioner}), so no volume is created for it, and no PersistentVolume matches it.",
                evidence=[
                    ev(s.rec, parse.line_matching(s.rec.output, r"^Status:")),
                    ev(sc, parse.line_matching(sc.output, r"^Provisioner:")),
                ],
                remediation=[
                    (
                        f"create a PersistentVolume of class {klass} for {s.name} (size and access mode of the claim, "
                        "on a node that has the disk), or use a StorageClass with a dynamic provisioner"
                    )
                ],
                confidence=0.85,
            )
        )
    return out
