"""Tools that take a kubectl command line (`command: "kubectl get pods -n shop"`) instead of typed arguments:
the planner's requests written as kubectl commands, and a command read back into the planner's terms.

Only read verbs are ever written (get, describe, logs, top, events); the investigation's secret filter still sees
the whole command."""

from __future__ import annotations

import shlex
from typing import NamedTuple

# What each planner request becomes; `{kind}` is kubectl's lower-case resource name.
_VERBS = {
    "describe": "describe",
    "pod_get": "describe",
    "list": "get",
    "pod_list": "get",
    "pod_list_all": "get",
    "namespaces": "get",
    "events": "get",
    "pod_log": "logs",
    "pod_top": "top",
    "node_top": "top",
}


class Parsed(NamedTuple):
    """A kubectl command read back: verb, kind, name, namespace, selectors, container, previous."""

    verb: str
    kind: str
    name: str
    namespace: str
    labels: str
    fields: str
    container: str
    previous: bool


def command(role: str, prefix: bool, **v: str | bool | None) -> str | None:
    """The kubectl command for one planner request, or None when the role has no read verb."""
    verb = _VERBS.get(role)
    if verb is None:
        return None
    kind = _KIND_OF_ROLE.get(role) or str(v.get("kind") or "").lower()
    parts = ["kubectl", verb] if prefix else [verb]
    if verb != "logs":
        # As people write them: `kubectl get pods`, `kubectl describe pod web-1`.
        parts.append(kind if v.get("name") or verb == "top" else plural(kind))
    if v.get("name"):
        parts.append(str(v["name"]))
    if v.get("namespace"):
        parts += ["-n", str(v["namespace"])]
    elif role == "pod_list_all" or (role == "list" and not v.get("name") and v.get("fields")):
        parts.append("-A")
    if v.get("labels"):
        parts += ["-l", str(v["labels"])]
    if v.get("fields"):
        parts.append(f"--field-selector={v['fields']}")
    parts += _tail(verb, role, kind, v)
    return " ".join(shlex.quote(p) for p in parts)


_KIND_OF_ROLE = {
    "pod_get": "pod", "pod_list": "pod", "pod_list_all": "pod", "pod_log": "pod", "pod_top": "pod",
    "events": "events", "namespaces": "namespaces", "node_top": "node",
}  # fmt: skip


def _tail(verb: str, role: str, kind: str, v: dict[str, str | bool | None]) -> list[str]:
    """The flags at the end: a log's container and previous run; a node's pods listed wide (their nodes and IPs)."""
    if verb == "logs":
        return (["-c", str(v["container"])] if v.get("container") else []) + (
            ["--previous"] if v.get("previous") else []
        )  # fmt: skip
    if role == "pod_list_all":
        return ["-o", "wide"]
    return []


def plural(kind: str) -> str:
    """kubectl's plural of a lower-case kind (`pod` -> `pods`, `networkpolicy` -> `networkpolicies`)."""
    if not kind or (kind.endswith("s") and not kind.endswith("ss")):
        return kind
    if kind.endswith(("ss", "x", "ch", "sh")):
        return kind + "es"
    if kind.endswith("y") and kind[-2:-1] not in "aeiou":
        return kind[:-1] + "ies"
    return kind + "s"


def parse(text: str) -> Parsed | None:
    """A kubectl command line read back (None when it is not one the planner could have written)."""
    try:
        words = shlex.split(text[:2_000])
    except ValueError:
        return None
    if words and words[0] == "kubectl":
        words = words[1:]
    if not words or words[0] not in ("get", "describe", "logs", "top"):
        return None
    verb, rest = words[0], words[1:]
    flags: dict[str, str] = {}
    plain: list[str] = []
    i = 0
    while i < len(rest):
        w = rest[i]
        if w in ("-n", "--namespace", "-l", "--selector", "-c", "--container", "-o") and i + 1 < len(rest):
            flags[w.lstrip("-")[:1]] = rest[i + 1]
            i += 2
            continue
        if w.startswith("--field-selector="):
            flags["f"] = w.split("=", 1)[1]
        elif w in ("--previous", "-p"):
            flags["p"] = "1"
        elif not w.startswith("-"):
            plain.append(w)
        i += 1
    kind, name = ("pod", plain[0] if plain else "") if verb == "logs" else (plain[0] if plain else "", "")
    if verb != "logs" and len(plain) > 1:
        name = plain[1]
    if "/" in kind and not name:
        kind, name = kind.split("/", 1)
    return Parsed(
        verb=verb, kind=kind, name=name, namespace=flags.get("n", ""), labels=flags.get("l", ""),
        fields=flags.get("f", ""), container=flags.get("c", ""), previous="p" in flags,
    )  # fmt: skip
