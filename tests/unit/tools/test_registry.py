"""The registry derives everything from one declaration and refuses ambiguous ones."""

from __future__ import annotations

import pytest
from pydantic import Field

from shared.app.capabilities import catalogue
from shared.tools.registry import ToolInput, ToolOutput, ToolRegistry, ToolSet


class EchoIn(ToolInput):
    text: str = Field(description="What to echo.", max_length=10)


class EchoOut(ToolOutput):
    echoed: str


def _toolset(name: str = "demo.echo") -> ToolSet:
    ts = ToolSet("demo")

    @ts.tool(name, read_only=True, title="Echo")
    async def echo(ctx, args: EchoIn) -> EchoOut:
        """Echo the text back."""
        return EchoOut(echoed=args.text)

    return ts


def test_declaration_derives_schemas_description_and_annotations() -> None:
    tool = ToolRegistry([_toolset()]).get("demo.echo")
    assert tool is not None
    assert tool.description == "Echo the text back."
    assert tool.input_schema["type"] == "object"
    assert tool.input_schema["properties"]["text"]["description"] == "What to echo."
    assert tool.input_schema["required"] == ["text"]
    assert tool.input_schema["additionalProperties"] is False
    assert tool.output_schema["properties"]["echoed"]["type"] == "string"
    described = tool.describe()
    assert described["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert described["http"] == {"method": "POST", "path": "/api/tools/demo.echo"}
    assert tool.function_name == "tool_demo_echo"


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        ToolRegistry([_toolset(), _toolset()])


def test_names_that_collide_as_function_names_are_refused() -> None:
    with pytest.raises(ValueError, match="one function name"):
        ToolRegistry([_toolset("demo.echo"), _toolset("demo_echo")])


@pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "slash/name"])
def test_invalid_mcp_names_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a valid MCP tool name"):
        ToolRegistry([_toolset(bad)])


def test_handler_without_docstring_or_models_is_refused() -> None:
    ts = ToolSet("demo")
    with pytest.raises(TypeError, match="docstring"):

        @ts.tool("demo.nodoc")
        async def nodoc(ctx, args: EchoIn) -> EchoOut:
            return EchoOut(echoed="")

    with pytest.raises(TypeError, match="pydantic model"):

        @ts.tool("demo.untyped")
        async def untyped(ctx, args: dict) -> EchoOut:
            """Doc."""
            return EchoOut(echoed="")


def test_catalogue_registry_serves_health_check_with_agent_facing_docs() -> None:
    registry = catalogue().registry
    names = [t.name for t in registry]
    assert "health.check" in names
    for tool in registry:
        first_line = tool.description.splitlines()[0]
        assert first_line, tool.name
        assert first_line[0].isupper(), tool.name
        assert len(first_line) < 120, tool.name
        for field, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{field} lacks a description"
