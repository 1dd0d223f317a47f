"""Who fails to log in: a server's log names the client address of each failed authentication (Postgres's
`connection received: host=10.12.6.41` before its FATAL line, MySQL's `Access denied for user 'x'@'10.1.2.3'`),
and a pod listing by IP names the pods, their workload and their age. Pods that started before credentials
changed keep the old ones (environment values are read at start)."""

from __future__ import annotations

import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.objects import ObjRef, owner_by_name
from shared.investigations.rules.state import CallRecord, Finding

_FAILED = re.compile(
    r"(?i)password authentication failed|authentication failed|access denied for user|login failed|"
    r"invalid (?:password|credentials)|auth(?:entication)? error"
)
_IP = re.compile(r"(?<![\d.])((?:10|172|192|100)\.\d{1,3}\.\d{1,3}\.\d{1,3})(?![\d.])")
_MAX_IPS = 2


def failing_clients(log: str) -> list[tuple[str, str]]:
    """(client IP, the failing line) for the first few distinct clients whose logins a server log shows failing."""
    lines = log[-200_000:].splitlines()[-3_000:]
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        if not _FAILED.search(line[:1000]):
            continue
        near = [line, *reversed(lines[max(0, i - 3) : i])]
        ip = next((m.group(1) for text in near if (m := _IP.search(text[:1000]))), "")
        if ip and ip not in found:
            found[ip] = line.strip()
        if len(found) >= _MAX_IPS:
            break
    return list(found.items())


def auth_clients(ctx: Context) -> list[Finding]:
    """The pods behind the addresses whose logins fail, with their workload and age."""
    out: list[Finding] = []
    for log in ctx.logs:
        clients = failing_clients(log.output)
        if not clients:
            continue
        ips = {ip for ip, _ in clients}
        rows: list[tuple[CallRecord, parse.Row]] = [
            (listing, row)
            for listing in ctx.lists
            for row in parse.table(listing.output[:400_000])
            if row.get("IP") in ips and row.get("NAME")
        ]
        if not rows:
            continue
        names = list(dict.fromkeys(r.get("NAME") for _, r in rows))
        ns = rows[0][1].get("NAMESPACE") or ""
        owner = owner_by_name(ObjRef("Pod", names[0], ns or None))
        ages = ", ".join(dict.fromkeys(r.get("AGE") for _, r in rows if r.get("AGE")))
        whose = f"{owner.kind} {owner.name}" if owner is not None else "their workload"
        restart = (
            f"kubectl rollout restart {owner.kind.lower()}/{owner.name}" + (f" -n {ns}" if ns else "")
            if owner is not None
            else "restart them"
        )
        out.append(
            Finding(
                rule="auth_clients",
                subject=names[0],
                cause=f"The logins that fail come from pod(s) {', '.join(names)} ({whose}"
                + (f", running for {ages}" if ages else "")
                + "): they present credentials the server no longer accepts; pods that started before the "
                "credentials changed (a rotated password) keep the old ones, since environment values are read at "
                "start.",
                evidence=[ev(log, clients[0][1]), ev(rows[0][0], rows[0][1].line.strip())],
                remediation=[
                    (
                        f"Restart them so they read the current credentials (`{restart}`), after checking the Secret "
                        "holds the new password; to avoid it next time, reload on Secret change (a reloader "
                        "annotation, or read the password from a mounted file)."
                    )
                ],
                confidence=0.85,
            )
        )
    return out
