"""The outbound guard judges IPv6 translation/tunnel forms by the IPv4 inside, refuses platform and
metadata addresses even when they look public or are allow-listed, and never names a resolved address."""

from __future__ import annotations

import asyncio
import ipaddress
import json

import pytest

from shared.core.errors import ValidationFailed
from shared.core.outbound import OutboundGuard, embedded_ipv4
from shared.core.settings import Settings


def guard(**env: str) -> OutboundGuard:
    return OutboundGuard(Settings.from_env(env))


# One row per address form: (address, the IPv4 it carries). Each embeds a loopback/private/metadata
# IPv4, so each must be refused; the same form around a public IPv4 must pass (below).
HIDDEN_PRIVATE = [
    ("::ffff:127.0.0.1", "127.0.0.1"),  # IPv4-mapped
    ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
    ("::10.0.0.5", "10.0.0.5"),
    ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 well-known prefix
    ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("64:ff9b:1::7f00:1", "127.0.0.1"),  # local-use NAT64, /96 position
    ("64:ff9b:1:c0a8:1:100::", "192.168.1.1"),  # local-use NAT64, /48 position (u octet skipped)
    ("2002:7f00:1::1", "127.0.0.1"),  # 6to4
    ("2002:a00:1::", "10.0.0.1"),
    ("2002:a9fe:a9fe::1", "169.254.169.254"),
    # Teredo: server 65.54.227.120, client 127.0.0.1 stored XOR-ed (0x7f000001 ^ 0xffffffff = 80ff:fffe)
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),
]


@pytest.mark.parametrize(("address", "inner"), HIDDEN_PRIVATE)
def test_each_ipv6_form_is_unwrapped_and_refused(address: str, inner: str) -> None:
    assert ipaddress.ip_address(inner) in embedded_ipv4(ipaddress.ip_address(address))
    assert not guard().allowed_address("example.com", address)


@pytest.mark.parametrize(
    "address", ["::8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "8.8.8.8", "2606:4700:4700::1111"]
)
def test_same_forms_around_a_public_ipv4_pass(address: str) -> None:
    assert guard().allowed_address("example.com", address)


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
        "fd00:ec2::254",
        "100.100.100.200",
    ],
)
def test_platform_and_metadata_addresses_are_refused_even_when_allow_listed(address: str) -> None:
    assert not guard().allowed_address("example.com", address)
    listed = guard(FIREBREAK_OUTBOUND_ALLOWED_HOSTS="example.com,0.0.0.0/0,::/0")
    assert not listed.allowed_address("example.com", address)
    assert listed.allowed_address(
        "example.com", "10.0.0.1"
    )  # the allow-list still works for ordinary private addresses


def test_allow_listed_cidr_applies_to_the_embedded_ipv4() -> None:
    listed = guard(FIREBREAK_OUTBOUND_ALLOWED_HOSTS="10.0.0.0/8,64:ff9b::/96")
    assert listed.allowed_address("x", "64:ff9b::a00:5")
    assert not listed.allowed_address("x", "64:ff9b::7f00:1")


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("https://localhost/", ("127.0.0.1", "::1")),
        ("https://[64:ff9b::7f00:1]/", ("7f00", "127.0.0.1")),
        ("https://168.63.129.16/", ()),
    ],
)
def test_refusal_never_names_the_resolved_address(url: str, secret: tuple[str, ...]) -> None:
    with pytest.raises(ValidationFailed) as caught:
        asyncio.run(guard().resolve(url, "base_url"))
    err = caught.value
    text = str(err) + json.dumps(getattr(err, "details", {}), default=str)
    host = url.split("//", 1)[1].split("/", 1)[0].strip("[]")
    resolved_only = [s for s in secret if s not in host]
    assert "non-public" in text
    assert not any(s in text for s in resolved_only)
