"""Azure Functions blueprints: HTTP and durable adapters only; business logic lives in `shared/`."""

from __future__ import annotations

from typing import Any


def blueprints(manifest: dict[str, Any] | None = None) -> list[Any]:
    """Every blueprint the app registers, in one place so function_app.py stays a few lines.

    The per-tool HTTP functions and the orchestrations are generated from `manifest` (default: the
    committed shared/app/manifest.json, so indexing imports no capability code).
    """
    from functions.health_api import bp as health
    from functions.mcp_api import bp as mcp
    from functions.openapi_api import bp as openapi
    from functions.orchestration import orchestration_functions
    from functions.protected_resource_api import bp as protected_resource
    from functions.routes_api import route_functions
    from functions.tools_api import bp as tools
    from functions.tools_api import tool_functions
    from shared.app.manifest import load_manifest

    manifest = load_manifest() if manifest is None else manifest
    tool_entries = [{"name": t["name"], "function_name": t["function_name"]} for t in manifest["tools"]]
    # The per-tool functions before tools_by_name's `tools/{name}`, as literal routes take precedence.
    return [
        health,
        tool_functions(tool_entries),
        tools,
        mcp,
        openapi,
        protected_resource,
        route_functions(manifest.get("routes", [])),
        orchestration_functions(manifest["orchestrations"]),
    ]
