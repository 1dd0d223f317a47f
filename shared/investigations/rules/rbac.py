"""RBAC: a service account the API forbids an action, and the Role bound to it that lacks the verb.

A log says `User "system:serviceaccount:ns:sa" cannot list resource "pods"`; the planner lists the namespace's
RoleBindings and reads them and the Roles they bind; this module reads which verbs a Role grants on a resource
(YAML `rules:` or the describe `PolicyRule:` table) so the report can say which verb is missing where.
"""

from __future__ import annotations

import re
from typing import NamedTuple

FORBIDDEN = re.compile(
    r"system:serviceaccount:([a-z0-9][-a-z0-9]*):([a-z0-9][-a-z0-9.]*)"
    r'\\?"? cannot ([a-z]+) resource \\?"([a-z0-9.-]+)\\?"'
)


class Denial(NamedTuple):
    """An action the API refused a service account, and the log line that says so."""

    namespace: str
    account: str
    verb: str
    resource: str
    line: str
    cluster: bool = False  # refused at the cluster scope (a ClusterRole is what would grant it)


def denials(log: str) -> list[Denial]:
    """The distinct refusals in a log (at most 5), each with its first line."""
    found: dict[tuple[str, str, str, str], Denial] = {}
    for line in log.splitlines()[-2000:]:
        m = FORBIDDEN.search(line[:2000])
        if m is None:
            continue
        key = (m.group(1), m.group(2), m.group(3), m.group(4))
        if key not in found:
            found[key] = Denial(*key, line=line.strip()[:300], cluster="cluster scope" in line[:2000])
    return list(found.values())[:5]


def granted_verbs(role: str, resource: str) -> tuple[set[str], str]:
    """The verbs a Role (YAML or describe text) grants on `resource` (plural, group suffix ignored), and a line
    to quote (the rule's verbs, or the Role's rules header when none names the resource)."""
    if "PolicyRule:" in role:
        return _from_describe(role, resource)
    return _from_yaml(role, resource)


def _from_describe(text: str, resource: str) -> tuple[set[str], str]:
    verbs: set[str] = set()
    quote = ""
    rows = text.split("PolicyRule:", 1)[1].splitlines()[1:200]
    for line in rows:
        cells = line.split()
        if not cells or cells[0].startswith("-") or cells[0] == "Resources":
            continue
        if cells[0].split(".")[0] in (resource, "*"):
            bracket = line[line.rfind("[") + 1 : line.rfind("]")] if "[" in line else ""
            verbs |= set(bracket.split())
            quote = quote or line.strip()
    return verbs, quote


def _from_yaml(text: str, resource: str) -> tuple[set[str], str]:
    verbs: set[str] = set()
    quote = ""
    for rule in re.split(r"\n- ", "\n" + text.split("rules:", 1)[-1])[1:50]:
        resources = _list(rule, "resources")
        if resource in resources or "*" in resources:
            granted = _list(rule, "verbs")
            verbs |= set(granted)
            quote = quote or f"resources: [{', '.join(resources)}] verbs: [{', '.join(granted)}]"
    return verbs, quote


def _list(block: str, key: str) -> list[str]:
    """A YAML list under `key:` (block `- x` items or flow `[x, y]`)."""
    lines = block.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip().lstrip("- ")
        if not stripped.startswith(f"{key}:"):
            continue
        rest = stripped.split(":", 1)[1].strip()
        if rest.startswith("["):
            return [x.strip().strip("'\"") for x in rest.strip("[]").split(",") if x.strip()]
        items = []
        for nxt in lines[i + 1 : i + 40]:
            s = nxt.strip()
            if not s.startswith("- ") or ":" in s:
                break
            items.append(s[2:].strip().strip("'\""))
        return items
    return []
