"""The worker process's dependencies, built on first use (never at import: indexing must stay cheap)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.core.deps import Deps
    from shared.core.settings import Settings
    from shared.health.readiness import ReadinessCache
    from shared.mcp.endpoint import McpEndpoint


@lru_cache(maxsize=1)
def settings() -> Settings:
    from shared.core.logging import configure_logging
    from shared.core.settings import Settings

    s = Settings.from_env()
    configure_logging(s.log_level)
    return s


@lru_cache(maxsize=1)
def deps() -> Deps:
    from shared.core.deps import build_deps

    return build_deps(settings())


@lru_cache(maxsize=1)
def readiness() -> ReadinessCache:
    """The worker's cached store checks behind the anonymous health route."""
    from shared.health.readiness import ReadinessCache
    from shared.health.service import check_stores

    return ReadinessCache(lambda: check_stores(deps()), ready_ttl=settings().health_cache_seconds)


@lru_cache(maxsize=1)
def allow_list() -> tuple[list[str], list[str]]:
    """(hosts, origins) every HTTP route accepts; the MCP SDK gets the same lists."""
    from shared.core.request_checks import allowed_hosts_and_origins

    return allowed_hosts_and_origins(settings(), os.environ.get("WEBSITE_HOSTNAME"))


@lru_cache(maxsize=1)
def mcp_endpoint() -> McpEndpoint:
    from shared.mcp.endpoint import McpEndpoint
    from shared.tools.catalog import default_registry

    return McpEndpoint(default_registry(), deps, settings(), allow_list())
