"""Planned tool calls that would read Secrets, credentials or a process's environment: a word filter, the second line.

This is not the control. What a steered planner can do is bounded by the tools it is offered (tool_policy.py:
only tools their server marks read-only, or that an operator allowed by name); this filter then drops calls whose
arguments name what an investigation must not record (a Secret's data lands in a record the whole workspace
reads, and base64 passes redaction). A word list can always be talked round (a command can build its words at run
time in ways no filter sees), so each argument is first brought to the forms a shell, a URL decoder or a
Unicode-aware reader would see, and every form is searched: shell quoting and escapes (`sec''rets`, `sec""rets`,
`s\\ecrets`, `$'\\x73ecrets'`), expansions that vanish or carry the word (`sec${x}rets`, `$(...)`, backticks),
brace and glob patterns (`sec{r,}ets`, `/proc/*/env*`), URL-encoding (once or more), case and Unicode look-alikes.
Over-refusing is the safe side here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import unquote

# Arguments that name a thing are not searched for the word "secret" (a pod called "secret-santa" is not a
# Secret) while they look like a name; anything else in them (a space, a slash, a quote) is searched for the
# commands and paths below all the same.
_NAME_KEYS = frozenset({"name", "namespace", "container", "pod", "labelselector", "fieldselector", "reason"})
_PLAIN_NAME = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,251}[a-z0-9])?", re.IGNORECASE)

_SECRET = re.compile(r"secret")
# Commands and paths that print an environment or read credentials (searched in the normal forms, lower case).
_EXPOSES = re.compile(
    r"printenv"
    r"|(?:^|[\s;&|(`!{])(?:\S*/)?env\s*(?:$|[;&|)>`}]|-0|--null)"  # `env` run on its own: prints the environment
    r"|/proc/[^/\s]*/environ|(?:^|/)environ\b"
    r"|(?:^|[\s;&|(`])(?:export|declare|typeset)\s+-[a-z]*[px]"
    r"|(?:^|[\s;&|(`])ps\s+[a-z]*e[a-z]*(?:\s|$)"  # BSD-style `ps e`/`ps auxe` shows each process's environment
    r"|run/secrets|serviceaccount/token|kubeconfig|\.kube/config|\.aws/credentials|/etc/shadow|id_rsa|\.ssh/"
    r"|(?:^|/)\.env(?:$|[\s.])"
)
# Commands that turn text the filter cannot read into what runs or is read: the filter cannot vouch for them.
_DECODES = re.compile(
    r"base64\s+(?:-[a-z]*d|--decode|-D)|xxd\s+-[a-z]*r|\beval\b|\|\s*(?:rev|sh|bash|zsh|dash)\b|openssl\s+\S+\s+-d\b"
)
_GLOB = re.compile(r"[*?\[]")
_GLOB_TARGETS = ("secret", "secrets", "printenv", "environ", "kubeconfig", "shadow", "credentials", "id_rsa")
_TOOL_WORDS = frozenset({"secret", "secrets", "env", "environ", "printenv", "environment", "credentials"})

_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_NUMERIC_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{1,3}))")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}
# Shell expansions: parameter ${...}, command $(...) and `...`, and plain $name / $1 / $@.
_EXPANSION_INNER = re.compile(r"\$\{([^{}]*)\}|\$\(([^()]*)\)|`([^`]*)`")
_VARIABLE = re.compile(r"\$(?:[a-z_][a-z0-9_]*|[0-9@*#?$!-])", re.IGNORECASE)
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
_TOKEN_SPLIT = re.compile(r"[\s/;&|()<>=,:'\"`{}~]+")
_MAX_FORMS = 32


NAMES_SECRETS = "it names Secrets"
EXPOSES = "it would print an environment or read credentials"
DECODES = "it decodes or builds a command the filter cannot read"


def secret_read(tool: str, args: dict[str, Any]) -> str | None:
    """Why the call would read a Secret, credentials or an environment (a note's wording), or None.

    `tool`'s name and every argument (keys too) are searched in all their normal forms; an argument that names
    a thing (`name`, `namespace`, `pod`, selectors...) is exempt from the word "secret" while it looks like a name.
    """
    for form in normal_forms(tool):
        if _SECRET.search(form):
            return NAMES_SECRETS
        if any(part in _TOOL_WORDS for part in re.split(r"[^a-z0-9]+", form)):
            return EXPOSES
    for key, text in _strings(args):
        names_a_thing = key in _NAME_KEYS
        if names_a_thing and _PLAIN_NAME.fullmatch(text):
            continue
        for form in normal_forms(text):
            globbed = _glob_target(form)
            if not names_a_thing and (_SECRET.search(form) or globbed in ("secret", "secrets")):
                return NAMES_SECRETS
            if (globbed and "secret" not in globbed) or _EXPOSES.search(form):
                return EXPOSES
            if _DECODES.search(form):
                return DECODES
    return None


def reads_secrets(tool: str, args: dict[str, Any]) -> bool:
    """A call that would read Kubernetes Secrets, credentials or a process environment (see secret_read)."""
    return secret_read(tool, args) is not None


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(lower-cased key it sits under, string) for every string in the arguments, dict keys included."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield "", str(k)
            yield from _strings(v, str(k).lower())
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def normal_forms(text: str) -> list[str]:
    """`text` as the readers of a tool argument may see it, lower case: as given, URL-decoded, and as a shell reads
    it (quotes and escapes removed, ANSI-C strings decoded, expansions dropped or opened, braces expanded), with and
    without printf-style numeric escapes decoded. Bounded: a few dozen forms of a string of at most a few KiB.
    """
    base = _url_decoded(_visible(text))
    forms: list[str] = [base.casefold()]
    for numeric in (False, True):
        shell = _ANSI_C.sub(lambda m: _decode_escapes(m.group(1), simple=True), base)
        if numeric:
            shell = _decode_escapes(shell, simple=False)
        shell = re.sub(r"\\\n", "", shell)
        shell = re.sub(r"\\(.)", r"\1", shell, flags=re.DOTALL)
        shell = shell.replace('$"', '"').replace("'", "").replace('"', "")
        for joined in (True, False):
            forms += _braces_expanded(_expansions(shell, joined=joined).casefold())
    unique = list(dict.fromkeys(forms))
    return unique[:_MAX_FORMS]


def _visible(text: str) -> str:
    """NFKC (full-width and other look-alike letters become plain ones) without invisible format characters."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


def _url_decoded(text: str) -> str:
    for _ in range(3):  # %2573 is %73 is s
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def _decode_escapes(text: str, *, simple: bool) -> str:
    """Numeric escapes (\\xHH, \\uHHHH, \\UHHHHHHHH, \\NNN octal) decoded; with `simple`, \\n \\t ... and \\c too."""

    def one(m: re.Match[str]) -> str:
        hex2, hex4, hex8, octal = m.groups()
        code = int(hex2 or hex4 or hex8, 16) if (hex2 or hex4 or hex8) else int(octal, 8)
        return chr(code) if code < 0x110000 else ""

    text = _NUMERIC_ESCAPE.sub(one, text)
    if simple:
        text = re.sub(r"\\(.)", lambda m: _SIMPLE_ESCAPES.get(m.group(1), m.group(1)), text, flags=re.DOTALL)
    return text


def _expansions(text: str, *, joined: bool) -> str:
    """Shell expansions removed (`sec${x}rets` -> secrets: they may expand to nothing) or opened to their text
    (`${x:-secrets}`, `$(echo secrets)` -> the word stays, spaced off)."""
    for _ in range(5):  # nested $( $( ) ) from the inside out
        opened = _EXPANSION_INNER.sub(lambda m: "" if joined else f" {m.group(1) or m.group(2) or m.group(3)} ", text)
        if opened == text:
            break
        text = opened
    return _VARIABLE.sub("" if joined else " ", text)


def _braces_expanded(text: str) -> list[str]:
    """`a{b,c}d` -> abd, acd (the shell's brace expansion), at most _MAX_FORMS results."""
    done: list[str] = []
    todo = [text]
    while todo and len(done) + len(todo) <= _MAX_FORMS:
        current = todo.pop()
        m = _BRACES.search(current)
        if m is None:
            done.append(current)
            continue
        todo += [current[: m.start()] + option + current[m.end() :] for option in m.group(1).split(",")]
    return done + todo[: max(0, _MAX_FORMS - len(done))]


def _glob_target(form: str) -> str | None:
    """The secret-looking name a glob word would expand to (`sec*`, `/proc/*/env*`, `[s]ecrets`), or None."""
    for token in _TOKEN_SPLIT.split(form):
        if _GLOB.search(token) and re.search(r"[a-z]", token):
            hit = next((t for t in _GLOB_TARGETS if fnmatchcase(t, token)), None)
            if hit is not None:
                return hit
    return None
