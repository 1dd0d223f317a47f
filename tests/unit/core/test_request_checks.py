"""Host/Origin allow-list matching and the JSON content-type rule, as every route applies them."""

from __future__ import annotations

import pytest

from shared.core.errors import Forbidden
from shared.core.request_checks import (
    MisdirectedRequest,
    UnsupportedMediaType,
    allowed_hosts_and_origins,
    check_host_and_origin,
    require_json_content_type,
)
from shared.core.settings import Settings

LOCAL = allowed_hosts_and_origins(Settings.from_env({"FIREBREAK_ENVIRONMENT": "local"}), None)
AZURE = allowed_hosts_and_origins(Settings.from_env({}), "fb.azurewebsites.net")


@pytest.mark.parametrize("host", ["127.0.0.1:7071", "localhost:80", "LOCALHOST:7071", "[::1]:7071", "127.0.0.1"])
def test_loopback_hosts_pass_locally(host: str) -> None:
    check_host_and_origin({"Host": host}, "http://x/api/health", *LOCAL)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1.evil.example:7071", "127.0.0.1:7071@evil.example", "evil.example", "localhost:", "localhost:80x"],
)
def test_lookalike_hosts_are_refused(host: str) -> None:
    with pytest.raises(MisdirectedRequest) as caught:
        check_host_and_origin({"host": host}, "http://x/", *LOCAL)
    assert caught.value.http_status == 421
    assert caught.value.code == "FORBIDDEN"


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
