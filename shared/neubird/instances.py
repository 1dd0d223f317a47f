"""NeuBird instance URLs: the spec's normalisation (neubird_switch_instance) and the host allow-list.

`normalise_base_url` implements the spec's table (`prod` -> `https://prod.app.neubird.ai/api`, ...) and
refuses, before any allow-list is consulted, everything that is not a plain `scheme://host[:port][/api]`:
non-ASCII (IDNA look-alikes: use the `xn--` form), whitespace or control characters inside, backslashes,
percent-encoding, userinfo (`@`), query or fragment, paths other than `/api`, schemes other than
http/https, scheme-relative `//host`, a trailing dot, malformed hosts and ports, more than 2048 characters.
It keeps the host's case as typed (the spec shows `https://customerA.app.neubird.ai/api`); hosts are
compared case-insensitively everywhere. `http://` is kept as typed so that `host_allowed` can refuse it.

`host_allowed` is the security decision: a URL passes when it is one of `always` (the configured
NEUBIRD_BASE_URL, compared by scheme + host + port, so an http loopback fake works locally), or when it
is https and its host matches one of `patterns`:

- `*.app.neubird.ai` — one or more labels before `.app.neubird.ai` (not the bare `app.neubird.ai`),
  on the default port (443) only;
- `app.neubird.ai`, `127.0.0.1`, `[::1]` — exactly that host, default port only;
- `host:port`, `*.suffix:port` — the same, on exactly that port.

Patterns are case-insensitive; a malformed pattern (`*`, `*foo.com`, `a.*.com`, a bad port) matches
nothing (`invalid_patterns` lists them so settings can be checked). A wildcard never matches an IP literal.

Single labels without a dot are subdomains of `app.neubird.ai` (the spec's rule), except `localhost`,
which stays the host `localhost` (and is then refused by the default allow-list).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.core.errors import ValidationFailed
from shared.neubird.errors import neubird_error

MAX_URL_CHARS = 2048
NEUBIRD_DOMAIN = "app.neubird.ai"
API_PATH = "/api"

# The spec's error suggestions (neubird_switch_instance, "Error Response Example").
SPEC_SUGGESTIONS: tuple[str, ...] = (
    'Verify the base URL format is correct (e.g., "https://app.neubird.ai/api")',
    "Ensure the URL includes the /api path",
    "Check that the instance is accessible",
)
EXAMPLES: tuple[str, ...] = ("prod", "customerA", "prod.app.neubird.ai", "https://prod.app.neubird.ai/api")

_DEFAULT_PORTS = {"https": 443, "http": 80}
# Bounded, anchored, no nested quantifiers: linear time.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?", re.IGNORECASE)
_SCHEME = re.compile(r"([a-z][a-z0-9+.-]{0,30}):", re.IGNORECASE)
_PORT = re.compile(r"[0-9]{1,5}")


@dataclass(frozen=True)
class _Url:
    scheme: str
    host: str  # as typed (case kept); IPv6 in brackets
    port: int | None  # None = the scheme's default

    @property
    def effective_port(self) -> int:
        return self.port if self.port is not None else _DEFAULT_PORTS[self.scheme]

    @property
    def origin_key(self) -> tuple[str, str, int]:
        return (self.scheme, self.host.lower(), self.effective_port)

    def base(self) -> str:
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{self.host}{port}{API_PATH}"


def normalise_base_url(text: str) -> str:
    """The API base URL `text` names, per the spec's table; ValidationFailed (kind validation) if malformed."""
    return _parse(text).base()


def host_allowed(url: str, patterns: Sequence[str], *, always: Sequence[str] = ()) -> bool:
    """Whether `url` may receive the account's credentials (see the module docstring for the rules)."""
    try:
        target = _parse(url)
    except ValidationFailed:
        return False
    if any(_origin(allowed) == target.origin_key for allowed in always):
        return True
    if target.scheme != "https":
        return False
    return any(_pattern_matches(pattern, target) for pattern in patterns)


def invalid_patterns(patterns: Sequence[str]) -> list[str]:
    """The patterns that can never match (malformed); empty when all are usable."""
    return [p for p in patterns if _split_pattern(p) is None]


def console_url(base_url: str) -> str:
    """The web console of an API base: the base without its `/api` suffix (for session links)."""
    base = base_url.rstrip("/")
    return base.removesuffix(API_PATH)


def _origin(configured: str) -> tuple[str, str, int] | None:
    """Scheme, host and port of a configured URL (whatever its path), or None when it has none."""
    try:
        return _parse(configured).origin_key
    except ValidationFailed:
        pass
    scheme, sep, rest = configured.strip().partition("://")
    if not sep:
        return None
    try:
        return _parse(f"{scheme}://{rest.split('/', 1)[0]}").origin_key
    except ValidationFailed:
        return None


# -- parsing ----------------------------------------------------------------------------------------------


def _parse(text: str) -> _Url:
    """`_parse_unshown`, with the input echoed in the error when it cannot hold a credential (no `@`)."""
    try:
        return _parse_unshown(text)
    except ValidationFailed as error:
        if not isinstance(text, str) or "@" in text or len(text) > 200 or not text.strip():
            raise
        raise _invalid(error.details["reason"], shown=text) from None


def _parse_unshown(text: str) -> _Url:
    if not isinstance(text, str) or not text.strip():
        raise _invalid("it is empty")
    if len(text) > MAX_URL_CHARS:
        raise _invalid(f"it is longer than {MAX_URL_CHARS} characters")
    text = text.strip(" \t\r\n")
    if not text.isascii():
        raise _invalid("it has non-ASCII characters (write an internationalised host in its xn-- form)")
    if any(not ("!" <= c <= "~") for c in text):
        raise _invalid("it has spaces or control characters inside")
    for char, why in (
        ("\\", "backslashes"),
        ("%", "percent-encoding"),
        ("@", "user information (credentials never go in the URL)"),
        ("?", "a query"),
        ("#", "a fragment"),
    ):
        if char in text:
            raise _invalid(f"it has {why}")
    if text.startswith("//"):
        raise _invalid("it has no scheme (write https://host or just the host)")
    scheme, rest = _split_scheme(text)
    authority, slash, path = rest.partition("/")
    if slash and path not in ("", "api", "api/"):
        raise _invalid(f"its path is not {API_PATH} (give the instance, not a page or API route)")
    host, port = _split_authority(authority)
    if "." not in host and not host.startswith("[") and host.lower() != "localhost" and scheme is None:
        host = f"{host}.{NEUBIRD_DOMAIN}"
    scheme = scheme or "https"
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    return _Url(scheme, host, port)


def _split_scheme(text: str) -> tuple[str | None, str]:
    """(scheme, the rest) — only http/https; `host:port` is not mistaken for a scheme."""
    m = _SCHEME.match(text)
    after = text[m.end() :] if m else ""
    if m is None or after[:1].isdigit() or ("." in m.group(1) and not after.startswith("//")):
        return None, text  # no scheme, or a `host:port` (a dotted name before the colon is a host)
    scheme = m.group(1).lower()
    if scheme not in _DEFAULT_PORTS:
        raise _invalid(f"its scheme {scheme!r} is not https (or http)")
    if not after.startswith("//"):
        raise _invalid("its scheme is not followed by //")
    return scheme, text[m.end() + 2 :]


def _split_authority(authority: str) -> tuple[str, int | None]:
    if not authority:
        raise _invalid("it has no host")
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise _invalid("its IPv6 address has no closing bracket")
        host, after = authority[: end + 1], authority[end + 1 :]
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise _invalid("its IPv6 address is malformed") from None
        if after and not after.startswith(":"):
            raise _invalid("it has characters after the IPv6 address")
        port_text = after[1:] if after else None
    else:
        host, colon, port_text_or_empty = authority.partition(":")
        port_text = port_text_or_empty if colon else None
        _check_host(host)
    return host, _port(port_text)


def _check_host(host: str) -> None:
    if not host:
        raise _invalid("it has no host")
    if host.endswith("."):
        raise _invalid("its host ends with a dot")
    if len(host) > 253:
        raise _invalid("its host is longer than 253 characters")
    labels = host.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise _invalid("its host is not a valid host name")
    if labels[-1].isdigit():
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise _invalid("its host is neither a host name nor a dotted IPv4 address") from None


def _port(text: str | None) -> int | None:
    if text is None:
        return None
    if not _PORT.fullmatch(text) or text.startswith("0") or not 1 <= int(text) <= 65535:
        raise _invalid("its port is not a number from 1 to 65535")
    return int(text)


# -- patterns ---------------------------------------------------------------------------------------------


def _split_pattern(pattern: str) -> tuple[bool, str, int | None] | None:
    """(wildcard, host or suffix, port) of a pattern, or None when it is malformed."""
    text = pattern.strip().lower()
    wildcard = text.startswith("*.")
    try:
        url = _parse("https://" + (f"x{text[1:]}" if wildcard else text))
    except ValidationFailed:
        return None
    if "*" in url.host:
        return None
    host = url.host.lower()
    if wildcard:
        if host.startswith("[") or _is_ipv4(host[2:]):
            return None
        host = host[1:]  # ".app.neubird.ai"
    port_given = ":" in text.rsplit("]", 1)[-1]
    return wildcard, host, url.effective_port if port_given else None


def _pattern_matches(pattern: str, target: _Url) -> bool:
    split = _split_pattern(pattern)
    if split is None:
        return False
    wildcard, host, port = split
    if target.effective_port != (port if port is not None else _DEFAULT_PORTS["https"]):
        return False
    target_host = target.host.lower()
    if wildcard:
        return target_host.endswith(host) and len(target_host) > len(host) and not _is_ip(target_host)
    return target_host == host


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def _is_ip(host: str) -> bool:
    return host.startswith("[") or _is_ipv4(host)


def _invalid(reason: str, *, shown: str | None = None) -> ValidationFailed:
    """The spec's error: 'Invalid base URL format' with the reason; the input only when `shown` (never with `@`)."""
    echo = f"{shown!r}: " if shown is not None else ""
    error = neubird_error(
        ValidationFailed,
        "validation",
        f"Invalid base URL format: {echo}{reason}.",
        details={"field": "base_url", "reason": reason, "examples": list(EXAMPLES)},
        recovery=list(SPEC_SUGGESTIONS),
    )
    assert isinstance(error, ValidationFailed)
    return error
