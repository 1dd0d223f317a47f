"""Host/Origin allow-list matching and the JSON content-type rule, as every route applies them."""

from __future__ import annotations

import pytest

from shared.core.errors import Forbidden, InvalidRequest
from shared.core.request_checks import (
    MisdirectedRequest,
    UnsupportedMediaType,
    allowed_hosts_and_origins,
    check_host_and_origin,
    parse_host,
    require_json_content_type,
)
from shared.core.settings import Settings

LOCAL = allowed_hosts_and_origins(Settings.from_env({"FIREBREAK_ENVIRONMENT": "local"}), None)
AZURE = allowed_hosts_and_origins(Settings.from_env({}), "fb.azurewebsites.net")


@pytest.mark.parametrize("host", ["127.0.0.1:7071", "localhost:80", "LOCALHOST:7071", "[::1]:7071", "127.0.0.1"])
def test_loopback_hosts_pass_locally(host: str) -> None:
    check_host_and_origin({"Host": host}, "http://x/api/health", *LOCAL)


@pytest.mark.parametrize("host", ["127.0.0.1.evil.example:7071", "evil.example", "localhost.:7071", "[::2]:7071"])
def test_lookalike_hosts_are_refused(host: str) -> None:
    with pytest.raises(MisdirectedRequest) as caught:
        check_host_and_origin({"host": host}, "http://x/", *LOCAL)
    assert caught.value.http_status == 421
    assert caught.value.code == "FORBIDDEN"


# RFC 9112 3.2: a Host field with an invalid value is a 400. The local host answered some of these 500 with an
# empty body, and took `127.0.0.1:٣` (an Arabic-Indic digit: str.isdigit() is true) for an allowed port.
MALFORMED_HOSTS = [
    "127.0.0.1:7071.",
    "x:99999999",
    "127.0.0.1:65536",
    "127.0.0.1:0",
    "127.0.0.1:-1",
    "127.0.0.1:abc",
    "127.0.0.1:7071:1",
    "127.0.0.1:\u0663",
    "127.0.0.1:\u00b2",
    "localhost:",
    "localhost:80x",
    "127.0.0.1:7071@evil.example",
    "[::1",
    "[::1]x",
    "[zz]:1",
    "[fe80::1%eth0]:7071",
    ":",
    ":7071",
    "h\u00f4st:1",
    "a b",
    "user@127.0.0.1",
    "x" * 300,
]


@pytest.mark.parametrize("host", MALFORMED_HOSTS, ids=[repr(h[:30]) for h in MALFORMED_HOSTS])
def test_malformed_hosts_are_400_before_the_allow_list(host: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_host_and_origin({"host": host}, "http://x/", *LOCAL)
    assert caught.value.http_status == 400
    assert caught.value.code == "INVALID_REQUEST"
    assert caught.value.details["errors"][0]["field"] == "(host)"


@pytest.mark.parametrize(
    ("host", "parsed"),
    [
        ("127.0.0.1:07071", ("127.0.0.1", 7071)),
        ("[::1]", ("[::1]", None)),
        ("fb.azurewebsites.net:443", ("fb.azurewebsites.net", 443)),
        ("localhost", ("localhost", None)),
    ],
)
def test_well_formed_hosts_parse(host: str, parsed: tuple[str, int | None]) -> None:
    assert parse_host(host) == parsed


def test_an_origin_port_in_other_digits_is_not_a_port() -> None:
    with pytest.raises(Forbidden):
        check_host_and_origin({"host": "127.0.0.1:7071", "origin": "http://127.0.0.1:\u0663"}, "", *LOCAL)


def test_azure_allows_only_its_own_name() -> None:
    check_host_and_origin({"host": "fb.azurewebsites.net"}, "https://fb.azurewebsites.net/api/mcp", *AZURE)
    with pytest.raises(MisdirectedRequest):
        check_host_and_origin({"host": "127.0.0.1:7071"}, "http://127.0.0.1:7071/api/mcp", *AZURE)


def test_missing_host_falls_back_to_the_url() -> None:
    check_host_and_origin({}, "http://127.0.0.1:7071/api/health", *LOCAL)
    with pytest.raises(MisdirectedRequest):
        check_host_and_origin({}, "http://evil.example/api/health", *LOCAL)


def test_origin_is_checked_only_when_sent() -> None:
    check_host_and_origin({"host": "127.0.0.1:7071", "origin": "http://localhost:3000"}, "", *LOCAL)
    with pytest.raises(Forbidden) as caught:
        check_host_and_origin({"host": "127.0.0.1:7071", "origin": "https://evil.example"}, "", *LOCAL)
    assert caught.value.http_status == 403


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/problem+json"],
)
def test_json_content_types(content_type: str) -> None:
    require_json_content_type(content_type)


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/json",
        "application/jsonp",
    ],
)
def test_other_content_types_are_415(content_type: str | None) -> None:
    with pytest.raises(UnsupportedMediaType) as caught:
        require_json_content_type(content_type)
    assert caught.value.http_status == 415
    assert caught.value.code == "INVALID_REQUEST"
