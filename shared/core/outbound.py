"""The one guard for outbound URLs a caller chooses (collector base URLs, runbook URLs, instance switches).

https only unless FIREBREAK_OUTBOUND_ALLOW_HTTP; no userinfo; and every address the host resolves to
must be public: loopback, private, link-local (cloud metadata 169.254.169.254 / fd00:ec2::254),
shared, multicast, reserved and unspecified addresses are refused unless the host name or a CIDR
holding the address is in FIREBREAK_OUTBOUND_ALLOWED_HOSTS. Callers connect to the address the guard
returns, not to the name again, so a DNS answer cannot change between the check and the connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.core.errors import ValidationFailed
from shared.core.settings import Settings


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    address: str  # the checked IP to connect to


def _refuse(url_field: str, problem: str) -> ValidationFailed:
    return ValidationFailed(f"{url_field}: {problem}", details={"errors": [{"field": url_field, "problem": problem}]},
                            recovery_suggestions=["Use a public https URL; private or loopback hosts need FIREBREAK_OUTBOUND_ALLOWED_HOSTS (host name or CIDR) on the deployment."])


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
            raise _refuse(url_field, "must be an https URL" + ("" if self._allow_http else " (plain http is not allowed here)"))
        if parts.username or parts.password:
            raise _refuse(url_field, "credentials in the URL are not allowed; send them as an allow-listed header")
        host = (parts.hostname or "").lower()
        if not host:
            raise _refuse(url_field, "has no host")
        return scheme, host, port or (443 if scheme == "https" else 80)

    def allowed_address(self, host: str, address: str) -> bool:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if getattr(ip, "ipv4_mapped", None):
            ip = ip.ipv4_mapped  # type: ignore[union-attr]
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
            raise _refuse(url_field, f"host {host!r} resolves to a non-public address ({refused[0]}): private, loopback, link-local and metadata addresses are refused")
        return Target(scheme, host, port, addresses[0])
