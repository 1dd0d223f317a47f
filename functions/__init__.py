"""Azure Functions blueprints: HTTP and durable adapters only; business logic lives in `shared/`."""

from __future__ import annotations


def blueprints() -> list:
    """Every blueprint the app registers, in one place so function_app.py stays a few lines."""
    from functions.artifacts_api import bp as artifacts
    from functions.diagnostics_api import bp as diagnostics
    from functions.health_api import bp as health
    from functions.mcp_api import bp as mcp
    from functions.perf_collect_api import bp as perf_collect
    from functions.runs_api import bp as runs
    from functions.tools_api import bp as tools

    return [health, tools, mcp, diagnostics, artifacts, perf_collect, runs]
