"""`GET /api/.well-known/oauth-protected-resource`: the app's OAuth Protected Resource Metadata (RFC 9728)."""

from __future__ import annotations

import azure.functions as func

from functions.http import Call, endpoint

bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure-functions declares Blueprint.__init__ without annotations


@bp.function_name("protected_resource_metadata")
@bp.route(route=".well-known/oauth-protected-resource", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint(anonymous=True)
async def protected_resource_metadata(call: Call) -> func.HttpResponse:
    """Where MCP clients learn which authorization server (the Entra tenant) and scope this API takes.

    Anonymous: clients read it before they have a token, through the 401 challenge's resource_metadata. Built
    from settings only (never the request's Host); 404 in the envelope when Entra ID is not configured.
    """
    from shared.identity.resource import protected_resource_metadata  # not at indexing: it imports pydantic

    document = protected_resource_metadata(call.deps.settings)
    return call.json(document.model_dump(mode="json"), headers={"Cache-Control": "public, max-age=300"})
