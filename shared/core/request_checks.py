"""Checks every HTTP route makes before any work: Host and Origin against the allow-list, JSON content types.

A web page can make a browser send a "simple" cross-origin POST (text/plain, no preflight) to a local
stack, or rebind a DNS name to 127.0.0.1; these checks refuse both. The MCP SDK makes the same Host and
Origin checks with the same lists (`allowed_hosts_and_origins`), so the rules cannot drift apart.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shared.core.errors import Forbidden, InvalidRequest

if TYPE_CHECKING:  # the edge imports this module at indexing, before pydantic is needed
    from shared.core.settings import Settings

LOCAL_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", "http://127.0.0.1", "http://localhost")
_JSON_TYPES = ("application/json",)
# A DNS name or an IPv4 address, at most 253 characters; '_' occurs in some internal names.
_HOST_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9_.])?")


class MisdirectedRequest(Forbidden):
    """A Host header this app does not answer to (DNS rebinding): 421, as the MCP SDK answers it."""

    @property
    def http_status(self) -> int:
        return 421


class UnsupportedMediaType(InvalidRequest):
    """A body whose content type is not the one the route parses: 415, the transport is wrong."""

    @property
    def http_status(self) -> int:
        return 415


def allowed_hosts_and_origins(settings: Settings, website_hostname: str | None) -> tuple[list[str], list[str]]:
    """The DNS-rebinding allow-list: the settings', the app's own Azure host name, and loopback in local runs."""
    hosts = list(settings.mcp_allowed_hosts)
    origins = list(settings.mcp_allowed_origins)
    if website_hostname:
        hosts += [website_hostname, f"{website_hostname}:443"]
        origins.append(f"https://{website_hostname}")
    if settings.is_local or settings.dev_mode:
        hosts += LOCAL_HOSTS
        origins += LOCAL_ORIGINS
    return hosts, origins


def _is_port(text: str) -> bool:
    """1-65535 in ASCII digits (str.isdigit() is also true for '٣' and '²')."""
    return 0 < len(text) <= 5 and text.isascii() and text.isdigit() and 0 < int(text) <= 65535


def parse_host(value: str) -> tuple[str, int | None]:
    """A Host header's (host, port), or InvalidRequest (400) when it is not `name[:port]` or `[ipv6][:port]`.

    Names are DNS names or IPv4 addresses (letters, digits, '.', '-', '_'; ASCII only), the port 1-65535.
    The local host's URL parser failed (500, empty body) on ports such as `7071.` or `99999999`; a Host
    header that is malformed is the client's mistake, refused before any work as every route's first check.
    """
    host, port = value.strip(), None
    if host.startswith("["):
        end = host.find("]")
        literal, rest = (host[1:end], host[end + 1 :]) if end > 0 else ("", "")
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            raise _malformed_host(value) from None
        if "%" in literal:  # a zone id names an interface of the client's machine, never this app
            raise _malformed_host(value)
        name = f"[{literal}]"
    else:
        name, colon, rest = host.partition(":")
        rest = colon + rest
        if not _HOST_NAME.fullmatch(name):
            raise _malformed_host(value)
    if rest:
        if not (rest.startswith(":") and _is_port(rest[1:])):
            raise _malformed_host(value)
        port = int(rest[1:])
    return name, port


def _malformed_host(value: str) -> InvalidRequest:
    shown = value[:100]
    return InvalidRequest.on_field(
        "(host)",
        "malformed Host header",
        f"Host header {shown!r} is not a host name or address with an optional port 1-65535",
        suggestions=["Send 'Host: <name>[:<port>]' as the URL you call has it (HTTP clients do this)."],
    )


def _allowed(value: str, allowed: Iterable[str]) -> bool:
    """Exact match, or `base:*` for any port (case-insensitive: host names are)."""
    value = value.strip().lower()
    for entry in allowed:
        entry = entry.strip().lower()
        if value == entry or (
            entry.endswith(":*") and value.startswith(entry[:-1]) and _is_port(value[len(entry) - 1 :])
        ):
            return True
    return False


def check_host_and_origin(headers: Mapping[str, str], url: str, hosts: list[str], origins: list[str]) -> None:
    """Raise unless Host is well formed (else 400) and allowed (else 421), and Origin, when a browser sent one,
    is allowed (else 403)."""
    lower = {k.lower(): v for k, v in headers.items()}
    host = lower.get("host") or urlsplit(url).netloc
    if host:
        parse_host(host)
    if not host or not _allowed(host, hosts):
        raise MisdirectedRequest(
            f"This app does not answer to host {host[:100]!r}",
            details={"host": host[:100]},
            recovery_suggestions=[
                "Call the app by its own host name; a custom domain goes in FIREBREAK_MCP_ALLOWED_HOSTS."
            ],
        )
    origin = lower.get("origin")
    if origin and not _allowed(origin, origins):
        raise Forbidden(
            f"Requests from origin {origin[:100]!r} are not allowed",
            details={"origin": origin[:100]},
            recovery_suggestions=[
                "Browser clients must be served from an origin listed in FIREBREAK_MCP_ALLOWED_ORIGINS."
            ],
        )


def require_json_content_type(content_type: str | None) -> None:
    """Raise 415 unless the body is declared JSON (`application/json` or `application/<x>+json`, any charset)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _JSON_TYPES or (media.startswith("application/") and media.endswith("+json")):
        return
    raise UnsupportedMediaType.on_field(
        "(content-type)",
        "expected application/json",
        f"Content-Type must be application/json, got {media[:100] or 'none'!r}",
        suggestions=[
            (
                "Send the arguments as a JSON object with 'Content-Type: application/json'"
                " (curl: -H 'content-type: application/json')."
            )
        ],
    )
