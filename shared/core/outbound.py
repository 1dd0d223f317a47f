"""The one guard for outbound URLs a caller chooses (collector base URLs, runbook URLs, instance switches).

https only unless FIREBREAK_OUTBOUND_ALLOW_HTTP; no userinfo; and every address the host resolves to
must be public: loopback, private, link-local (cloud metadata 169.254.169.254 / fd00:ec2::254),
shared, multicast, reserved and unspecified addresses are refused unless the host name or a CIDR
holding the address is in FIREBREAK_OUTBOUND_ALLOWED_HOSTS. Callers connect to the address the guard
returns, not to the name again, so a DNS answer cannot change between the check and the connection.

IPv6 forms that carry an IPv4 address a gateway or tunnel will reach (IPv4-mapped and -compatible,
NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) are judged by the IPv4 inside
as well: Python calls most of them global. The platform's own endpoints (Azure's wire server
168.63.129.16, the metadata services) look public or sit in allow-listable ranges and are refused
always: no deployment has a reason to probe them. A refusal never names the resolved address, which
would turn the guard into a DNS oracle for internal names.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.core.errors import ValidationFailed
from shared.core.settings import Settings

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
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to through a translator or tunnel (empty for plain IPv6).

    64:ff9b:1::/48 is for local NAT64 with any RFC 6052 prefix length, so both the /96 (last 32 bits)
    and the /48 (bits 48-63 and 72-87, around the reserved u octet) positions are returned.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    raw = int(ip)
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped:
        found.append(ip.ipv4_mapped)
    elif ip in _IPV4_COMPATIBLE and raw > 1:  # ::a.b.c.d (deprecated, still routed by some stacks); not :: or ::1
        found.append(ipaddress.IPv4Address(raw & 0xFFFFFFFF))
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(raw & 0xFFFFFFFF))
    if ip in _NAT64_LOCAL:
        found.append(ipaddress.IPv4Address(raw & 0xFFFFFFFF))
        found.append(ipaddress.IPv4Address((((raw >> 64) & 0xFFFF) << 16) | ((raw >> 40) & 0xFFFF)))
    if ip.sixtofour:
        found.append(ip.sixtofour)
    if ip.teredo:  # (server, client); the client address is stored XOR-ed, `teredo` undoes that
        found.extend(ip.teredo)
    return found


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    address: str  # the checked IP to connect to


def _refuse(url_field: str, problem: str) -> ValidationFailed:
    return ValidationFailed(
        f"{url_field}: {problem}",
        details={"errors": [{"field": url_field, "problem": problem}]},
        recovery_suggestions=[
            (
                "Use a public https URL; private or loopback hosts need FIREBREAK_OUTBOUND_ALLOWED_HOSTS"
                " (host name or CIDR) on the deployment."
            )
        ],
    )


class OutboundGuard:
    def __init__(self, settings: Settings) -> None:
        self._allow_http = settings.outbound_allow_http
        self._hosts = {h.lower() for h in settings.outbound_allowed_hosts if "/" not in h}
        self._networks = []
        for entry in settings.outbound_allowed_hosts:
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue

    def check_url(self, url: str, url_field: str = "url") -> tuple[str, str, int]:
        """(scheme, host, port) of an acceptable URL, before any resolution."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise _refuse(url_field, f"not a valid URL ({exc})") from None
        scheme = parts.scheme.lower()
        if scheme not in ("https", "http") or (scheme == "http" and not self._allow_http):
            raise _refuse(
                url_field, "must be an https URL" + ("" if self._allow_http else " (plain http is not allowed here)")
            )
        if parts.username or parts.password:
            raise _refuse(url_field, "credentials in the URL are not allowed; send them as an allow-listed header")
        host = (parts.hostname or "").lower()
        if not host:
            raise _refuse(url_field, "has no host")
        return scheme, host, port or (443 if scheme == "https" else 80)

    def allowed_address(self, host: str, address: str) -> bool:
        """True when `address` (a resolved address of `host`) may be connected to.

        Every candidate (the address and each IPv4 address embedded in it) must be public or
        allow-listed (host name or CIDR); platform/metadata addresses never are.
        """
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        candidates = [ip, *embedded_ipv4(ip)]
        if any(c in PLATFORM_ADDRESSES for c in candidates):
            return False
        if getattr(ip, "ipv4_mapped", None):
            candidates = candidates[1:]  # ::ffff:a.b.c.d is just the IPv4 address on a dual stack
        return all(self._public_or_listed(host, c) for c in candidates)

    def _public_or_listed(self, host: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if ip.is_global and not ip.is_multicast:
            return True
        return host in self._hosts or any(ip in n for n in self._networks)

    async def resolve(self, url: str, url_field: str = "url") -> Target:
        """Check the URL and resolve its host; the first allowed address is the one to connect to."""
        scheme, host, port = self.check_url(url, url_field)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise _refuse(url_field, f"host {host!r} does not resolve ({exc.strerror})") from None
        addresses = [str(info[4][0]) for info in infos]
        refused = [a for a in addresses if not self.allowed_address(host, a)]
        if refused:
            # Generic on purpose: naming the address would reveal internal DNS answers to the caller.
            raise _refuse(
                url_field,
                f"host {host!r} resolves to a non-public address: private, loopback, link-local, "
                "platform and metadata addresses (also inside IPv6 translation forms) are refused",
            )
        return Target(scheme, host, port, addresses[0])
