"""What the OpenAPI document promises about request bodies and the function key, on the pure builders."""

from __future__ import annotations

import pytest
from pydantic import Field

from shared.app.openapi import build
from shared.tools.capability import Capability, Catalogue
from shared.tools.registry import ToolInput, ToolOutput, ToolSet
from shared.tools.routes import RouteBody, RouteCall, RouteParams, RouteSet


class KeyParams(RouteParams):
    code: str = Field(description="Collides with the function key.")


class Out(ToolOutput):
    ok: bool


def test_a_route_may_not_name_a_parameter_after_the_function_key() -> None:
    routes = RouteSet("demo")

    async def handler(call: RouteCall, *, params: KeyParams) -> Out:
        """Demo."""
        return Out(ok=True)

    with pytest.raises(ValueError, match="function key"):
        routes.route("GET", "demo", name="demo_get")(handler)


class OptionalBody(RouteBody):
    note: str | None = None


class RequiredBody(RouteBody):
    note: str


class OptionalArgs(ToolInput):
    limit: int = 10


class RequiredArgs(ToolInput):
    query: str


def _demo() -> Capability:
    tools = ToolSet("demo")
    routes = RouteSet("demo")

    @tools.tool("demo_optional", title="Demo", read_only=True)
    async def optional(ctx, args: OptionalArgs) -> Out:
        """Demo."""
        return Out(ok=True)

    @tools.tool("demo_required", title="Demo", read_only=True)
    async def required(ctx, args: RequiredArgs) -> Out:
        """Demo."""
        return Out(ok=True)

    @routes.route("POST", "demo/optional", name="demo_post_optional")
    async def post_optional(call: RouteCall, *, body: OptionalBody) -> Out:
        """Demo."""
        return Out(ok=True)

    @routes.route("POST", "demo/required", name="demo_post_required")
    async def post_required(call: RouteCall, *, body: RequiredBody) -> Out:
        """Demo."""
        return Out(ok=True)

    @routes.route("GET", "demo/read", name="demo_read")
    async def read(call: RouteCall) -> Out:
        """Demo."""
        return Out(ok=True)

    return Capability(name="demo", summary="Demo.", toolset=tools, routes=routes)


def test_a_body_is_required_only_when_its_model_has_required_fields() -> None:
    # An empty body reads as {} (functions/http.py): with no required field it is a valid request.
    paths = build(Catalogue([_demo()]))["paths"]
    assert paths["/api/tools/demo_optional"]["post"]["requestBody"]["required"] is False
    assert paths["/api/tools/demo_required"]["post"]["requestBody"]["required"] is True
    assert paths["/api/demo/optional"]["post"]["requestBody"]["required"] is False
    assert paths["/api/demo/required"]["post"]["requestBody"]["required"] is True


def test_an_operation_with_a_body_documents_415() -> None:
    paths = build(Catalogue([_demo()]))["paths"]
    assert "415" in paths["/api/tools/demo_optional"]["post"]["responses"]
    assert "415" in paths["/api/demo/required"]["post"]["responses"]
    assert "415" not in paths["/api/demo/read"]["get"]["responses"]
