"""The outbound guard: an explicit table of non-public addresses (every IANA special-purpose block, IPv6
outside 2000::/3, the IPv4 address inside every translation and tunnel form), platform and metadata addresses
refused even when allow-listed, one refusal text whatever the DNS answer was, and allow-lists per feature
and port."""

from __future__ import annotations

import asyncio
import ipaddress
import json

import pytest

from shared.core.addresses import IPV4_NOT_PUBLIC, IPV6_NOT_PUBLIC, is_public
from shared.core.errors import ValidationFailed
from shared.core.outbound import FEATURE_FIELDS, OutboundGuard, embedded_ipv4
from shared.core.settings import Settings, SettingsError
from tests.fixtures.hostile.addresses import GAPS


def guard(feature: str | None = None, **env: str) -> OutboundGuard:
    return OutboundGuard(Settings.from_env(env), feature)  # type: ignore[arg-type]


def refusal(g: OutboundGuard, url: str) -> ValidationFailed | None:
    """The guard's refusal of `url`, or None when it resolves to an acceptable address."""
    try:
        asyncio.run(g.resolve(url, "url"))
    except ValidationFailed as exc:
        return exc
    return None


def literal(address: str, port: int = 443) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}:{port}/"


# ---- the address table ---------------------------------------------------------------------------------------

# Refused before too (Python calls them non-global); pinned so that neither the table nor a Python upgrade
# (3.13 calls 2001:1::1, 2001:3::/32, 2001:20::/28 ... global) reopens them.
COVERED = [
    "0.0.0.0",
    "0.1.2.3",
    "10.1.2.3",
    "100.64.0.1",
    "127.0.0.1",
    "169.254.1.1",
    "172.16.0.1",
    "192.0.0.1",
    "192.0.0.171",  # NAT64/DNS64 discovery
    "192.0.2.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "100::1",
    "2001::1",
    "2001:1::1",
    "2001:1::3",
    "2001:2::1",
    "2001:3::1",
    "2001:4:112::1",
    "2001:10::1",
    "2001:20::1",
    "2001:30::1",
    "2001:db8::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "ff02::1",
    "ff0e::1",
]


@pytest.mark.parametrize(("address", "why"), GAPS)
def test_gaps_in_is_global_are_refused(address: str, why: str) -> None:
    assert refusal(guard(), literal(address)) is not None, why


@pytest.mark.parametrize("address", COVERED)
def test_other_special_purpose_addresses_stay_refused(address: str) -> None:
    assert refusal(guard(), literal(address)) is not None


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "::ffff:8.8.8.8",  # the dual-stack spelling of a public IPv4 address
        "64:ff9b::808:808",  # what DNS64 answers on an IPv6-only network
        "2002:808:808::1",  # 6to4 around a public address
        "2606:4700:4700::1111",
        "2606:4700::200:5efe:808:808",  # an ISATAP interface id around a public address
    ],
)
def test_public_addresses_and_forms_around_a_public_ipv4_pass(address: str) -> None:
    assert refusal(guard(), literal(address)) is None


def test_every_table_block_is_not_public_at_both_ends() -> None:
    for block in (*IPV4_NOT_PUBLIC, *IPV6_NOT_PUBLIC):
        for ip in (block.network.network_address, block.network.broadcast_address):
            assert not is_public(ip), (block, ip)


# One row per address form: (address, the IPv4 it carries). Each embeds a loopback/private/metadata
# IPv4, so each must be refused.
HIDDEN_PRIVATE = [
    ("::ffff:127.0.0.1", "127.0.0.1"),  # IPv4-mapped
    ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
    ("::10.0.0.5", "10.0.0.5"),
    ("::ffff:0:7f00:1", "127.0.0.1"),  # IPv4-translated
    ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 well-known prefix
    ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("64:ff9b:1::7f00:1", "127.0.0.1"),  # local-use NAT64, /96 position
    ("64:ff9b:1:c0a8:1:100::", "192.168.1.1"),  # local-use NAT64, /48 position (u octet skipped)
    ("2002:7f00:1::1", "127.0.0.1"),  # 6to4
    ("2002:a00:1::", "10.0.0.1"),
    ("2002:a9fe:a9fe::1", "169.254.169.254"),
    # Teredo: server 65.54.227.120, client 127.0.0.1 stored XOR-ed (0x7f000001 ^ 0xffffffff = 80ff:fffe)
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),
    ("2606:4700::5efe:a00:5", "10.0.0.5"),  # ISATAP
    ("fe80::200:5efe:c0a8:101", "192.168.1.1"),
]


@pytest.mark.parametrize(("address", "inner"), HIDDEN_PRIVATE)
def test_each_ipv6_form_is_unwrapped_and_refused(address: str, inner: str) -> None:
    assert ipaddress.ip_address(inner) in embedded_ipv4(ipaddress.ip_address(address))
    assert not guard().allowed_address("example.com", address, 443)


def test_teredo_client_is_unxored() -> None:
    server, client = embedded_ipv4(ipaddress.ip_address("2001:0:4136:e378:8000:63bf:3fff:fdd2"))
    assert (str(server), str(client)) == ("65.54.227.120", "192.0.2.45")


@pytest.mark.parametrize(
    "address",
    [
        "168.63.129.16",
        "::ffff:168.63.129.16",
        "64:ff9b::a83f:8110",
        "2002:a83f:8110::1",
        "169.254.169.254",
        "::ffff:0:a9fe:a9fe",
        "2606:4700::200:5efe:a9fe:a9fe",
        "fd00:ec2::254",
        "100.100.100.200",
    ],
)
def test_platform_and_metadata_addresses_are_refused_even_when_allow_listed(address: str) -> None:
    assert not guard().allowed_address("example.com", address, 443)
    listed = guard(FIREBREAK_OUTBOUND_ALLOWED_HOSTS="example.com,0.0.0.0/0,::/0")
    assert not listed.allowed_address("example.com", address, 443)
    assert listed.allowed_address("example.com", "10.0.0.1", 443)  # the allow-list still works for the rest


def test_allow_listed_cidr_applies_to_the_embedded_ipv4() -> None:
    listed = guard(FIREBREAK_OUTBOUND_ALLOWED_HOSTS="10.0.0.0/8")
    assert listed.allowed_address("x", "64:ff9b::a00:5", 443)
    assert not listed.allowed_address("x", "64:ff9b::7f00:1", 443)
    # A form that must be allow-listed itself needs both entries.
    assert not listed.allowed_address("x", "::ffff:0:a00:5", 443)
    both = guard(FIREBREAK_OUTBOUND_ALLOWED_HOSTS="10.0.0.0/8,::ffff:0:0:0/96")
    assert both.allowed_address("x", "::ffff:0:a00:5", 443)


# ---- one refusal text: no DNS oracle -----------------------------------------------------------------------


def _shown(err: ValidationFailed, host: str) -> str:
    """Everything a caller sees of the refusal, with the host it named itself taken out."""
    text = json.dumps(
        {"message": err.message, "details": err.details, "recovery": err.recovery_suggestions}, default=str
    )
    return text.replace(host, "<host>")


def test_a_name_that_does_not_resolve_and_one_that_resolves_privately_are_refused_alike() -> None:
    g = guard("runbooks", FIREBREAK_OUTBOUND_RUNBOOKS_ALLOWED_HOSTS="127.0.0.1:8443")
    hosts = [
        "nonexistent.invalid",  # no such name
        "localhost",  # 127.0.0.1: loopback, allow-listed for another port only
        "169.254.169.254",  # the metadata service
        "10.0.0.5",  # private
        "[::ffff:0:7f00:1]",  # IPv4-translated loopback
    ]
    shown = set()
    for host in hosts:
        err = refusal(g, f"https://{host}/")
        assert err is not None, host
        shown.add(_shown(err, host.strip("[]")))
    assert len(shown) == 1, shown
    assert "non-public address" in shown.pop()  # the wording callers' tests and operators know


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("https://localhost/", ("127.0.0.1", "::1")),
        ("https://[64:ff9b::7f00:1]/", ("7f00", "127.0.0.1")),
        ("https://168.63.129.16/", ()),
    ],
)
def test_refusal_never_names_the_resolved_address(url: str, secret: tuple[str, ...]) -> None:
    err = refusal(guard(), url)
    assert err is not None
    text = str(err) + json.dumps(getattr(err, "details", {}), default=str)
    host = url.split("//", 1)[1].split("/", 1)[0].strip("[]")
    resolved_only = [s for s in secret if s not in host]
    assert "non-public" in text
    assert not any(s in text for s in resolved_only)


@pytest.mark.parametrize("host", ["a" * 64 + ".example.com", "x\x00y.example.com"])
def test_a_name_the_resolver_cannot_even_encode_is_the_same_refusal(host: str) -> None:
    err = refusal(guard(), f"https://{host}/")
    assert err is not None
    assert "non-public address" in err.message


# ---- allow-lists per feature and port ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "host", "network", "port"),
    [
        ("mcp.internal", "mcp.internal", None, None),
        ("MCP.Internal:8443", "mcp.internal", None, 8443),
        ("10.0.0.5", None, "10.0.0.5/32", None),
        ("10.0.0.5:8443", None, "10.0.0.5/32", 8443),
        ("10.0.0.0/8", None, "10.0.0.0/8", None),
        ("10.0.0.0/8:443", None, "10.0.0.0/8", 443),
        ("fd00::/8", None, "fd00::/8", None),
        ("::1", None, "::1/128", None),
        ("[::1]:8080", None, "::1/128", 8080),
        ("[fd00::/8]:443", None, "fd00::/8", 443),
    ],
)
def test_allow_list_entries(entry: str, host: str | None, network: str | None, port: int | None) -> None:
    from shared.core.allow_list import parse_entry

    parsed = parse_entry(entry)
    assert parsed.host == host
    assert parsed.network == (ipaddress.ip_network(network) if network else None)
    assert parsed.port == port


@pytest.mark.parametrize(
    "entry", ["https://mcp.internal", "mcp.internal:0", "mcp.internal:70000", "*.internal", "a/b", "[10.0.0.5]:1"]
)
@pytest.mark.parametrize("field", ["outbound_allowed_hosts", *FEATURE_FIELDS.values()])
def test_a_malformed_entry_fails_at_start_up_naming_its_variable(entry: str, field: str) -> None:
    variable = Settings.env_names()[field]
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: entry})


def test_a_feature_entry_opens_that_port_for_that_feature_only() -> None:
    env = {"FIREBREAK_OUTBOUND_MCP_ALLOWED_HOSTS": "10.0.0.5:8443,mcp.internal:9000"}
    mcp, runbooks = guard("mcp", **env), guard("runbooks", **env)
    assert mcp.allowed_address("x", "10.0.0.5", 8443)
    assert not mcp.allowed_address("x", "10.0.0.5", 443)
    assert not mcp.allowed_address("x", "10.0.0.6", 8443)
    assert mcp.allowed_address("mcp.internal", "10.9.9.9", 9000)
    assert not mcp.allowed_address("mcp.internal", "10.9.9.9", 9001)
    for feature in ("runbooks", "collect", "neubird", None):
        other = guard(feature, **env)
        assert not other.allowed_address("x", "10.0.0.5", 8443), feature
        assert not other.allowed_address("mcp.internal", "10.9.9.9", 9000), feature
    assert runbooks.allowed_address("x", "8.8.8.8", 8443)  # public addresses need no entry, any port


def test_the_global_list_keeps_applying_to_every_feature() -> None:
    env = {"FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "10.0.0.5:8443,10.1.0.0/16"}
    for feature in (None, *FEATURE_FIELDS):
        g = guard(feature, **env)
        assert g.allowed_address("x", "10.0.0.5", 8443)
        assert not g.allowed_address("x", "10.0.0.5", 443)
        assert g.allowed_address("x", "10.1.2.3", 22)  # no port: every port, as before


def test_every_caller_chooses_its_feature() -> None:
    """Each feature's own list is read: a list for one feature is the only one it gets besides the global list."""
    for feature, field in FEATURE_FIELDS.items():
        env = {Settings.env_names()[field]: "10.0.0.5:8443"}
        assert guard(feature, **env).allowed_address("x", "10.0.0.5", 8443), feature
