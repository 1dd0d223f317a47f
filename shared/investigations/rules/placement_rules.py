"""Placement: a pod whose volume is pinned (by the PersistentVolume's node affinity) to a zone or node where no
node is left. The scheduler only says "volume node affinity conflict"; the volume says where, and the nodes'
labels say where the cluster can run pods."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

# `Term 0:        topology.kubernetes.io/zone in [eu-west-1c]` (describe).
_TERM = re.compile(r"^\s*Term \d{1,3}:\s+([\w./-]{1,253}) in \[([^\]]{1,1000})\]")
_YAML_KEY = re.compile(r"^\s*-? ?key: ['\"]?([\w./-]{1,253})")
_YAML_OP = re.compile(r"^\s*operator: ['\"]?In\b")
_YAML_VALUE = re.compile(r"^\s*- ['\"]?([\w./-]{1,253})['\"]?\s*$")
_CONFLICT = "volume node affinity conflict"


def _pinned(output: str) -> list[tuple[str, list[str], str]]:
    """(label key, allowed values, the line that says so) of a PersistentVolume's required node affinity."""
    found: list[tuple[str, list[str], str]] = []
    lines = output[:100_000].splitlines()
    for i, line in enumerate(lines):
        m = _TERM.match(line)
        if m:
            found.append((m.group(1), [v.strip() for v in m.group(2).split(",") if v.strip()], line.strip()))
            continue
        k = _YAML_KEY.match(line)
        if k and i + 1 < len(lines) and _YAML_OP.match(lines[i + 1]):
            values = []
            for nxt in lines[i + 2 : i + 40]:
                v = _YAML_VALUE.match(nxt)
                if v:
                    values.append(v.group(1))
                elif nxt.strip() != "values:":
                    break
            if values:
                found.append((k.group(1), values, f"{k.group(1)} in [{', '.join(values)}]"))
    return found


def _node_labels(ctx: Context) -> dict[str, dict[str, str]]:
    """Each Ready node's labels, from node listings (LABELS column) and node descriptions."""
    nodes: dict[str, dict[str, str]] = {}
    for s in ctx.seen:
        if s.kind != "Node":
            continue
        if s.role is Role.LIST:
            for row in parse.table(s.rec.output[:400_000]):
                if row.get("NAME") and row.get("STATUS").startswith("Ready"):
                    pairs = (p.split("=", 1) for p in row.get("LABELS").split(",") if "=" in p)
                    nodes[row.get("NAME")] = dict(pairs)
        elif s.role is Role.DESCRIBE and s.name:
            nodes.setdefault(s.name, {}).update(_described_labels(s.rec.output))
    return nodes


def _described_labels(output: str) -> dict[str, str]:
    """`Labels:  a=b` and the indented `c=d` lines under it, in a description."""
    labels: dict[str, str] = {}
    inside = False
    for line in output[:50_000].splitlines():
        if line.startswith("Labels:"):
            inside, line = True, line[len("Labels:") :]
        elif not line.startswith((" ", "\t")):
            inside = False
        if inside and "=" in line:
            key, value = line.strip().split("=", 1)
            labels[key] = value
        elif inside and line.strip() and "=" not in line:
            inside = False
    return labels


def _conflicts(ctx: Context) -> list[tuple[CallRecord, str]]:
    """(output, the scheduler's line) for each pod that cannot go where its volume is."""
    out: list[tuple[CallRecord, str]] = []
    for rec in [*ctx.events, *ctx.pods]:
        # The event's message, as the scheduling finding quotes it (not the whole table or Events row).
        said = next((e.message for e in parse.events(rec.output[:200_000]) if _CONFLICT in e.message), "")
        said = said or parse.line_matching(rec.output[:200_000], re.escape(_CONFLICT))
        if said:
            out.append((rec, said))
    return out


def volume_zone(ctx: Context) -> list[Finding]:
    """A pod that cannot be scheduled because its volume is pinned where no node is: which volume, which zone
    (or node), and where the nodes are."""
    conflicts = _conflicts(ctx)
    if not conflicts:
        return []
    nodes = _node_labels(ctx)
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "PersistentVolume" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        claim = parse.field_value(s.rec.output, "Claim") or ""
        claim_name = claim.split("/")[-1]
        for key, values, line in _pinned(s.rec.output):
            there = [n for n, labels in nodes.items() if labels.get(key) in values]
            if nodes and there:
                continue  # a node is there: the conflict is elsewhere (taints, resources) or another volume's
            elsewhere = sorted({labels[key] for labels in nodes.values() if key in labels})
            where = f"{key} in [{', '.join(values)}]"
            cause = f"PersistentVolume {s.name}" + (f" (claim {claim_name})" if claim_name else "")
            cause += f" is pinned to {where}"
            if nodes:
                cause += f", and no Ready node is there (the nodes are in {', '.join(elsewhere) or 'other places'})"
            cause += ": the pod that mounts it can be scheduled nowhere (volume node affinity conflict)."
            value = values[0]
            out.append(
                Finding(
                    rule="volume_zone",
                    subject=claim_name or s.name,
                    cause=cause,
                    evidence=[ev(s.rec, line), ev(conflicts[0][0], conflicts[0][1])],
                    remediation=[
                        (
                            f"Bring a node back to {value} (add a node, or scale the node group, in {value}); or, if "
                            "the data can be rebuilt or restored, move the volume: snapshot it and restore it in a "
                            f"zone with nodes, or delete the PVC {claim_name or '(the claim)'} and its pod so a new "
                            "volume is provisioned there (the data on the old volume is lost unless restored)."
                        )
                    ],
                    # Surer than the scheduler's own line it explains (which says only "conflict").
                    confidence=0.92 if nodes else 0.7,
                )
            )
    return out
