"""resources/list, resources/read and resources/templates/list over the capabilities' resource kinds.

Every handler runs for the request's principal. A URI no kind owns, one another workspace owns and one
that is gone all answer the same INVALID_PARAMS error with `data.code` NOT_FOUND (the spec's "resource
not found"), so a caller cannot probe what other workspaces hold.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.resources import MAX_RESOURCE_BYTES, ResourceKind

MAX_URI_CHARS = 512


def _not_found(uri: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, "Resource not found", {"code": "NOT_FOUND", "uri": uri[:MAX_URI_CHARS]})


def resource_handlers(
    kinds: Sequence[ResourceKind], deps: Callable[[], Deps], principal_of: Callable[[Any], Principal | None]
) -> dict[str, Any]:
    """The lowlevel Server's `on_*resource*` keyword arguments; {} without kinds (no resources capability)."""
    if not kinds:
        return {}
    templates = types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                name=k.name, uri_template=k.uri_template, description=k.description, mime_type=k.mime_type
            )
            for k in kinds
        ]
    )

    def caller(ctx: Any) -> Principal:
        principal = principal_of(ctx)
        if principal is None:  # the endpoint always resolves one; reaching here means a wiring bug
            raise MCPError(types.INTERNAL_ERROR, "no principal on the request")
        return principal

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        principal, found = caller(ctx), []
        for kind in kinds:
            found += [
                types.Resource(uri=e.uri, name=e.name, description=e.description, mime_type=e.mime_type, size=e.size)
                for e in await kind.list(principal, deps())
            ]
        return types.ListResourcesResult(resources=found)

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return templates

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        kind = next((k for k in kinds if uri.startswith(k.prefix)), None) if len(uri) <= MAX_URI_CHARS else None
        body = await kind.read(caller(ctx), deps(), uri) if kind is not None else None
        if body is None:
            raise _not_found(uri)
        size = len(body.blob) if body.blob is not None else len((body.text or "").encode())
        if size > MAX_RESOURCE_BYTES:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Resource too large to read over MCP ({size} bytes, at most {MAX_RESOURCE_BYTES})",
                {"code": "VALIDATION_ERROR", "uri": uri},
            )
        content: types.TextResourceContents | types.BlobResourceContents
        if body.blob is not None:
            content = types.BlobResourceContents(
                uri=uri, mime_type=body.mime_type, blob=base64.b64encode(body.blob).decode()
            )
        else:
            content = types.TextResourceContents(uri=uri, mime_type=body.mime_type, text=body.text or "")
        return types.ReadResourceResult(contents=[content])

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
    }
