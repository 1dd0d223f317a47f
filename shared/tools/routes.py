"""REST routes a capability declares next to its tools: method, path, typed parameters, body and answer.

A capability whose users are apps rather than agents (the mobile app's `/api/tasks`, `/api/chat/...`)
declares `RouteSet` routes in its folder. The functions layer generates one HTTP function per route
(from the manifest, like the per-tool functions), validates the path and query parameters and the JSON
body against the route's pydantic models before the handler runs, and answers with the response model;
`GET /api/openapi.json` documents every route from the same models. Handlers never see the HTTP layer.

Besides JSON in and JSON out, a route may declare: `runs=True` (the handler starts, reads or cancels
Durable runs through `call.runs()`), a raw body (`body: RawBody` with the media types it `accepts`, e.g. an
upload), its own body limit (`body_limit`, from the settings), and a file answer (`-> FileAnswer` with the
media types it `serves`: bytes, a media type and headers such as Content-Disposition).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from shared.core.settings import Settings
    from shared.identity.models import Principal
    from shared.tools.deps import Deps
    from shared.tools.invoke import Orchestrations, ToolContext

M = TypeVar("M", bound=BaseModel)
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
_PATH = re.compile(r"^[a-z][a-z0-9_-]*(/([a-z][a-z0-9_-]*|\{[a-z][a-z0-9_]*\}))*$")
_PARAM = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9.+-]*/[a-z0-9*][a-z0-9.+*-]*$")
# The query parameter that carries the function key (`?code=`, OpenAPI's functionKeyQuery): the Functions
# host checks it and passes it on to the function, so it is never a route parameter.
FUNCTION_KEY_PARAM = "code"
# The Functions host refuses request bodies over 100 MB: no route's body limit goes above it.
HOST_BODY_LIMIT = 100 * 1024 * 1024


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


@dataclass(frozen=True)
class RawBody:
    """The body of a route declared with `accepts=`, as sent: its bytes (within the route's body limit) and
    its Content-Type header ("" when none). Query parameters still arrive validated, as `params`."""

    data: bytes
    content_type: str


@dataclass
class RouteCall:
    """What a route handler gets: the caller, the dependencies, the validated parameters and body."""

    principal: Principal
    deps: Deps
    correlation_id: str
    params: Any
    body: Any
    # The runs service over this request's Durable client: set only for routes declared with `runs=True`.
    orchestrations: Orchestrations | None = None

    def runs(self) -> Orchestrations:
        """The runs service (start, status, cancel a Durable run for its owner); declare the route `runs=True`."""
        if self.orchestrations is None:
            raise RuntimeError("this route is not declared with runs=True")
        return self.orchestrations

    def tool_context(self) -> ToolContext:
        """The same caller as a tool context, for routes that serve a tool's work (`/api/tasks` -> get_all_tasks)."""
        from shared.tools.invoke import ToolContext

        return ToolContext(
            self.principal, self.deps, self.correlation_id, transport="rest", orchestrations=self.orchestrations
        )


@dataclass
class Answer:
    """A handler's answer when it is not the route's default status (201 with a Location, 202...)."""

    body: BaseModel
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FileAnswer:
    """A file route's answer: the bytes, their media type (one the route `serves`) and headers such as
    Content-Disposition or a Content-Security-Policy. The functions layer adds the correlation id and
    `Cache-Control: no-store` (unless given here)."""

    data: bytes
    media_type: str
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 200


RouteResult = BaseModel | Answer | FileAnswer
RouteHandler = Callable[[RouteCall], Awaitable[RouteResult]]
BodyLimit = Callable[["Settings"], int]


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
    # The JSON answer's model; None for a file route (then `serves` names its media types).
    response: type[BaseModel] | None
    params: type[BaseModel] | None = None
    # The JSON body's model; None for no body or a raw one (then `accepts` names its media types).
    body: type[BaseModel] | None = None
    status: int = 200
    # Error statuses the route documents besides the ones every authenticated route may answer.
    errors: tuple[int, ...] = ()
    tags: tuple[str, ...] = ()
    # Other success statuses the handler may answer (through `Answer`) with the same response model.
    other_statuses: tuple[int, ...] = ()
    # The function takes the Durable client binding and `call.runs()` works (shared/runs' RunService).
    runs: bool = False
    # Media types of a raw body (`body: RawBody`); empty for JSON or no body.
    accepts: tuple[str, ...] = ()
    # Media types of a file answer (`-> FileAnswer`); empty for a JSON answer.
    serves: tuple[str, ...] = ()
    # The body limit in bytes from the settings; None: FIREBREAK_MAX_REQUEST_BYTES. Never above HOST_BODY_LIMIT.
    body_limit: BodyLimit | None = None
    # The recovery suggestion when a JSON body is not an object (what the route takes instead).
    body_hint: str | None = None

    @property
    def function_name(self) -> str:
        return "rest_" + self.name

    @property
    def path_params(self) -> list[str]:
        return _PARAM.findall(self.path)

    @property
    def raw_body(self) -> bool:
        return bool(self.accepts)

    def max_body_bytes(self, settings: Settings) -> int:
        """The largest body this route reads: its `body_limit` (or the app's JSON limit), at most the host's."""
        limit = self.body_limit(settings) if self.body_limit is not None else settings.max_request_bytes
        return min(limit, HOST_BODY_LIMIT)


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
        other_statuses: Iterable[int] = (),
        runs: bool = False,
        accepts: Iterable[str] = (),
        serves: Iterable[str] = (),
        body_limit: BodyLimit | None = None,
        body_hint: str | None = None,
    ) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        """Declare `async def handler(call: RouteCall) -> ResponseModel` as `method /api/<path>`.

        The parameter and body models are read from the handler's keyword-only annotations `params` and
        `body` (either may be absent); the first docstring line is the summary, the rest the description.
        A handler that returns an `Answer` (another status, headers) names its body model in `response`
        and any success status besides `status` in `other_statuses`.

        `runs=True`: the handler may call `call.runs()` (the function gets the Durable client binding).
        `body: RawBody` with `accepts=("application/octet-stream", ...)`: the body as sent, not JSON.
        `-> FileAnswer` with `serves=("text/markdown", ...)`: bytes with a media type and headers.
        `body_limit(settings) -> int`: this route's body limit (default FIREBREAK_MAX_REQUEST_BYTES).
        `body_hint`: the recovery suggestion when the JSON body is not an object.
        """

        def register(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            import typing

            hints = typing.get_type_hints(handler)
            answer = response or hints.get("return")
            served = tuple(serves)
            if answer is FileAnswer and served:
                answer = None
            elif not (inspect.isclass(answer) and issubclass(answer, BaseModel)):
                raise TypeError(
                    f"route {name}: the return annotation (or `response`) must be a pydantic model,"
                    " or FileAnswer with the media types it `serves`"
                )
            elif served:
                raise TypeError(f"route {name}: `serves` is for a handler that returns FileAnswer")
            params, body = hints.get("params"), hints.get("body")
            accepted = tuple(accepts)
            if (body is RawBody) != bool(accepted):
                raise TypeError(
                    f"route {name}: a raw body is `body: RawBody` together with the media types it `accepts`"
                )
            if body is RawBody:
                body = None
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
                handler=_adapt(handler, params is not None, body is not None or bool(accepted)),
                response=answer,
                params=params,
                body=body,
                status=status,
                errors=tuple(errors),
                tags=tuple(tags) or (self.capability,),
                other_statuses=tuple(other_statuses),
                runs=runs,
                accepts=accepted,
                serves=served,
                body_limit=body_limit,
                body_hint=body_hint,
            )
            _check(route)
            self.routes.append(route)
            return handler

        return register


def _adapt(handler: Callable[..., Awaitable[Any]], takes_params: bool, takes_body: bool) -> RouteHandler:
    async def call(rc: RouteCall) -> RouteResult:
        kwargs: dict[str, Any] = {}
        if takes_params:
            kwargs["params"] = rc.params
        if takes_body:
            kwargs["body"] = rc.body
        result: RouteResult = await handler(rc, **kwargs)
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
    if (route.body is not None or route.raw_body) and route.method in ("GET", "DELETE"):
        raise ValueError(f"route {route.name}: a {route.method} route takes no body")
    for media_type in (*route.accepts, *route.serves):
        if not _MEDIA_TYPE.match(media_type):
            raise ValueError(f"route {route.name}: {media_type!r} is not a media type (type/subtype)")


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

        raise ValidationFailed.on_fields(
            f"{clash[0]} is given in the path; do not repeat it in the query",
            ((c, "given in the path and the query") for c in clash),
        )
    values.update({k: path.get(k, "") for k in route.path_params})
    try:
        return route.params.model_validate(values)
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc, what="parameters") from None


def _no_params(route: Route, query: Mapping[str, str]) -> None:
    from shared.core.errors import ValidationFailed

    names = sorted(query)[:5]
    raise ValidationFailed.on_fields(
        f"{route.method} /api/{route.path} takes no query parameters", ((n, "unknown parameter") for n in names)
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
