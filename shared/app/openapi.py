"""The OpenAPI 3.1 document of the app (`GET /api/openapi.json`), generated from the catalogue's own models.

Every capability REST route and every per-tool function `POST /api/tools/{name}` is described from the
same pydantic models that validate it, so the document cannot drift from the code; errors share one
`Error` schema (the envelope of DESIGN.md). JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so
pydantic's schemas go in as they are, with their `$defs` lifted into `components.schemas`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from shared.core.errors import HTTP_STATUS
from shared.tools.capability import Catalogue
from shared.tools.registry import ToolOutput
from shared.tools.routes import Route

VERSION = "1.0.0"
_REF = "#/components/schemas/{model}"
_WHY = {
    400: "The request is invalid (VALIDATION_ERROR names each field; INVALID_REQUEST: not a JSON object).",
    401: "No valid credentials (UNAUTHORIZED).",
    403: "The credentials may not do this (FORBIDDEN), e.g. a user_id that is not the caller's.",
    404: "Not found, or not the caller's (NOT_FOUND: another user's id looks like an unknown one).",
    409: "The state changed (CONFLICT), e.g. an expired or used confirmation token.",
    413: "The body is over the size limit.",
    415: "The body is not declared JSON (INVALID_REQUEST): send Content-Type: application/json.",
    429: "Too many requests (RATE_LIMITED): retry after the Retry-After header.",
    502: "A service the app depends on failed (UPSTREAM_ERROR), e.g. the LLM.",
    503: (
        "Not configured (NOT_CONFIGURED), or a store is down or not answering (SERVICE_UNAVAILABLE: nothing was"
        " changed; retry after the Retry-After header)."
    ),
}
# Every authenticated route may answer these, whatever its own errors (503: a store outage); one with a body
# also 415.
_COMMON_ERRORS = (400, 401, 413, 429, 503)
_BODY_ERRORS = (415,)

_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The one error envelope every endpoint answers with.",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details", "recovery_suggestions", "correlation_id"],
            "properties": {
                "code": {"type": "string", "enum": sorted(HTTP_STATUS)},
                "message": {"type": "string"},
                "details": {"type": "object"},
                "recovery_suggestions": {"type": "array", "items": {"type": "string"}},
                "correlation_id": {"type": "string"},
            },
        }
    },
}


def _mode(model: type[BaseModel], default: Literal["validation", "serialization"]) -> str:
    return "serialization" if issubclass(model, ToolOutput) else default


def _schemas(
    models: list[tuple[type[BaseModel], Literal["validation", "serialization"]]],
) -> tuple[dict[Any, dict[str, Any]], dict[str, Any]]:
    unique = list(dict.fromkeys(models))
    refs, top = models_json_schema(unique, ref_template=_REF)
    return refs, dict(top.get("$defs", {}))


def _error_responses(statuses: tuple[int, ...]) -> dict[str, Any]:
    return {
        str(s): {"description": _WHY.get(s, "Error"), "content": _json({"$ref": _REF.format(model="Error")})}
        for s in sorted(set(statuses))
    }


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _body(ref: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A JSON request body. An empty body reads as `{}` (functions/http.py), so the body is required only
    when the model has required fields (then an empty one is a 400 anyway)."""
    schema = defs[ref["$ref"].rsplit("/", 1)[-1]] if "$ref" in ref else ref
    return {"required": bool(schema.get("required")), "content": _json(ref)}


def _raw_body(media_types: tuple[str, ...]) -> dict[str, Any]:
    """A body taken as sent (an upload): any bytes per media type; multipart as named file parts."""
    file_part = {"type": "string", "contentMediaType": "application/octet-stream"}
    content = {
        mt: {"schema": {"type": "object", "additionalProperties": file_part}} if mt.startswith("multipart/") else {}
        for mt in media_types
    }
    return {"required": True, "description": "The bytes as sent (not JSON).", "content": content}


def _files(media_types: tuple[str, ...]) -> dict[str, Any]:
    """A file answer: its bytes in one of these media types (no schema: the content is the file itself)."""
    return {mt: {} for mt in media_types}


def _params(route: Route, params_schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = params_schema
    if "$ref" in schema:  # a top-level model comes back as a reference; parameters need its fields
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema.get("properties", {}).items():
        where = "path" if name in route.path_params else "query"
        out.append(
            {
                "name": name,
                "in": where,
                "required": where == "path" or name in required,
                "description": prop.get("description", ""),
                "schema": {k: v for k, v in prop.items() if k not in ("description", "title")},
            }
        )
    return out


def build(cat: Catalogue) -> dict[str, Any]:
    """The document for a catalogue (pure: the same catalogue gives the same document)."""
    routes = list(cat.routes)
    tools = list(cat.registry)
    wanted: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = []
    for r in routes:
        wanted += [(m, "validation") for m in (r.params, r.body) if m is not None]
        if r.response is not None:
            wanted.append((r.response, "serialization"))
    for t in tools:
        wanted += [(t.input_model, "validation"), (t.output_model, "serialization")]
    refs, defs = _schemas(wanted)
    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        content = _files(r.serves) if r.response is None else _json(refs[(r.response, "serialization")])
        op: dict[str, Any] = {
            "operationId": r.name,
            "summary": r.summary,
            "description": r.description,
            "tags": list(r.tags),
            "responses": {
                **{
                    str(s): {"description": r.summary, "content": content}
                    for s in sorted({r.status, *r.other_statuses})
                },
                **_error_responses((*_COMMON_ERRORS, *(_BODY_ERRORS if r.body is not None else ()), *r.errors)),
            },
        }
        if r.params is not None:
            op["parameters"] = _params(r, refs[(r.params, "validation")], defs)
        if r.body is not None:
            op["requestBody"] = _body(refs[(r.body, "validation")], defs)
        elif r.raw_body:
            op["requestBody"] = _raw_body(r.accepts)
        paths.setdefault(f"/api/{r.path}", {})[r.method.lower()] = op
    for t in tools:
        a = t.annotations
        paths[f"/api/tools/{t.name}"] = {
            "post": {
                "operationId": f"tool_{t.name}",
                "summary": a.title or t.name,
                "description": t.description,
                "tags": [f"tools: {t.capability}"],
                "requestBody": _body(refs[(t.input_model, "validation")], defs),
                "responses": {
                    "200": {
                        "description": "The tool's output.",
                        "content": _json(refs[(t.output_model, "serialization")]),
                    },
                    **_error_responses((*_COMMON_ERRORS, *_BODY_ERRORS, 403, 404, 409, 502, 503)),
                },
                "x-mcp-annotations": {
                    "readOnlyHint": a.read_only,
                    "destructiveHint": a.destructive,
                    "idempotentHint": a.idempotent,
                    "openWorldHint": a.open_world,
                },
            }
        }
    paths.update(_platform_paths())
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Firebreak",
            "version": VERSION,
            "description": (
                "Every tool is also served over MCP at POST /api/mcp (Streamable HTTP). Authenticate with the "
                "function key (x-functions-key header or ?code=) on Azure, and a workspace API key or an Entra "
                "ID token as 'Authorization: Bearer ...'. Errors are the envelope in components.schemas.Error."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{"functionKey": [], "bearer": []}, {"functionKeyQuery": [], "bearer": []}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": {**dict(sorted(defs.items())), "Error": _ERROR_SCHEMA},
            "securitySchemes": {
                "functionKey": {"type": "apiKey", "in": "header", "name": "x-functions-key"},
                "functionKeyQuery": {"type": "apiKey", "in": "query", "name": "code"},
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A workspace API key (fbk_...) or an Entra ID access token for the app.",
                },
            },
        },
    }


def _platform_paths() -> dict[str, dict[str, Any]]:
    obj = {"type": "object"}
    return {
        "/api/openapi.json": {
            "get": {
                "operationId": "openapi_document",
                "summary": "This document.",
                "tags": ["platform"],
                "responses": {"200": {"description": "OpenAPI 3.1", "content": _json(obj)}},
            }
        },
        "/api/tools": {
            "get": {
                "operationId": "tools_document",
                "summary": "Every tool with its annotations and input and output JSON Schemas.",
                "tags": ["platform"],
                "responses": {"200": {"description": "The tools", "content": _json(obj)}, **_error_responses((401,))},
            }
        },
    }


@lru_cache(maxsize=4)
def document_bytes(cat: Catalogue) -> bytes:
    """The serialised document, built once per catalogue and process (pydantic schema generation is not free)."""
    return json.dumps(build(cat), separators=(",", ":"), sort_keys=False).encode()
