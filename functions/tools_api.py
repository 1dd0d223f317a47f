"""Per-tool HTTP functions `POST /api/tools/{name}` and the tools document `GET /api/tools`, generated from the registry."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import endpoint, error_response, guarded, json_response, read_json_object
from shared.tools.manifest import indexed_tools

# A durable blueprint: every tool function gets the durable client binding, so a tool whose work
# outlives the request (collect.run) can continue it as an orchestration.
bp = df.Blueprint()


@bp.function_name("tools_document")
@bp.route(route="tools", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
@endpoint
async def tools_document(req: func.HttpRequest, correlation_id: str) -> func.HttpResponse:
    """List every tool with its description, annotations, input and output JSON Schemas and HTTP path."""
    from shared.tools.catalog import default_registry

    return json_response(default_registry().document(), correlation_id)


def _tool_function(name: str, function_name: str):  # type: ignore[no-untyped-def]
    async def call(req: func.HttpRequest, correlation_id: str, client: df.DurableOrchestrationClient) -> func.HttpResponse:
        # The registry (pydantic models, capability code) loads on the first call, not at indexing.
        from shared.core.errors import NotFound
        from shared.tools.catalog import default_registry
        from functions.orchestration import run_service
        from shared.tools.invoke import ToolContext, invoke, pop_correlation_id

        tool = default_registry().get(name)
        if tool is None:
            raise NotFound(f"Tool {name!r} is indexed but not registered; regenerate shared/tools/manifest.json")
        deps = wiring.deps()
        principal = await deps.principals.resolve(dict(req.headers))
        arguments = read_json_object(req, deps.settings.max_request_bytes)
        correlation_id = pop_correlation_id(arguments, tool) or correlation_id
        ctx = ToolContext(principal, deps, correlation_id, transport="http", orchestrations=run_service(client))
        outcome = await invoke(tool, arguments, ctx)
        if outcome.error is not None:
            return error_response(outcome.error, correlation_id)
        return json_response(outcome.output, correlation_id)

    async def wrapper(req: func.HttpRequest, client: df.DurableOrchestrationClient) -> func.HttpResponse:
        return await guarded(req, lambda correlation_id: call(req, correlation_id, client))

    # The worker matches bindings by parameter name: the signature must stay (req, client).
    wrapper.__name__ = function_name
    wrapper.__doc__ = f"Call the `{name}` tool with its arguments as the JSON body (see GET /api/tools for its schema)."
    return wrapper


# One HTTP function per tool, each with its own name and route, so the portal, metrics and keys see tools apart.
for _entry in indexed_tools():
    bp.function_name(_entry["function_name"])(
        bp.route(route=f"tools/{_entry['name']}", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)(
            bp.durable_client_input(client_name="client")(_tool_function(_entry["name"], _entry["function_name"]))
        )
    )


@bp.function_name("tools_unknown")
@bp.route(route="tools/{name}", methods=["POST"], auth_level=func.AuthLevel.FUNCTION)
@endpoint
async def tools_unknown(req: func.HttpRequest, correlation_id: str) -> func.HttpResponse:
    """Any tool name without a function: 404 METHOD_NOT_FOUND naming the tools there are.

    Routes with literal segments take precedence over `{name}` (on Azure and on the offline host), so
    this only answers names that are not tools.
    """
    from shared.core.errors import MethodNotFound

    name = req.route_params.get("name", "")
    raise MethodNotFound(f"Tool {name[:100]!r} is not registered.", details={"tool": name[:100], "available": [e["name"] for e in indexed_tools()]},
                         recovery_suggestions=["GET /api/tools lists every tool with its schema."])
