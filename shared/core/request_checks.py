"""Checks every HTTP route makes before any work: Host and Origin against the allow-list, JSON content types.

A web page can make a browser send a "simple" cross-origin POST (text/plain, no preflight) to a local
stack, or rebind a DNS name to 127.0.0.1; these checks refuse both. The MCP SDK makes the same Host and
Origin checks with the same lists (`allowed_hosts_and_origins`), so the rules cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shared.core.errors import Forbidden, InvalidRequest

if TYPE_CHECKING:  # the edge imports this module at indexing, before pydantic is needed
    from shared.core.settings import Settings

LOCAL_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", "http://127.0.0.1", "http://localhost")
_JSON_TYPES = ("application/json",)


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


def _allowed(value: str, allowed: Iterable[str]) -> bool:
    """Exact match, or `base:*` for any port (case-insensitive: host names are)."""
    value = value.strip().lower()
    for entry in allowed:
        entry = entry.strip().lower()
        if value == entry or (
            entry.endswith(":*") and value.startswith(entry[:-1]) and value[len(entry) - 1 :].isdigit()
        ):
            return True
    return False


def check_host_and_origin(headers: Mapping[str, str], url: str, hosts: list[str], origins: list[str]) -> None:
    """Raise unless Host is allowed and Origin (when a browser sent one) is too."""
    lower = {k.lower(): v for k, v in headers.items()}
    host = lower.get("host") or urlsplit(url).netloc
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
    raise UnsupportedMediaType(
        f"Content-Type must be application/json, got {media[:100] or 'none'!r}",
        details={"errors": [{"field": "(content-type)", "problem": "expected application/json"}]},
        recovery_suggestions=[
            (
                "Send the arguments as a JSON object with 'Content-Type: application/json'"
                " (curl: -H 'content-type: application/json')."
            )
        ],
    )
