"""Which IP addresses count as public for the outbound guard: an explicit table, not `is_global` alone.

An address is public when it is ordinary global unicast and in no block of `NOT_PUBLIC`; the guard needs an
allow-list entry for anything else. The table holds every block of the IANA IPv4 and IPv6 Special-Purpose
Address Registries (as of RFC 9780, 2025), whatever their "globally reachable" column says: the global ones
are protocol anycast, DNS sinks or identifiers (PCP/TURN/DNS-SD anycast, AS112, AMT, ORCHIDv2, DRIP), never
a runbook, collector, MCP or NeuBird server, and refusing them costs nothing an allow-list cannot give back.
IPv6 must also lie in 2000::/3, the only global unicast space IANA allocates, which refuses in one rule the
reserved space Python calls global (::ffff:0:0:0/96 IPv4-translated, 5f00::/16 SRv6, fec0::/10 site-local,
100:0:0:1::/64, 4000::/3 ...). Python's `is_global` is checked as well, as a second opinion.

Python 3.11.7's `is_global` alone calls these public (the gaps the table closes): ::ffff:0:a.b.c.d
(RFC 2765 IPv4-translated), ::a.b.c.d (deprecated IPv4-compatible), 64:ff9b:1::/48 (local-use NAT64),
5f00::/16, 3fff::/20, 100:0:0:1::/64, fec0::/10, unallocated space outside 2000::/3, 2620:4f:8000::/48,
192.0.0.0/24 outside its /29 and .170/31 (192.0.0.8 dummy, .9 PCP, .10 TURN, .171 NAT64 discovery),
192.31.196.0/24, 192.52.193.0/24, 192.88.99.0/24 (deprecated 6to4 relay anycast), 192.175.48.0/24;
multicast IPv6 (ff00::/8) too, which the guard refused separately before.

IPv6 forms that carry an IPv4 address a translator or tunnel will reach are judged by that address too
(`embedded_ipv4`). Three of them are judged by it alone, since they are how a public IPv4 host is reached:
IPv4-mapped ::ffff:0:0/96 (a dual-stack socket's spelling of the IPv4 address), NAT64 64:ff9b::/96 (what
DNS64 answers on an IPv6-only network) and 6to4 2002::/16. The others must be public themselves as well,
so they are refused unless allow-listed: IPv4-compatible ::/96 and IPv4-translated ::ffff:0:0:0/96 (outside
2000::/3; deprecated, no DNS answer has a reason to use them), local-use NAT64 64:ff9b:1::/48 (not globally
reachable), Teredo 2001::/32 (in 2001::/23). An ISATAP interface id (`…:0:5efe:a.b.c.d`, `…:200:5efe:…`,
RFC 5214; the u and g bits are ignored) can sit under any prefix, global ones included: its IPv4 address
is judged, so a site's ISATAP router cannot carry a request to a private IPv4 host.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class Block(NamedTuple):
    network: IPNetwork
    name: str
    reference: str


def _blocks(*rows: tuple[str, str, str]) -> tuple[Block, ...]:
    return tuple(Block(ipaddress.ip_network(net), name, ref) for net, name, ref in rows)


# The IANA IPv4 Special-Purpose Address Registry, plus multicast (its own registry). Sub-blocks of
# 192.0.0.0/24 (/29 DS-Lite, .8 dummy, .9 PCP, .10 TURN, .170/31 NAT64 discovery) fall under it.
IPV4_NOT_PUBLIC = _blocks(
    ("0.0.0.0/8", "this network (0.0.0.0 reaches the local host on Linux)", "RFC 791, RFC 1122"),
    ("10.0.0.0/8", "private use", "RFC 1918"),
    ("100.64.0.0/10", "shared address space (carrier-grade NAT)", "RFC 6598"),
    ("127.0.0.0/8", "loopback", "RFC 1122"),
    ("169.254.0.0/16", "link local (cloud metadata services)", "RFC 3927"),
    ("172.16.0.0/12", "private use", "RFC 1918"),
    ("192.0.0.0/24", "IETF protocol assignments (incl. PCP/TURN anycast, NAT64 discovery)", "RFC 6890"),
    ("192.0.2.0/24", "documentation TEST-NET-1", "RFC 5737"),
    ("192.31.196.0/24", "AS112-v4 DNS sink", "RFC 7535"),
    ("192.52.193.0/24", "AMT relay anycast", "RFC 7450"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
    ("192.168.0.0/16", "private use", "RFC 1918"),
    ("192.175.48.0/24", "direct delegation AS112 DNS sink", "RFC 7534"),
    ("198.18.0.0/15", "benchmarking", "RFC 2544"),
    ("198.51.100.0/24", "documentation TEST-NET-2", "RFC 5737"),
    ("203.0.113.0/24", "documentation TEST-NET-3", "RFC 5737"),
    ("224.0.0.0/4", "multicast", "RFC 5771"),
    ("240.0.0.0/4", "reserved, incl. limited broadcast 255.255.255.255", "RFC 1112, RFC 919"),
)

GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")

# The IANA IPv6 Special-Purpose Address Registry and the other non-global blocks. The ones outside
# 2000::/3 are refused by that rule anyway; they are listed so the table reads as the registry does.
IPV6_NOT_PUBLIC = _blocks(
    ("::/128", "unspecified", "RFC 4291"),
    ("::1/128", "loopback", "RFC 4291"),
    ("::/96", "IPv4-compatible (deprecated)", "RFC 4291"),
    ("::ffff:0:0/96", "IPv4-mapped (judged by its IPv4 address alone)", "RFC 4291"),
    ("::ffff:0:0:0/96", "IPv4-translated (SIIT, obsolete)", "RFC 2765"),
    ("64:ff9b::/96", "NAT64 well-known prefix (judged by its IPv4 address alone)", "RFC 6052"),
    ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation", "RFC 8215"),
    ("100::/64", "discard-only", "RFC 6666"),
    ("100:0:0:1::/64", "dummy prefix", "RFC 9780"),
    ("2001::/23", "IETF protocol assignments (Teredo, PCP/TURN/DNS-SD anycast, AMT, AS112, ORCHID, DRIP)", "RFC 2928"),
    ("2001:2::/48", "benchmarking", "RFC 5180"),
    ("2001:db8::/32", "documentation", "RFC 3849"),
    ("2002::/16", "6to4 (judged by its IPv4 address alone)", "RFC 3056"),
    ("2620:4f:8000::/48", "direct delegation AS112 DNS sink", "RFC 7534"),
    ("3fff::/20", "documentation", "RFC 9637"),
    ("5f00::/16", "SRv6 SIDs", "RFC 9602"),
    ("fc00::/7", "unique local", "RFC 4193"),
    ("fe80::/10", "link local", "RFC 4291"),
    ("fec0::/10", "site local (deprecated)", "RFC 3879"),
    ("ff00::/8", "multicast", "RFC 4291"),
)

# Judged by the IPv4 address inside alone: the ways a public IPv4 host is reached over IPv6.
JUDGED_BY_IPV4 = tuple(ipaddress.IPv6Network(n) for n in ("::ffff:0:0/96", "64:ff9b::/96", "2002::/16"))

_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_ISATAP_ID = 0x00005EFE  # bits 32-63 of the interface id, the u (0x02) and g (0x01) bits of its first octet cleared
_ISATAP_MASK = 0xFCFFFFFF


def is_public(ip: IPAddress) -> bool:
    """True for an address anyone on the internet can reach: global unicast and in no block of the tables."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global and not any(ip in block.network for block in IPV4_NOT_PUBLIC)
    return (
        ip in GLOBAL_UNICAST_V6
        and ip.is_global
        and not ip.is_multicast
        and not any(ip in block.network for block in IPV6_NOT_PUBLIC)
    )


def judged_by_ipv4_alone(ip: IPAddress) -> bool:
    return isinstance(ip, ipaddress.IPv6Address) and any(ip in net for net in JUDGED_BY_IPV4)


def embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to through a translator or tunnel (empty for plain IPv6).

    64:ff9b:1::/48 is for local NAT64 with any RFC 6052 prefix length, so both the /96 (last 32 bits)
    and the /48 (bits 48-63 and 72-87, around the reserved u octet) positions are returned.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    raw = int(ip)
    low32 = ipaddress.IPv4Address(raw & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped:
        found.append(ip.ipv4_mapped)
    elif ip in _IPV4_COMPATIBLE and raw > 1:  # ::a.b.c.d; not :: or ::1
        found.append(low32)
    if ip in _IPV4_TRANSLATED:
        found.append(low32)
    if ip in _NAT64:
        found.append(low32)
    if ip in _NAT64_LOCAL:
        found.append(low32)
        found.append(ipaddress.IPv4Address((((raw >> 64) & 0xFFFF) << 16) | ((raw >> 40) & 0xFFFF)))
    if ip.sixtofour:
        found.append(ip.sixtofour)
    if ip.teredo:  # (server, client); the client address is stored XOR-ed, `teredo` undoes that
        found.extend(ip.teredo)
    if (raw >> 32) & _ISATAP_MASK == _ISATAP_ID:
        found.append(low32)
    return found
