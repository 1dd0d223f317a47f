"""The app's web extension for the Python worker's HTTP streams, on Starlette alone.

The worker turns HTTP streams on when `azurefunctions.extensions.base` is imported and a module has defined
its `WebApp`/`WebServer` (`ModuleTrackerMeta`); at indexing it checks each HTTP function's request and return
annotations against the types registered here (`RequestTrackerMeta`/`ResponseTrackerMeta`), then at init
imports this module by name, builds `WebApp()`, routes its catch-all through `WebApp.route` and starts
`WebServer(host, port, app).serve()` (azure_functions_runtime/http_v2.py on 3.13, azure_functions_worker/
http_v2.py on 3.11 and 3.12: the same contract).

`azurefunctions-extensions-http-fastapi` implements the same contract with FastAPI, whose import (its OpenAPI
models and pydantic) cost ~0.3 s of every cold start, at indexing. Its `Request` and `Response` are
Starlette's own classes re-exported, so the types the functions take and return are the same ones; only the
worker's internal app is a Starlette router instead of a FastAPI one (which also mounted its own `/docs`
and `/openapi.json` ahead of the catch-all). Import only one web extension: the base package refuses two.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from azurefunctions.extensions import base  # type: ignore[import-untyped]
from starlette.requests import Request as StarletteRequest
from starlette.responses import Response as StarletteResponse
from starlette.responses import StreamingResponse as StarletteStreamingResponse

# Every method the host may forward: the worker's catch-all answers them all.
_METHODS = ["GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]


class RouteParamsSynchronizer(base.RequestSynchronizer):  # type: ignore[misc]
    """The host's route parameters (from the InvocationRequest) onto the request the worker's server got."""

    def sync_route_params(self, request: StarletteRequest, path_params: dict[str, str]) -> None:
        if request is None:
            raise TypeError("Request object is None")
        if path_params is None:
            raise TypeError("Path parameters are None")
        request.path_params.clear()
        request.path_params.update(path_params)


# Registrations, not types to annotate with: the functions take a Starlette Request and return a Starlette
# Response (or a subclass); the worker checks the annotations with issubclass against these `*_type`s.
class RequestType(metaclass=base.RequestTrackerMeta):  # type: ignore[metaclass]
    request_type = StarletteRequest
    synchronizer = RouteParamsSynchronizer()


class ResponseType(metaclass=base.ResponseTrackerMeta):  # type: ignore[metaclass]
    label = base.ResponseLabels.STANDARD
    response_type = StarletteResponse


class StreamingResponseType(metaclass=base.ResponseTrackerMeta):  # type: ignore[metaclass]
    label = base.ResponseLabels.STREAMING
    response_type = StarletteStreamingResponse


class WebApp(base.WebApp):  # type: ignore[misc]
    """The worker's internal ASGI app (looked up by this name): every path and method to the worker's catch-all."""

    def __init__(self) -> None:
        from starlette.applications import Starlette

        self.web_app = Starlette()

    def route(self, func: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        # The catch-all gets the Starlette request and returns the function's Response, which Starlette
        # sends as it is (a streamed body chunk by chunk).
        self.web_app.add_route("/{path:path}", func, methods=_METHODS)
        return func

    def get_app(self) -> Any:
        return self.web_app


class WebServer(base.WebServer):  # type: ignore[misc]
    """uvicorn on the port the worker chose; imported when the worker starts it, after indexing."""

    async def serve(self) -> None:
        import uvicorn

        await uvicorn.Server(uvicorn.Config(self.web_app, host=self.hostname, port=self.port)).serve()
