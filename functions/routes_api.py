"""The capabilities' REST routes (the mobile app's /api/tasks, /api/chat/...): one HTTP function per route.

Generated from the manifest at index time like the per-tool functions; each function looks its route up in
the catalogue, validates the path and query parameters and the JSON body against the route's models
(VALIDATION_ERROR naming the field, before any handler code runs), resolves the caller and answers with
the route's response model or the error envelope.
"""

from __future__ import annotations

from typing import Any

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint


async def serve_route(call: Call, name: str) -> func.HttpResponse:
    from pydantic import BaseModel

    from shared.core.errors import MethodNotFound
    from shared.tools.routes import FUNCTION_KEY_PARAM, Answer, RouteCall, parse_body, parse_params

    route = wiring.catalogue().routes.get(name)
    if route is None:  # the manifest names a route the catalogue lost: `make manifest` was not run
        raise MethodNotFound(f"route {name!r} is not declared", recovery_suggestions=["Run `make manifest`."])
    # `?code=` is the function key (the host has checked it and passes it on, as Azure does): not a parameter.
    query = {k: v for k, v in call.req.params.items() if k != FUNCTION_KEY_PARAM}
    params = parse_params(route, dict(call.req.route_params), query)
    body = parse_body(route, call.json_body()) if route.body is not None else None
    if route.body is None and (call.req.get_body() or b"").strip():
        from shared.core.errors import InvalidRequest

        raise InvalidRequest(f"{route.method} /api/{route.path} takes no body")
    result = await route.handler(RouteCall(call.caller, call.deps, call.correlation_id, params, body))
    answer = result if isinstance(result, Answer) else Answer(result, route.status)
    payload: BaseModel = answer.body
    return call.json(
        payload.model_dump(mode="json"), status=answer.status, headers={"Cache-Control": "no-store", **answer.headers}
    )


def _route_function(name: str, function_name: str):  # type: ignore[no-untyped-def]  # the worker reads the wrapper's own signature
    async def handler(call: Call) -> func.HttpResponse:
        return await serve_route(call, name)

    handler.__name__ = function_name
    handler.__doc__ = f"The `{name}` REST route (documented in GET /api/openapi.json)."
    return endpoint()(handler)


def route_functions(entries: list[dict[str, Any]]) -> df.Blueprint:
    """One HTTP function per declared route, with its own name, method and route template."""
    bp = df.Blueprint()
    for entry in entries:
        bp.function_name(entry["function_name"])(
            bp.route(route=entry["path"], methods=[entry["method"]], auth_level=func.AuthLevel.FUNCTION)(
                _route_function(entry["name"], entry["function_name"])
            )
        )
    return bp
