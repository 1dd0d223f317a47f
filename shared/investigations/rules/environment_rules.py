"""A service of one environment configured with another's hosts: a production pod that connects to
`db-staging.internal` (a copied values file, a config reload with the wrong profile). The environment is read
from what the pod says it is (an `Environment: PRODUCTION` line, `ENV=prod`, a profile, the namespace's name);
the hosts from its failing connections and its configuration."""

from __future__ import annotations

import re

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

_ENVS = {
    "production": ("prod", "production", "prd"),
    "staging": ("staging", "stage", "stg"),
    "development": ("dev", "development"),
    "test": ("test", "qa", "uat"),
}
_SAID_ENV = re.compile(
    r"(?i)\b(?:environment|env|profile|profiles_active|stage|deployment_env)\b[\"'\s]{0,3}[:=][\"'\s]{0,3}"
    r"([A-Za-z]{2,12})\b"
)
_HOST = re.compile(r"(?<![\w.-])([a-z0-9][-a-z0-9]{0,62}(?:\.[a-z0-9][-a-z0-9]{0,62}){0,6})(?::(\d{2,5}))?")
_FAILING = re.compile(r"(?i)refused|timed? ?out|unreachable|no route|not accessible|cannot connect|failed to connect")


def _env_of(word: str) -> str:
    w = word.lower()
    return next((env for env, words in _ENVS.items() if w in words), "")


def _host_env(host: str) -> str:
    parts = re.split(r"[-.]", host.lower())
    found = {_env_of(p) for p in parts} - {""}
    return found.pop() if len(found) == 1 else ""


def _declared(ctx: Context) -> tuple[str, CallRecord | None, str]:
    """The environment the workload says it runs in, with the output and line that say so."""
    for rec in [*ctx.logs, *ctx.pods, *ctx.gets]:
        for line in rec.output[:200_000].splitlines():
            m = _SAID_ENV.search(line[:500])
            if m and (env := _env_of(m.group(1))):
                return env, rec, line.strip()
    ns = str(ctx.state.alert.get("labels", {}).get("namespace") or "")
    env = next((e for part in re.split(r"[-.]", ns) if (e := _env_of(part))), "")
    return env, None, f"namespace {ns}" if env else ""


def environment_mismatch(ctx: Context) -> list[Finding]:
    """Hosts of another environment in a workload's failing connections or configuration."""
    env, said_rec, said = _declared(ctx)
    if not env:
        return []
    foreign: dict[str, tuple[CallRecord, str]] = {}
    sources = ctx.logs + [s.rec for s in ctx.seen if s.kind == "ConfigMap" and s.role is Role.DESCRIBE]
    for rec in sources:
        for line in rec.output[-200_000:].splitlines()[-2_000:]:
            if rec in ctx.logs and not _FAILING.search(line):
                continue
            for m in _HOST.finditer(line[:500]):
                host = m.group(1)
                other = _host_env(host) if "." in host or "-" in host else ""
                if other and other != env and host not in foreign:
                    foreign[host + (f":{m.group(2)}" if m.group(2) else "")] = (rec, line.strip())
        if len(foreign) >= 3:
            break
    if not foreign:
        return []
    hosts = list(foreign)[:3]
    rec, line = foreign[hosts[0]]
    other = _host_env(hosts[0])
    evidence = [ev(rec, line)] + ([ev(said_rec, said)] if said_rec is not None else [])
    return [
        Finding(
            rule="environment_mismatch",
            subject=str(rec.args.get("name") or hosts[0].split(":")[0]),
            cause=f"The workload runs as {env} ({said}) but is configured with {other} hosts ({', '.join(hosts)}), "
            f"which {env}'s network cannot reach or should not use: its configuration was changed or reloaded "
            f"with {other} settings.",
            evidence=evidence,
            remediation=[
                (
                    f"Restore the {env} hosts in the configuration it reads (ConfigMap, values, profile), or roll "
                    "back the configuration change, then reload or restart the pods."
                )
            ],
            # Two facts read together (where it runs, where it connects): surer than either failing line alone.
            confidence=0.85,
        )
    ]
