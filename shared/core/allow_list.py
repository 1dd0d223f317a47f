"""Outbound allow-list entries: which non-public host, address or network a feature may reach, on which port.

An entry is `HOST` or `HOST:PORT`. HOST is a host name (`mcp.internal`, compared case-insensitively with
the URL's host), an IPv4 address or CIDR (`10.0.0.5`, `10.0.0.0/8`), or an IPv6 address or CIDR in brackets
(`[fd00::5]`, `[fd00::/8]`); an IPv6 address or CIDR without a port may skip the brackets (`fd00::/8`).
Without a port an entry admits every port (the old meaning); with one, only connections to that port
(the URL's port, else 443 for https and 80 for http). A host name entry admits whatever its name resolves
to; an address entry admits the address whatever name led there. Wildcards are not entries.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from shared.core.addresses import IPAddress, IPNetwork

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_PORT = re.compile(r"[1-9][0-9]{0,4}")


@dataclass(frozen=True)
class AllowEntry:
    """One parsed entry: a host name or a network (exactly one), and a port or None for every port."""

    host: str | None
    network: IPNetwork | None
    port: int | None

    def admits(self, host: str, ip: IPAddress, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.host is not None:
            return self.host == host.lower()
        assert self.network is not None
        return ip.version == self.network.version and ip in self.network


def parse_entry(text: str) -> AllowEntry:
    """The entry `text` names; ValueError saying what is wrong (the settings check names the variable)."""
    entry = text.strip().lower()
    if not entry:
        raise ValueError("an empty entry")
    if "://" in entry:
        raise ValueError(f"{text!r}: an entry is a host, not a URL (drop the scheme and path)")
    host, port_text = _split_port(entry)
    port = None
    if port_text is not None:
        if not _PORT.fullmatch(port_text) or int(port_text) > 65535:
            raise ValueError(f"{text!r}: the port is not a number from 1 to 65535")
        port = int(port_text)
    try:
        return AllowEntry(None, ipaddress.ip_network(host, strict=False), port)
    except ValueError:
        pass
    if ":" in host or "[" in host or "]" in host:
        raise ValueError(f"{text!r}: not an IPv6 address or CIDR (write [v6]:port with a port)")
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(
            f"{text!r}: not a host name, address or CIDR (no scheme, path, wildcard or trailing dot; "
            "write host, host:port, 10.0.0.0/8, 10.0.0.5:8443 or [fd00::5]:443)"
        )
    return AllowEntry(host, None, port)


def _split_port(entry: str) -> tuple[str, str | None]:
    if entry.startswith("["):
        inside, bracket, after = entry[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ValueError(f"{entry!r}: write an IPv6 entry as [address] or [address]:port")
        if ":" not in inside:
            raise ValueError(f"{entry!r}: brackets are for IPv6 addresses")
        return inside, after[1:] if after else None
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host, port
    return entry, None  # a name, an IPv4 address or CIDR, or a bare IPv6 address or CIDR


def parse_entries(texts: Iterable[str]) -> tuple[AllowEntry, ...]:
    return tuple(parse_entry(t) for t in texts)
