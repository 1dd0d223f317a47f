"""A runtime told to use more memory than its container may: a JVM heap (`-Xmx`), a Node.js old space
(`--max-old-space-size`) or a Go soft limit (`GOMEMLIMIT`) at or above the container's memory limit. The process
grows to what it was told, the kernel kills it at the limit (OOMKilled), and raising nothing else helps."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_view.values import bytes_text, quantity
from shared.investigations.rules.state import CallRecord, Finding

# Sizes as each runtime writes them: -Xmx3g / -Xmx3072m (JVM, binary units), --max-old-space-size=3072 (MiB),
# GOMEMLIMIT=3GiB. One token each, no nested quantifiers.
_SETTINGS = (
    ("JVM heap", re.compile(r"-Xmx(\d{1,9})([kKmMgGtT]?)\b")),
    ("Node.js heap", re.compile(r"--max-old-space-size[= ](\d{1,9})\b()")),
    ("Go memory limit", re.compile(r"\bGOMEMLIMIT[=:] ?[\"']?(\d{1,12})((?:[KMGT]i)?B?)\b")),
)
_JVM_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_GO_UNITS = {"B": 1, "": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
# Of a container's limit, what a heap may take: the rest goes to metaspace, threads, buffers and the runtime.
_HEAP_SHARE = 0.9


def _bytes(runtime: str, number: str, unit: str) -> float:
    if runtime == "JVM heap":
        return int(number) * _JVM_UNITS[unit.lower()]
    if runtime == "Node.js heap":
        return int(number) * 2**20
    return int(number) * _GO_UNITS.get(unit, 1)


def _settings(text: str) -> list[tuple[str, str, float]]:
    """(runtime, the line that sets it, bytes) for each memory setting in a text."""
    found: list[tuple[str, str, float]] = []
    for line in text[:400_000].splitlines():
        if len(line) > 2_000:
            continue
        for runtime, pattern in _SETTINGS:
            found += [(runtime, line.strip(), _bytes(runtime, m.group(1), m.group(2))) for m in pattern.finditer(line)]
    return found


def _limits(ctx: Context) -> list[tuple[CallRecord, str, str, float]]:
    """(pod description, pod, limit as written, bytes) for each container that was OOMKilled and has a limit."""
    out: list[tuple[CallRecord, str, str, float]] = []
    for rec in ctx.pods:
        for c in parse.containers(rec.output) or parse.yaml_containers(rec.output):
            if "OOMKilled" not in (c.state_reason(), c.last_reason()):
                continue
            limit = c.quantity("Limits", "memory")
            size = quantity(limit) if limit else None
            if size:
                out.append((rec, str(rec.args.get("name")), limit, size))
    return out


def heap_over_limit(ctx: Context) -> list[Finding]:
    """An OOMKilled container whose runtime is configured (in its logs, environment or config) to use as much
    memory as its limit allows, or more."""
    limits = _limits(ctx)
    if not limits:
        return []
    sources = ctx.logs + ctx.pods + ctx.gets
    for src in sources:
        for runtime, line, size in _settings(src.output):
            for pod_rec, pod, limit, limit_bytes in limits:
                if size < limit_bytes * _HEAP_SHARE:
                    continue
                setting = bytes_text(size)
                share = "above" if size > limit_bytes else "as large as"
                return [
                    Finding(
                        rule="heap_over_limit",
                        subject=pod,
                        cause=f"The {runtime} is set to {setting} (`{line[:120]}`), {share} the container's "
                        f"{limit} memory limit in pod {pod}: the process grows past the limit before its own "
                        "collector reclaims anything, and the kernel kills it (OOMKilled, exit code 137).",
                        evidence=[ev(src, line), ev(pod_rec, f"Limits: memory: {limit}")],
                        remediation=[
                            (
                                f"Set the {runtime} below the limit (about 75% of {limit}; for a JVM drop the fixed "
                                "-Xmx and use -XX:MaxRAMPercentage=75), or raise the memory limit above "
                                f"{setting} plus the runtime's overhead."
                            )
                        ],
                        confidence=0.92,
                    )
                ]
    return []
