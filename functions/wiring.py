"""The worker process's dependencies, built on first use (never at import: indexing must stay cheap)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor

    from shared.app.wiring import ReadinessCache
    from shared.core.settings import Settings
    from shared.mcp.endpoint import McpEndpoint
    from shared.tools.capability import Catalogue
    from shared.tools.deps import Deps


_catalogue: Catalogue | None = None
_span_processors: tuple[SpanProcessor, ...] = ()


def use_catalogue(cat: Catalogue) -> None:
    """Serve another catalogue than the app's (a test app with an extra capability); call before any request."""
    global _catalogue
    _catalogue = cat


def use_span_processors(*processors: SpanProcessor) -> None:
    """Run these before the Application Insights exporter (a test app's in-memory exporter); before any request."""
    global _span_processors
    _span_processors = processors


def catalogue() -> Catalogue:
    """The capabilities this process serves: shared/app/capabilities.py's, unless `use_catalogue` said otherwise."""
    global _catalogue
    if _catalogue is None:
        from shared.app.capabilities import catalogue as app_catalogue

        _catalogue = app_catalogue()
    return _catalogue


@lru_cache(maxsize=1)
def settings() -> Settings:
    from shared.app.wiring import load_settings
    from shared.core.logging import configure_logging
    from shared.core.telemetry import configure as configure_telemetry
    from shared.core.telemetry_settings import TelemetrySettings

    s = load_settings(cat=catalogue())
    configure_logging(s.log_level)
    configure_telemetry(s.section(TelemetrySettings), _span_processors)
    return s


@lru_cache(maxsize=1)
def deps() -> Deps:
    from shared.app.wiring import build_deps

    return build_deps(settings(), cat=catalogue())


@lru_cache(maxsize=1)
def readiness() -> ReadinessCache:
    """The worker's cached readiness checks behind the anonymous health route."""
    from shared.app.wiring import readiness_cache

    return readiness_cache(deps, settings())


@lru_cache(maxsize=1)
def allow_list() -> tuple[list[str], list[str]]:
    """(hosts, origins) every HTTP route accepts; the MCP SDK gets the same lists."""
    from shared.core.request_checks import allowed_hosts_and_origins

    return allowed_hosts_and_origins(settings(), os.environ.get("WEBSITE_HOSTNAME"))


@lru_cache(maxsize=1)
def mcp_endpoint() -> McpEndpoint:
    from shared.mcp.endpoint import McpEndpoint

    return McpEndpoint(catalogue().registry, deps, settings(), allow_list())
