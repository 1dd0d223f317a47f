"""The capabilities' REST routes (/api/tasks, /api/investigations, /api/runs/{id}...): one HTTP function per route.

Generated from the manifest at index time like the per-tool functions; each function looks its route up in
the catalogue, validates the path and query parameters and the JSON body against the route's models
(VALIDATION_ERROR naming the field, before any handler code runs), resolves the caller and answers with
the route's response model, a file, or the error envelope. A route declared `runs=True` (the manifest's
`runs`) gets the Durable client binding; a raw-body route gets its bytes within the route's body limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import azure.durable_functions as df
import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint, read_body, read_json_object

if TYPE_CHECKING:
    from shared.core.settings import Settings
    from shared.tools.routes import FileAnswer, Route


async def serve_route(call: Call, name: str) -> func.HttpResponse:
    from shared.tools.routes import FUNCTION_KEY_PARAM, Answer, FileAnswer, RouteCall, parse_params

    route = _route(name)
    # `?code=` is the function key: app routes are anonymous at the host, but a client configured before may
    # still send one, which the host passes on (as Azure does). Not a parameter.
    query = {k: v for k, v in call.req.params.items() if k != FUNCTION_KEY_PARAM}
    params = parse_params(route, dict(call.req.route_params), query)
    body = route_body(call.req, route, call.deps.settings)
    runs = call.runs() if route.runs else None
    result = await route.handler(RouteCall(call.caller, call.deps, call.correlation_id, params, body, runs))
    if isinstance(result, FileAnswer):
        return file_response(result, call.correlation_id)
    answer = result if isinstance(result, Answer) else Answer(result, route.status)
    return call.json(
        answer.body.model_dump(mode="json"),
        status=answer.status,
        headers={"Cache-Control": "no-store", **answer.headers},
    )


def _route(name: str) -> Route:
    from shared.core.errors import MethodNotFound

    route = wiring.catalogue().routes.get(name)
    if route is None:  # the manifest names a route the catalogue lost: `make manifest` was not run
        raise MethodNotFound(f"route {name!r} is not declared", recovery_suggestions=["Run `make manifest`."])
    return route


def route_body(req: func.HttpRequest, route: Route, settings: Settings) -> Any:
    """The route's body within its limit (413 over it): RawBody, the validated JSON model, or None (no body
    declared: a body sent anyway is refused)."""
    from shared.core.errors import InvalidRequest
    from shared.tools.routes import RawBody, parse_body

    limit = route.max_body_bytes(settings)
    if route.raw_body:
        return RawBody(read_body(req, limit), req.headers.get("content-type", ""))
    if route.body is None:
        if read_body(req, limit).strip():
            raise InvalidRequest(f"{route.method} /api/{route.path} takes no body")
        return None
    try:
        data = read_json_object(req, limit)
    except InvalidRequest as exc:
        problems = [e.get("problem") for e in exc.details.get("errors", []) if isinstance(e, dict)]
        if problems != ["expected an object"]:
            raise
        hint = (
            route.body_hint or f"Send the JSON object documented as {route.name}'s request body in /api/openapi.json."
        )
        raise InvalidRequest(
            f"The body of {route.method} /api/{route.path} must be a JSON object",
            details=exc.details,
            recovery_suggestions=[hint],
        ) from None
    return parse_body(route, data)


def file_response(answer: FileAnswer, correlation_id: str) -> func.HttpResponse:
    """A file answer as sent: its bytes and media type, the correlation id, no-store unless it says otherwise."""
    from shared.core.logging import CORRELATION_HEADER

    headers = {CORRELATION_HEADER: correlation_id, "Cache-Control": "no-store", **answer.headers}
    return func.HttpResponse(answer.data, status_code=answer.status, mimetype=answer.media_type, headers=headers)


def _body_limit(name: str) -> int:
    """The route's body limit, read by the offline host before the body (the function applies it too)."""
    return _route(name).max_body_bytes(wiring.settings())


def _route_function(name: str, function_name: str, runs: bool):  # type: ignore[no-untyped-def]  # the worker reads the wrapper's own signature
    async def handler(call: Call) -> func.HttpResponse:
        return await serve_route(call, name)

    handler.__name__ = function_name
    handler.__doc__ = f"The `{name}` REST route (documented in GET /api/openapi.json)."
    return endpoint(durable=runs, body_limit=lambda: _body_limit(name))(handler)


def route_functions(entries: list[dict[str, Any]]) -> df.Blueprint:
    """One HTTP function per declared route, with its own name, method and route template; the Durable
    client binding only for routes whose entry says `runs`."""
    bp = df.Blueprint()
    for entry in entries:
        function = _route_function(entry["name"], entry["function_name"], bool(entry.get("runs")))
        if entry.get("runs"):
            function = bp.durable_client_input(client_name="client")(function)
        bp.function_name(entry["function_name"])(
            bp.route(route=entry["path"], methods=[entry["method"]], auth_level=func.AuthLevel.ANONYMOUS)(function)
        )
    return bp
