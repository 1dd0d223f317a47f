"""A node's filesystem running out of space or inodes: which pods on that node write to it.

node-exporter's alerts name the node, the device and the mount point, and nothing about who fills it. The
planner lists the node's pods (across namespaces), describes and reads the workload pods among them; the rule
finds the pod whose hostPath volume lies on the alerted mount point, or whose logs fail to write (`No space left
on device`), and says whether the kubelet's own filesystem is affected."""

from __future__ import annotations

import re
from typing import Any

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

_FS_ALERT = re.compile(r"(?i)filesystem|disk ?(?:space|full|usage)|inode|outoffiles|outofspace|space ?filling")
_DISK_FULL = re.compile(r"No space left on device|ENOSPC|\(28[,:)]|disk quota exceeded", re.IGNORECASE)
_HOST_PATH = re.compile(r"^\s*Path:\s+(/\S{0,500})")
_YAML_HOST_PATH = re.compile(r"^\s*path:\s+['\"]?(/[^'\"\s]{0,500})")
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "monitoring", "kube-monitoring"})
_MAX_PODS = 3


def filesystem_alert(alert: dict[str, Any]) -> str | None:
    """The mount point a node-filesystem alert is about ("" when it names none), or None for other alerts."""
    labels = alert.get("labels") or {}
    text = " ".join([str(labels.get("alertname") or ""), str(alert.get("title") or "")])
    text += " " + " ".join(str(v) for v in (alert.get("annotations") or {}).values())
    if not (_FS_ALERT.search(text) and ("mountpoint" in labels or "device" in labels or "node" in text.lower())):
        return None
    return str(labels.get("mountpoint") or "")


_DISK_PRESSURE = re.compile(r"(?m)^[ \t]*DiskPressure\s+True")


def disk_pressure(node_describe: str) -> bool:
    """The node reports DiskPressure: its root filesystem (the kubelet's nodefs) is filling up."""
    return bool(_DISK_PRESSURE.search(node_describe[:100_000]))


def node_workload_rows(listing: str) -> list[parse.Row]:
    """The node's workload pods (not the cluster's own agents, not finished ones), at most a few."""
    rows = [
        r
        for r in parse.table(listing[:400_000])
        if r.get("NAME") and r.get("NAMESPACE") not in SYSTEM_NAMESPACES and r.get("STATUS") != "Completed"
    ]
    return rows[:_MAX_PODS]


def _inodes(alert: dict[str, Any]) -> bool:
    text = str((alert.get("labels") or {}).get("alertname") or "") + " " + str(alert.get("description") or "")
    return bool(re.search(r"(?i)inode|outoffiles|files left", text))


def _host_paths(output: str) -> list[str]:
    lines = output[:100_000].splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        m = _HOST_PATH.match(line)
        if m and any("HostPath" in prev for prev in lines[max(0, i - 2) : i]):
            found.append(m.group(1))
        y = _YAML_HOST_PATH.match(line)
        if y and i and "hostPath" in lines[i - 1]:
            found.append(y.group(1))
    return found


def _under(path: str, mountpoint: str) -> bool:
    if mountpoint == "/":
        return path.startswith("/")
    mount = mountpoint.rstrip("/")
    return bool(mount) and (path == mount or path.startswith(mount + "/"))


def node_filesystem(ctx: Context) -> list[Finding]:
    """Which pod fills the alerted node filesystem: a hostPath on its mount point, a write that fails."""
    mountpoint = filesystem_alert(ctx.state.alert)
    described = [s for s in ctx.seen if s.role in (Role.DESCRIBE, Role.POD_GET) and not s.rec.is_error]
    node = next((s for s in described if s.kind == "Node"), None)
    if mountpoint is None and node is not None and disk_pressure(node.rec.output):
        mountpoint = "/"  # DiskPressure is the kubelet's root filesystem: any hostPath on it counts
    if mountpoint is None:
        return []
    full_logs = {
        str(rec.args.get("name") or ""): (rec, line)
        for rec in ctx.logs
        if (line := parse.line_matching(rec.output[-200_000:], _DISK_FULL.pattern, re.IGNORECASE))
    }
    what = "inodes (files)" if _inodes(ctx.state.alert) else "space"
    out: list[Finding] = []
    for s in described:
        if s.kind in ("Node", "Namespace"):
            continue
        paths = [p for p in _host_paths(s.rec.output) if _under(p, mountpoint)]
        pod = s.name if s.kind == "Pod" else next((p for p in full_logs if p.startswith(s.name + "-")), "")
        failing = full_logs.get(pod)
        if not paths and not failing:
            continue
        out.append(_finding(s.kind, s.name, s.rec, paths, failing, mountpoint, what, node.rec if node else None))
    return out


def _finding(
    kind: str, name: str, rec: CallRecord, paths: list[str], failing: tuple[CallRecord, str] | None,
    mountpoint: str, what: str, node: CallRecord | None,
) -> Finding:  # fmt: skip
    where = f"the filesystem mounted at {mountpoint}" if mountpoint else "the node's filesystem"
    cause = f"{kind} {name}"
    cause += f" writes to hostPath {paths[0]} on {where}" if paths else f" runs on the node and writes to {where}"
    cause += f", which is running out of {what}"
    if failing:
        cause += f"; its writes already fail: `{failing[1][:160]}`"
    if what.startswith("inodes"):
        cause += " (many small files use up the inodes before the bytes run out)"
    evidence = ([ev(rec, f"Path:          {paths[0]}")] if paths else []) + ([ev(*failing)] if failing else [])
    pressure = parse.line_matching(node.output[:100_000], r"^\s*DiskPressure\s+False") if node else ""
    if pressure and mountpoint not in ("", "/", "/var", "/var/lib/kubelet"):
        cause += "; the kubelet's own filesystem is fine (DiskPressure False), so pods are not evicted for it"
        evidence.append(ev(node, pressure))  # type: ignore[arg-type]
    fix = f"Bound what {name} keeps on {paths[0] if paths else mountpoint or 'the node'}: cap its size" + (
        " and file count (a cache's max_size/inactive, log rotation), purge old files" if what.startswith("inodes")
        else " (retention, rotation), delete what is no longer needed"
    ) + "; or give it storage that fits (a volume of its own"  # fmt: skip
    fix += ", a filesystem made with more inodes or XFS)" if what.startswith("inodes") else ", a larger disk)"
    return Finding(
        rule="node_filesystem", subject=name, cause=cause + ".", evidence=evidence, remediation=[fix],
        confidence=0.85 if (paths and failing) else 0.7,
    )  # fmt: skip
