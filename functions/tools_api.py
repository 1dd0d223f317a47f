"""Per-tool HTTP functions `POST /api/tools/{name}` and the tools document `GET /api/tools`, generated from the registry."""

from __future__ import annotations

import azure.functions as func

from functions import wiring
from functions.http import endpoint, error_response, json_response, read_json_object
from shared.tools.catalog import default_registry
from shared.tools.registry import Tool

bp = func.Blueprint()


@bp.function_name("tools_document")
@bp.route(route="tools", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@endpoint
async def tools_document(req: func.HttpRequest, correlation_id: str) -> func.HttpResponse:
    """List every tool with its description, annotations, input and output JSON Schemas and HTTP path."""
    return json_response(default_registry().document(), correlation_id)


def _tool_function(tool: Tool):  # type: ignore[no-untyped-def]
    from shared.tools.invoke import ToolContext, invoke, pop_correlation_id

    async def call(req: func.HttpRequest, correlation_id: str) -> func.HttpResponse:
        deps = wiring.deps()
        principal = await deps.principals.resolve(dict(req.headers))
        arguments = read_json_object(req, deps.settings.max_request_bytes)
        correlation_id = pop_correlation_id(arguments, tool) or correlation_id
        outcome = await invoke(tool, arguments, ToolContext(principal, deps, correlation_id, transport="http"))
        if outcome.error is not None:
            return error_response(outcome.error, correlation_id)
        return json_response(outcome.output, correlation_id)

    call.__name__ = tool.function_name
    call.__doc__ = tool.description
    return endpoint(call)


# One HTTP function per tool, each with its own name and route, so the portal, metrics and keys see tools apart.
for _tool in default_registry():
    bp.function_name(_tool.function_name)(
        bp.route(route=f"tools/{_tool.name}", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)(_tool_function(_tool))
    )
