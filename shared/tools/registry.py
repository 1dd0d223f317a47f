"""Tool declarations: name, agent-facing description, input/output models, handler, annotations, capability."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.core.logging import SAFE_CORRELATION_ID_PATTERN
from shared.tools.resources import ResourceKind

# MCP allows letters, digits, '_', '-' and '.', 1..128 chars; we keep names short enough for function names.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown arguments are an error, not silently dropped."""

    # Validators are built on first use, so declaring many tools costs little at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ToolOutput(BaseModel):
    """Base of every tool's output model."""

    model_config = ConfigDict(defer_build=True)


Handler = Callable[[Any, Any], Awaitable[BaseModel]]


@dataclass(frozen=True)
class Annotations:
    """MCP behaviour hints; defaults are the cautious ones (may write, may destroy, may reach out)."""

    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


@dataclass(frozen=True, eq=False)
class Tool:
    name: str
    capability: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Handler
    annotations: Annotations = field(default_factory=Annotations)
    render: Callable[[Any], str] | None = None

    @property
    def function_name(self) -> str:
        """The Azure Functions function name of this tool's HTTP function (letters, digits, '_')."""
        return "tool_" + re.sub(r"[^A-Za-z0-9_]", "_", self.name)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, with the optional `correlation_id` every call path accepts (and pops
        before validation, shared/tools/invoke.py `pop_correlation_id`) unless the tool declares its own."""
        schema = _object_schema(self.input_model)
        if "correlation_id" not in self.input_model.model_fields:
            schema = {**schema, "properties": {**schema.get("properties", {}), "correlation_id": CORRELATION_ARGUMENT}}
        return schema

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return _object_schema(self.output_model)

    def text(self, output: BaseModel) -> str:
        """A short rendering for clients that only read text content."""
        if self.render is not None:
            return self.render(output)
        return json.dumps(output.model_dump(mode="json"), separators=(",", ":"))[:4000]

    def describe(self) -> dict[str, Any]:
        """The tool as the `GET /api/tools` document lists it."""
        a = self.annotations
        return {
            "name": self.name,
            "capability": self.capability,
            "title": a.title,
            "description": self.description,
            "http": {"method": "POST", "path": f"/api/tools/{self.name}"},
            "annotations": {
                "readOnlyHint": a.read_only,
                "destructiveHint": a.destructive,
                "idempotentHint": a.idempotent,
                "openWorldHint": a.open_world,
            },
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
        }


def _object_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(mode="serialization" if issubclass(model, ToolOutput) else "validation")
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _pydantic_model(tool: str, what: str, annotation: object) -> type[BaseModel]:
    if not (inspect.isclass(annotation) and issubclass(annotation, BaseModel)):
        raise TypeError(f"tool {tool}: {what} annotation must be a pydantic model")
    return annotation


# What pop_correlation_id accepts, as a schema (same rule as shared/core/logging.is_safe_correlation_id).
CORRELATION_ARGUMENT: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 128,
    "pattern": SAFE_CORRELATION_ID_PATTERN,
    "description": "Optional id to trace this call in logs and the reply (1-128 ASCII letters, digits, . _ : -).",
}


class ToolSet:
    """The tools of one capability; its `tools.py` declares them with `@toolset.tool(...)`."""

    def __init__(self, capability: str) -> None:
        self.capability = capability
        self.tools: list[Tool] = []
        # MCP resource kinds (shared/tools/resources.py) the capability publishes beside its tools.
        self.resources: list[ResourceKind] = []

    def resource(self, kind: ResourceKind) -> None:
        """Publish `kind` over MCP (resources/list, resources/read, resources/templates/list)."""
        self.resources.append(kind)

    def tool(
        self,
        name: str,
        *,
        title: str | None = None,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        open_world: bool = False,
        render: Callable[[Any], str] | None = None,
    ) -> Callable[[Handler], Handler]:
        """Declare `async def handler(ctx: ToolContext, args: InputModel) -> OutputModel` as tool `name`.

        The docstring is the description the model reads; the schemas come from the annotations.
        """

        def register(handler: Handler) -> Handler:
            hints = typing.get_type_hints(handler)
            params = list(inspect.signature(handler).parameters)
            if len(params) != 2:
                raise TypeError(f"tool {name}: handler must take (ctx, args)")
            input_model = _pydantic_model(name, "input", hints.get(params[1]))
            output_model = _pydantic_model(name, "output", hints.get("return"))
            description = inspect.getdoc(handler)
            if not description:
                raise TypeError(f"tool {name}: the handler's docstring is the tool description and is required")
            self.tools.append(
                Tool(
                    name=name,
                    capability=self.capability,
                    description=description,
                    input_model=input_model,
                    output_model=output_model,
                    handler=handler,
                    annotations=Annotations(title, read_only, destructive, idempotent, open_world),
                    render=render,
                )
            )
            return handler

        return register


class ToolRegistry:
    """All tools by name. Refuses duplicates, names MCP would reject and colliding function names."""

    def __init__(self, toolsets: Iterable[ToolSet]) -> None:
        self._tools: dict[str, Tool] = {}
        self.resources: tuple[ResourceKind, ...] = ()
        function_names: dict[str, str] = {}
        for toolset in toolsets:
            self.resources += tuple(toolset.resources)
            for t in toolset.tools:
                if not _TOOL_NAME.match(t.name):
                    raise ValueError(f"tool name {t.name!r} is not a valid MCP tool name")
                if t.name in self._tools:
                    raise ValueError(f"tool {t.name!r} is declared twice")
                # Azure matches function names and routes ignoring case: WhoAmI and whoami would be one.
                key = t.function_name.lower()
                if key in function_names:
                    raise ValueError(f"tools {t.name!r} and {function_names[key]!r} map to one function name or route")
                self._tools[t.name] = t
                function_names[key] = t.name

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(sorted(self._tools.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self._tools)

    def document(self) -> dict[str, Any]:
        """The JSON document of every tool and its schemas (`GET /api/tools`)."""
        return {"tools": [t.describe() for t in self]}
