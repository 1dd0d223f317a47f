"""Route templates and function-key rules of the offline host match the Functions host's."""

from __future__ import annotations

import pytest

from devhost.http_server import aiohttp_path
from devhost.keys import HostKeys


@pytest.mark.parametrize(
    ("route", "path"),
    [
        ("mcp", "/api/mcp"),
        ("tools/health.check", "/api/tools/health.check"),
        ("tasks/{id}", "/api/tasks/{id}"),
        ("runs/{n:int}", r"/api/runs/{n:-?\d+}"),
        ("files/{*rest}", "/api/files/{rest:.*}"),
        ("/chat/{session}/messages/", "/api/chat/{session}/messages"),
    ],
)
def test_route_templates(route: str, path: str) -> None:
    assert aiohttp_path("api", route) == path


def test_empty_prefix() -> None:
    assert aiohttp_path("", "health") == "/health"


def test_no_keys_means_open_as_under_func_start() -> None:
    keys = HostKeys.from_env({})
    assert not keys.configured
    assert keys.allows("f", "FUNCTION", None)
    assert keys.allows("f", "ADMIN", None)


def test_function_host_and_master_keys() -> None:
    keys = HostKeys.from_env(
        {"DEVHOST_FUNCTION_KEY": "hk", "DEVHOST_MASTER_KEY": "mk", "DEVHOST_FUNCTION_KEYS": '{"mcp": ["fk1", "fk2"]}'}
    )
    assert keys.allows("any", "ANONYMOUS", None)
    assert not keys.allows("any", "FUNCTION", None)
    assert not keys.allows("any", "FUNCTION", "wrong")
    assert keys.allows("any", "FUNCTION", "hk")
    assert keys.allows("any", "FUNCTION", "mk")
    assert keys.allows("mcp", "FUNCTION", "fk2")
    assert not keys.allows("other", "FUNCTION", "fk2")
    assert keys.allows("any", "ADMIN", "mk")
    assert not keys.allows("any", "ADMIN", "hk")
