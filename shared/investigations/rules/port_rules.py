"""A Service that sends traffic to a port its pods do not listen on: `targetPort` 8080 while the container serves
on 3000. The endpoints exist and the pods are ready (their probes use the right port), yet every connection
through the Service is refused."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

_TARGET = re.compile(r"(?m)^TargetPort:\s+(\d{1,5})/")
_YAML_TARGET = re.compile(r"(?m)^[ \t]*targetPort:\s*['\"]?(\d{1,5})\b")
_LISTENING = re.compile(
    r"(?i)(?:listening|listen|serving|started|running|bound)\b[^\n]{0,40}?(?:port|on|at)\s*[:=]?\s*"
    r"(?:[\w.\[\]-]{0,40}:)?(\d{2,5})\b"
)
_PORTS = re.compile(r"(\d{1,5})/(?:TCP|UDP|SCTP)")
_YAML_PORT = re.compile(r"(?m)^[ \t]*-?[ \t]*containerPort:\s*['\"]?(\d{1,5})\b")
# `- Local:   http://localhost:3000`, `listening on [::]:8080`, `url: http://0.0.0.0:9000`.
_URL_PORT = re.compile(
    r"(?i)(?:local|listening|listen|serving|url|address|bound)\b[^\n]{0,30}?"
    r"(?:localhost|0\.0\.0\.0|\[::\]|127\.0\.0\.1|\*):(\d{2,5})\b"
)


def _container_ports(output: str) -> set[str]:
    ports: set[str] = set()
    for c in parse.containers(output[:100_000]):
        for key in ("Port", "Ports"):
            ports |= set(_PORTS.findall(c.value(key)))
    ports |= set(_YAML_PORT.findall(output[:100_000]))
    return ports - {"0"}


def _listening(logs: list[CallRecord], pods: set[str]) -> tuple[CallRecord, str, str] | None:
    for rec in logs:
        if str(rec.args.get("name") or "") not in pods and pods:
            continue
        for line in rec.output[:50_000].splitlines()[:400]:
            m = _URL_PORT.search(line[:500]) or _LISTENING.search(line[:500])
            if m:
                return rec, m.group(1), line.strip()
    return None


def target_ports(ctx: Context) -> list[Finding]:
    """Services whose targetPort is not a port their pods listen on."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Service" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        m = _TARGET.search(s.rec.output[:50_000]) or _YAML_TARGET.search(s.rec.output[:50_000])
        if not m:
            continue
        target = m.group(1)
        mine = [rec for rec in ctx.pods if str(rec.args.get("name") or "").startswith(s.name.rsplit("-svc", 1)[0])]
        mine = mine or [rec for rec in ctx.pods if rec.args.get("namespace") == s.namespace]
        declared = set().union(*(_container_ports(rec.output) for rec in mine)) if mine else set()
        heard = _listening(ctx.logs, {str(rec.args.get("name")) for rec in mine})
        actual = heard[1] if heard else (min(declared) if len(declared) == 1 else "")
        if not actual or actual == target or target in declared:
            continue
        said = f"its pods listen on {actual}"
        evidence = [ev(s.rec, parse.line_matching(s.rec.output[:50_000], re.escape(m.group(0).strip())) or m.group(0))]
        if heard:
            evidence.append(ev(heard[0], heard[2]))
            said += f" (the app's log: `{heard[2][:120]}`)"
        elif mine:
            evidence.append(ev(mine[0], parse.line_matching(mine[0].output, rf"\b{actual}/TCP")))
            said += " (containerPort)"
        out.append(
            Finding(
                rule="target_port",
                subject=s.name,
                cause=f"Service {s.name} sends traffic to port {target} (targetPort), but {said}: every "
                "connection through the Service is refused, although its endpoints exist and the pods are "
                "ready.",
                evidence=evidence,
                remediation=[
                    (
                        f"Set Service {s.name}'s targetPort to {actual} (or to the container port's name), or make "
                        f"the app listen on {target}; then check `kubectl get endpoints {s.name}` and a request "
                        "through the Service."
                    )
                ],
                confidence=0.85 if heard else 0.75,
            )
        )
    return out
