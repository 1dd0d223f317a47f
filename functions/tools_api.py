"""Per-tool HTTP functions `POST /api/tools/{name}` and the tools document `GET /api/tools`, from the catalogue."""

from __future__ import annotations

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint, error_response, json_response

# A durable blueprint: every tool function gets the durable client binding, so a tool whose work
# outlives the request (collect.run) can continue it as an orchestration.
bp = df.Blueprint()


@bp.function_name("tools_document")
@bp.route(route="tools", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint()
async def tools_document(call: Call) -> func.HttpResponse:
    """List every tool with its description, annotations, input and output JSON Schemas and HTTP path."""
    return call.json(wiring.catalogue().registry.document())


async def _call_tool(call: Call, name: str) -> func.HttpResponse:
    """Run tool `name` with the JSON body as its arguments; its output, or the envelope with the mapped status."""
    from shared.core.errors import MethodNotFound
    from shared.tools.invoke import ToolContext, invoke, pop_correlation_id

    tool = wiring.catalogue().registry.get(name)
    if tool is None:
        raise MethodNotFound(
            f"Tool {name[:100]!r} is not registered.",
            details={"tool": name[:100], "available": [t.name for t in wiring.catalogue().registry]},
            recovery_suggestions=["GET /api/tools lists every tool with its schema."],
        )
    arguments = call.json_body()
    correlation_id = pop_correlation_id(arguments, tool) or call.correlation_id
    ctx = ToolContext(call.caller, call.deps, correlation_id, transport="http", orchestrations=call.runs())
    outcome = await invoke(tool, arguments, ctx)
    if outcome.error is not None:
        return error_response(outcome.error, correlation_id)
    return json_response(outcome.output, correlation_id)


def _tool_function(name: str, function_name: str):  # type: ignore[no-untyped-def]  # the worker reads the wrapper's own signature
    async def handler(call: Call) -> func.HttpResponse:
        return await _call_tool(call, name)

    handler.__name__ = function_name
    handler.__doc__ = f"Call the `{name}` tool with its arguments as the JSON body (see GET /api/tools for its schema)."
    return endpoint(durable=True)(handler)


def tool_functions(entries: list[dict[str, str]]) -> df.Blueprint:
    """One HTTP function per indexed tool, each with its own name and route, so the portal, metrics and
    keys see tools apart. `entries` come from the manifest (name, function_name), read at index time."""
    tools = df.Blueprint()
    for entry in entries:
        tools.function_name(entry["function_name"])(
            tools.route(route=f"tools/{entry['name']}", methods=["POST"], auth_level=func.AuthLevel.ANONYMOUS)(
                tools.durable_client_input(client_name="client")(_tool_function(entry["name"], entry["function_name"]))
            )
        )
    return tools


@bp.function_name("tools_by_name")
@bp.route(route="tools/{name}", methods=["POST"], auth_level=func.AuthLevel.ANONYMOUS)
@bp.durable_client_input(client_name="client")
@endpoint(durable=True)
async def tools_by_name(call: Call) -> func.HttpResponse:
    """Any tool name without its own function: a registered tool still runs; anything else is 404 METHOD_NOT_FOUND.

    Routes with literal segments take precedence over `{name}` (on Azure and on the offline host), so
    this answers only names the manifest did not index: unknown names, or a tool added since the
    manifest was generated (it runs here instead of answering 404; `make manifest` gives it its own function).
    """
    return await _call_tool(call, call.route("name"))
