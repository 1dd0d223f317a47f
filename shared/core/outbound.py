"""The one guard for outbound URLs a caller chooses (runbook URLs, collector base URLs, NeuBird instances, MCP servers).

https only unless FIREBREAK_OUTBOUND_ALLOW_HTTP; no userinfo; and every address the host resolves to must be
public (`shared.core.addresses`: an explicit table of the IANA special-purpose blocks, IPv6 outside
2000::/3, and the IPv4 address inside every translation or tunnel form) unless the feature's allow-list
admits it for the URL's port. A guard is built for one feature (`Feature`): its list is
FIREBREAK_OUTBOUND_<FEATURE>_ALLOWED_HOSTS plus the global FIREBREAK_OUTBOUND_ALLOWED_HOSTS, which keeps its
old meaning (every feature) for deployments that set it; entries are `host`, `host:port`, a CIDR or an
address with a port (`shared.core.allow_list`), so allow-listing an MCP server's host and port opens neither
its other ports nor that host to runbook or collect.run URLs. The platform's own endpoints (Azure's wire
server 168.63.129.16, the metadata services) look public or sit in allow-listable ranges and are refused
always: no deployment has a reason to probe them. Callers connect to the address the guard returns, not to
the name again, so a DNS answer cannot change between the check and the connection.

Every refusal of a resolved host says the same words, whether the name does not resolve, resolves to a
private or platform address, or resolves to an address allow-listed for another port or feature, and never
names the address: otherwise the guard would be an oracle for internal DNS names. What remains is timing (a
name that does not resolve may be answered sooner or later than one that does); the guard does not hide it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from shared.core.addresses import IPAddress, embedded_ipv4, is_public, judged_by_ipv4_alone
from shared.core.allow_list import AllowEntry, parse_entries
from shared.core.errors import ValidationFailed
from shared.core.settings import Settings

__all__ = ["PLATFORM_ADDRESSES", "Feature", "OutboundGuard", "Target", "embedded_ipv4"]

# Never reachable, whatever the allow-list says: Azure's wire server (DHCP, DNS, the VM agent's
# channel), the instance metadata services of Azure/AWS/GCP/OCI (IPv4 and AWS's IPv6) and
# Alibaba's metadata address.
PLATFORM_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "168.63.129.16",
        "169.254.169.254",
        "169.254.170.2",
        "169.254.169.253",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "100.100.100.200",
        "192.0.0.192",
    )
)

# The features that reach caller-chosen URLs, and the Settings field of each one's allow-list.
Feature = Literal["runbooks", "collect", "neubird", "mcp"]
FEATURE_FIELDS: dict[Feature, str] = {
    "runbooks": "outbound_runbooks_allowed_hosts",
    "collect": "outbound_collect_allowed_hosts",
    "neubird": "outbound_neubird_allowed_hosts",
    "mcp": "outbound_mcp_allowed_hosts",
}
GLOBAL_FIELD = "outbound_allowed_hosts"


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    address: str  # the checked IP to connect to


def _refuse(url_field: str, problem: str, recovery: str) -> ValidationFailed:
    return ValidationFailed.on_field(
        url_field,
        problem,
        f"{url_field}: {problem}",
        suggestions=[recovery],
    )


class OutboundGuard:
    """Checks caller-chosen URLs for one feature (`feature=None`: the global allow-list alone, for tools and tests)."""

    def __init__(self, settings: Settings, feature: Feature | None = None) -> None:
        self._allow_http = settings.outbound_allow_http
        self.feature = feature
        entries = list(getattr(settings, GLOBAL_FIELD))
        if feature is not None:
            entries += getattr(settings, FEATURE_FIELDS[feature])
        self._entries: tuple[AllowEntry, ...] = parse_entries(entries)
        names = Settings.env_names()
        setting = names[FEATURE_FIELDS[feature]] if feature is not None else names[GLOBAL_FIELD]
        self._recovery = (
            f"Use a public https URL. A private host needs an entry (host:port, CIDR or address:port) in {setting} "
            "on the deployment; platform and metadata addresses are never reachable."
        )

    def check_url(self, url: str, url_field: str = "url") -> tuple[str, str, int]:
        """(scheme, host, port) of an acceptable URL, before any resolution."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise _refuse(url_field, f"not a valid URL ({exc})", self._recovery) from None
        scheme = parts.scheme.lower()
        if scheme not in ("https", "http") or (scheme == "http" and not self._allow_http):
            problem = "must be an https URL" + ("" if self._allow_http else " (plain http is not allowed here)")
            raise _refuse(url_field, problem, self._recovery)
        if parts.username or parts.password:
            problem = "credentials in the URL are not allowed; send them as an allow-listed header"
            raise _refuse(url_field, problem, self._recovery)
        host = (parts.hostname or "").lower()
        if not host:
            raise _refuse(url_field, "has no host", self._recovery)
        return scheme, host, port or (443 if scheme == "https" else 80)

    def allowed_address(self, host: str, address: str, port: int) -> bool:
        """True when `address` (a resolved address of `host`) may be connected to on `port`.

        Every candidate (the address and each IPv4 address embedded in it) must be public or admitted by an
        allow-list entry for this port; platform/metadata addresses never are. The IPv4-mapped, NAT64 and
        6to4 forms are judged by their IPv4 address alone (see `shared.core.addresses`).
        """
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        inner = embedded_ipv4(ip)
        candidates: list[IPAddress] = [ip, *inner]
        if any(c in PLATFORM_ADDRESSES for c in candidates):
            return False
        if judged_by_ipv4_alone(ip):
            candidates = [*inner]
        return all(is_public(c) or self._listed(host, c, port) for c in candidates)

    def _listed(self, host: str, ip: IPAddress, port: int) -> bool:
        return any(entry.admits(host, ip, port) for entry in self._entries)

    async def resolve(self, url: str, url_field: str = "url") -> Target:
        """Check the URL and resolve its host; the first address is the one to connect to.

        Every refusal after the URL's form was accepted is one ValidationFailed with the same text, whatever
        the reason (no such name, a non-public address, an entry for another port or feature).
        """
        scheme, host, port = self.check_url(url, url_field)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
            addresses = [str(info[4][0]) for info in infos]
        except (OSError, UnicodeError, ValueError):  # gaierror, an over-long label, a NUL in the name
            addresses = []
        if not addresses or not all(self.allowed_address(host, a, port) for a in addresses):
            raise _refuse(
                url_field,
                f"host {host!r} was refused: it does not resolve, or it resolves to a non-public address "
                "(private, loopback, link-local, reserved or special-purpose, platform or metadata, also inside "
                f"IPv6 translation forms) that is not allow-listed here for port {port}",
                self._recovery,
            )
        return Target(scheme, host, port, addresses[0])
