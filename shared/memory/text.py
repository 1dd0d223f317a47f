"""Tokens for lexical search, normalised error signatures, and normalised solution steps."""

from __future__ import annotations

import hashlib
import re

from shared.memory.vocabulary import ALIASES, concepts, is_vocabulary_word

STOPWORDS = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its "
    "my no not of on or our so that the their then there these this those to was we were what when where "
    "which while who why will with you your after before again all any been being both during each few "
    "more most other same some such than too very just also get got keep keeps kept".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")
_HEX = re.compile(r"^(0x)?[0-9a-f]{6,}$")
# Where an identifier's words meet: "ServerSelectionTimeoutError", "OOMKilled", "getHTTPResponse".
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Index version 1 tokenizer (aliases and stemming), kept to query incidents indexed before version 2.
_LEGACY_ALIASES = {  # exactly index version 1's aliases
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
INDEX_VERSION = 2  # 1: words only; 2: identifier splitting, -ion/-e stemming and the vocabulary's concept tokens


def split_identifiers(text: str) -> str:
    """The text with camelCase identifiers split into words (`OOMKilled` -> `OOM Killed`), lowercased."""
    return _CAMEL.sub(" ", text).lower()


def _legacy_stem(token: str) -> str:
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3 and not token.endswith("ss"):
            return token[: len(token) - len(suffix)] + keep
    return token


_VOWEL = re.compile(r"[aeiouy]")


def _stem(token: str) -> str:
    """Light English stemming: plural and verb endings, then -ion after t/s and a final -e, so "evicted",
    "eviction" and "evicts", or "throttle", "throttles" and "throttled" meet; no dictionary, no surprises
    beyond that (numbers and short words are left alone). As in Porter's step 1, -ing and -ed go only when
    a vowel stays before them ("spring" stays, "spinning" goes), and a final -s not after -us, -is or -ss
    ("status", "analysis", "redis" stay whole)."""
    if token.endswith(("us", "is")) and not token.endswith("ies"):
        return token
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and not _VOWEL.search(token[: -len(suffix)]):
            return token
    token = _legacy_stem(token)
    if len(token) >= 6 and token.endswith(("tion", "sion")):
        token = token[:-3]
    if len(token) >= 5 and token.endswith("e") and not token.endswith("ee"):
        token = token[:-1]
    return token


_CHUNK = re.compile(r"[A-Za-z0-9]+")


def _words(text: str) -> list[str]:
    """Lowercase words of the text and, after them, the parts of camelCase identifiers (`OOMKilled` gives
    `oomkilled`, then `oom`, `killed`); a word the vocabulary knows whole (`PostgreSQL`) is not split."""
    out = _TOKEN.findall(text.lower())
    seen = set(out)
    for chunk in _CHUNK.findall(text):
        whole = chunk.lower()
        if whole in ALIASES or is_vocabulary_word(whole):
            continue
        for part in _TOKEN.findall(split_identifiers(chunk)):
            if part not in seen:
                seen.add(part)
                out.append(part)
    return out


def _keep(word: str) -> bool:
    return len(word) >= 2 and word not in STOPWORDS and not word.isdigit() and not _HEX.match(word)


def tokens(text: str) -> list[str]:
    """Search tokens: lowercase words (camelCase identifiers split too), aliases folded, stop words, numbers
    and hex ids dropped, light stemming; then the vocabulary's concept tokens (`c_oom`, `c_dns`, ...) the
    text names, error codes included (vocabulary.py)."""
    words = _words(text)
    out = []
    for raw in words:
        raw = ALIASES.get(raw, raw)
        if not _keep(raw):
            continue
        stemmed = _stem(raw)
        out.append(ALIASES.get(stemmed, stemmed))
    lowered = f"{text.lower()}\n{split_identifiers(text)}"
    return out + concepts(lowered, words, _stem)


def legacy_tokens(text: str) -> list[str]:
    """The tokens index version 1 stored (before identifier splitting, the new stemming and concepts): queries
    add them so incidents indexed then are still found."""
    out = []
    for raw in _TOKEN.findall(text.lower()):
        raw = _LEGACY_ALIASES.get(raw, raw)
        if not _keep(raw):
            continue
        out.append(_LEGACY_ALIASES.get(_legacy_stem(raw), _legacy_stem(raw)))
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
