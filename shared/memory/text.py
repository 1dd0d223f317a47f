"""Tokens for lexical search, normalised error signatures, and normalised solution steps."""

from __future__ import annotations

import hashlib
import re

STOPWORDS = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its "
    "my no not of on or our so that the their then there these this those to was we were what when where "
    "which while who why will with you your after before again all any been being both during each few "
    "more most other same some such than too very just also get got keep keeps kept".split()
)
# Spellings agents and logs use for one thing; folding them lets a paraphrase find the stored title.
_ALIASES = {
    "k8s": "kubernetes",
    "kube": "kubernetes",
    "pg": "postgres",
    "postgresql": "postgres",
    "psql": "postgres",
    "mongo": "mongodb",
    "oomkilled": "oom",
    "oomkill": "oom",
    "crashloopbackoff": "crashloop",
    "crashlooping": "crashloop",
    "db": "database",
    "conn": "connection",
    "connections": "connection",
    "env": "environment",
    "vars": "variable",
    "var": "variable",
    "cert": "certificate",
    "certs": "certificate",
    "tls": "ssl",
    "dns": "dns",
    "timeouts": "timeout",
    "timed": "timeout",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "gh": "github",
    "ci": "pipeline",
    "secrets": "secret",
    "perms": "permission",
    "permissions": "permission",
    "denied": "deny",
    "refused": "refuse",
    "mem": "memory",
    "ram": "memory",
    "cpu": "cpu",
    "latency": "slow",
    "slowness": "slow",
    "deadlocked": "deadlock",
    "throttled": "throttle",
    "throttling": "throttle",
    "429": "ratelimit",
    "ratelimited": "ratelimit",
}
_TOKEN = re.compile(r"[a-z0-9]+")
_HEX = re.compile(r"^(0x)?[0-9a-f]{6,}$")


def _stem(token: str) -> str:
    # A few English suffixes only: enough for "pods"/"pod", "restarting"/"restart", without a stemmer's surprises.
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3 and not token.endswith("ss"):
            return token[: len(token) - len(suffix)] + keep
    return token


def tokens(text: str) -> list[str]:
    """Lowercase word tokens, aliases folded, stop words, numbers and hex ids dropped, light suffix stripping."""
    out = []
    for raw in _TOKEN.findall(text.lower()):
        raw = _ALIASES.get(raw, raw)
        if len(raw) < 2 or raw in STOPWORDS or raw.isdigit() or _HEX.match(raw):
            continue
        out.append(_ALIASES.get(_stem(raw), _stem(raw)))
    return out


_SIG_PATTERNS = [
    (
        re.compile(r"\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?\b", re.IGNORECASE),
        " ",
    ),  # timestamps
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b"), " "),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), " "),  # uuids
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{8,}\b", re.IGNORECASE), " "),  # hex ids, hashes, addresses
    (re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`"), " "),  # quoted values
    (re.compile(r"(?:[a-z]:)?(?:[\\/][\w.@-]+){2,}[\\/]?", re.IGNORECASE), " "),  # paths
    (re.compile(r"\b\d+(\.\d+)*\b"), " "),  # numbers, versions, ports, ips
]


def normalize_signature(signature: str) -> str:
    """An error signature with its variable parts (numbers, ids, paths, timestamps, quoted values) removed."""
    text = signature.strip().lower()
    for pattern, replacement in _SIG_PATTERNS:
        text = pattern.sub(replacement, text)
    # What remains are the words of the message (dotted names such as exception classes kept whole).
    return " ".join(re.findall(r"[a-z_]+(?:\.[a-z_]+)*", text))


def digest(text: str, size: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


def normalize_steps(steps: list[str]) -> list[str]:
    """Steps without list markers, case or spacing differences: what makes two submissions the same fix."""
    normalized = []
    for step in steps:
        s = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", step.strip().lower())
        s = re.sub(r"\s+", " ", s).strip(" .;")
        if s:
            normalized.append(s)
    return normalized


def steps_hash(steps: list[str]) -> str:
    return digest("\n".join(normalize_steps(steps)), 24)
