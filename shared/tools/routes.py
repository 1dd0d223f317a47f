"""REST routes a capability declares next to its tools: method, path, typed parameters, body and answer.

A capability whose users are apps rather than agents (the mobile app's `/api/tasks`, `/api/chat/...`)
declares `RouteSet` routes in its folder. The functions layer generates one HTTP function per route
(from the manifest, like the per-tool functions), validates the path and query parameters and the JSON
body against the route's pydantic models before the handler runs, and answers with the response model;
`GET /api/openapi.json` documents every route from the same models. Handlers never see the HTTP layer.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from shared.identity.models import Principal
    from shared.tools.deps import Deps
    from shared.tools.invoke import ToolContext

M = TypeVar("M", bound=BaseModel)
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
_PATH = re.compile(r"^[a-z][a-z0-9_-]*(/([a-z][a-z0-9_-]*|\{[a-z][a-z0-9_]*\}))*$")
_PARAM = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# The query parameter that carries the function key (`?code=`, OpenAPI's functionKeyQuery): the Functions
# host checks it and passes it on to the function, so it is never a route parameter.
FUNCTION_KEY_PARAM = "code"


class RouteParams(BaseModel):
    """Base of a route's path and query parameters: unknown query parameters are an error, not ignored."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


# A continuation in a query string: printable ASCII, short enough that the URL stays well inside the
# front ends' limits (Azure's and the offline host's 8 KB request line) even when percent-encoded.
CONTINUATION_PATTERN = r"^[!-~]+$"
CONTINUATION_MAX = 2_000


def as_model(model: type[M], values: Any, *, what: str = "request") -> M:
    """`model` from a route's values (its params or body turned into a tool's input), or VALIDATION_ERROR."""
    from pydantic import ValidationError

    from shared.core.errors import validation_failed_from_pydantic

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc, what=what) from None


class RouteBody(BaseModel):
    """Base of a route's JSON body: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


@dataclass
class RouteCall:
    """What a route handler gets: the caller, the dependencies, the validated parameters and body."""

    principal: Principal
    deps: Deps
    correlation_id: str
    params: Any
    body: Any

    def tool_context(self) -> ToolContext:
        """The same caller as a tool context, for routes that serve a tool's work (`/api/tasks` -> get_all_tasks)."""
        from shared.tools.invoke import ToolContext

        return ToolContext(self.principal, self.deps, self.correlation_id, transport="rest")


@dataclass
class Answer:
    """A handler's answer when it is not the route's default status (201 with a Location, 202...)."""

    body: BaseModel
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


RouteHandler = Callable[[RouteCall], Awaitable[BaseModel | Answer]]


@dataclass(frozen=True, eq=False)
class Route:
    """One REST route: `path` is relative to /api (`tasks/{task_id}`), its `{names}` fields of `params`."""

    name: str
    capability: str
    method: Method
    path: str
    summary: str
    description: str
    handler: RouteHandler
    response: type[BaseModel]
    params: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    status: int = 200
    # Error statuses the route documents besides the ones every authenticated route may answer.
    errors: tuple[int, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def function_name(self) -> str:
        return "rest_" + self.name

    @property
    def path_params(self) -> list[str]:
        return _PARAM.findall(self.path)


class RouteSet:
    """The routes of one capability; its `routes.py` declares them with `@routes.route(...)`."""

    def __init__(self, capability: str) -> None:
        self.capability = capability
        self.routes: list[Route] = []

    def route(
        self,
        method: Method,
        path: str,
        *,
        name: str,
        status: int = 200,
        errors: Iterable[int] = (),
        tags: Iterable[str] = (),
        response: type[BaseModel] | None = None,
    ) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        """Declare `async def handler(call: RouteCall) -> ResponseModel` as `method /api/<path>`.

        The parameter and body models are read from the handler's keyword-only annotations `params` and
        `body` (either may be absent); the first docstring line is the summary, the rest the description.
        A handler that returns an `Answer` (another status, headers) names its body model in `response`.
        """

        def register(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            import typing

            hints = typing.get_type_hints(handler)
            answer = response or hints.get("return")
            if not (inspect.isclass(answer) and issubclass(answer, BaseModel)):
                raise TypeError(f"route {name}: the return annotation (or `response`) must be a pydantic model")
            params, body = hints.get("params"), hints.get("body")
            for what, model in (("params", params), ("body", body)):
                if model is not None and not (inspect.isclass(model) and issubclass(model, BaseModel)):
                    raise TypeError(f"route {name}: {what} must be a pydantic model")
            doc = inspect.getdoc(handler)
            if not doc:
                raise TypeError(f"route {name}: the handler's docstring documents the route and is required")
            summary, _, description = doc.partition("\n")
            route = Route(
                name=name,
                capability=self.capability,
                method=method,
                path=path,
                summary=summary.strip(),
                description=description.strip(),
                handler=_adapt(handler, params is not None, body is not None),
                response=answer,
                params=params,
                body=body,
                status=status,
                errors=tuple(errors),
                tags=tuple(tags) or (self.capability,),
            )
            _check(route)
            self.routes.append(route)
            return handler

        return register


def _adapt(handler: Callable[..., Awaitable[Any]], takes_params: bool, takes_body: bool) -> RouteHandler:
    async def call(rc: RouteCall) -> BaseModel | Answer:
        kwargs: dict[str, Any] = {}
        if takes_params:
            kwargs["params"] = rc.params
        if takes_body:
            kwargs["body"] = rc.body
        result: BaseModel | Answer = await handler(rc, **kwargs)
        return result

    return call


def _check(route: Route) -> None:
    if not _NAME.match(route.name):
        raise ValueError(f"route name {route.name!r}: lower-case letters, digits and '_'")
    if not _PATH.match(route.path):
        raise ValueError(f"route {route.name}: path {route.path!r} is not lower-case segments and {{params}}")
    fields = set(route.params.model_fields) if route.params is not None else set()
    if FUNCTION_KEY_PARAM in fields:
        raise ValueError(f"route {route.name}: {FUNCTION_KEY_PARAM!r} is the function key's query parameter")
    missing = [p for p in route.path_params if p not in fields]
    if missing:
        raise ValueError(f"route {route.name}: path parameters {missing} are not fields of its params model")
    if route.body is not None and route.method in ("GET", "DELETE"):
        raise ValueError(f"route {route.name}: a {route.method} route takes no body")


class RouteTable:
    """Every capability's routes; refuses two routes on one method and path, or one function name twice."""

    def __init__(self, sets: Iterable[RouteSet]) -> None:
        self._routes: dict[str, Route] = {}
        seen: dict[tuple[str, str], str] = {}
        for rs in sets:
            for r in rs.routes:
                if r.name in self._routes:
                    raise ValueError(f"route {r.name!r} is declared twice")
                # Azure matches routes ignoring case and parameter names: tasks/{id} and tasks/{x} are one.
                key = (r.method, _PARAM.sub("{}", r.path.lower()))
                if key in seen:
                    raise ValueError(f"routes {r.name!r} and {seen[key]!r} are both {r.method} /api/{r.path}")
                seen[key] = r.name
                self._routes[r.name] = r

    def get(self, name: str) -> Route | None:
        return self._routes.get(name)

    def __iter__(self) -> Iterator[Route]:
        return iter(sorted(self._routes.values(), key=lambda r: (r.path, r.method)))

    def __len__(self) -> int:
        return len(self._routes)


def parse_params(route: Route, path: Mapping[str, str], query: Mapping[str, str]) -> Any:
    """The route's params model from the path and query strings (VALIDATION_ERROR naming the field)."""
    from pydantic import ValidationError

    from shared.core.errors import validation_failed_from_pydantic

    if route.params is None:
        if query:
            return _no_params(route, query)
        return None
    values: dict[str, Any] = dict(query)
    clash = sorted(k for k in values if k in route.path_params)
    if clash:
        from shared.core.errors import ValidationFailed

        raise ValidationFailed(
            f"{clash[0]} is given in the path; do not repeat it in the query",
            details={"errors": [{"field": c, "problem": "given in the path and the query"} for c in clash]},
        )
    values.update({k: path.get(k, "") for k in route.path_params})
    try:
        return route.params.model_validate(values)
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc, what="parameters") from None


def _no_params(route: Route, query: Mapping[str, str]) -> None:
    from shared.core.errors import ValidationFailed

    names = sorted(query)[:5]
    raise ValidationFailed(
        f"{route.method} /api/{route.path} takes no query parameters",
        details={"errors": [{"field": n[:100], "problem": "unknown parameter"} for n in names]},
    )


def parse_body(route: Route, data: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from shared.core.errors import validation_failed_from_pydantic

    if route.body is None:
        return None
    try:
        return route.body.model_validate(data)
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc, what="body") from None
