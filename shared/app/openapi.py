"""The OpenAPI 3.1 document of the app (`GET /api/openapi.json`), generated from the catalogue's own models.

Every capability REST route and every per-tool function `POST /api/tools/{name}` is described from the
same pydantic models that validate it, so the document cannot drift from the code; errors share one
`Error` schema (the envelope of DESIGN.md). JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so
pydantic's schemas go in as they are, with their `$defs` lifted into `components.schemas`.

Generated clients read the document too (openapi-python-client, openapi-typescript; see
tests/e2e/test_openapi_generators.py), so names are made safe for them: components get stable unique names
that are also their `title` (two capabilities' `SessionSummary` become `ChatSessionSummary` and
`NeubirdSessionSummary`), and operationIds are identifiers (`tool_report_export` for the tool `report.export`).

Security says how callers really authenticate: the routes are anonymous at the Functions host and the app checks
every call, with an Entra ID access token (`entraId`: OAuth2 authorization code + PKCE when the Entra settings
give the authorize/token URLs, else a bearer JWT) or a workspace API key (`workspaceApiKey`: `Authorization:
Bearer fbk_...`). Every authenticated operation documents 401 and 403 with the error envelope and the
`WWW-Authenticate` challenge; the anonymous ones (health, this document, its page, the Protected Resource
Metadata) have `security: []`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from shared.core.errors import HTTP_STATUS
from shared.core.settings import Settings
from shared.identity.resource import primary_issuer
from shared.tools.capability import Catalogue
from shared.tools.registry import ToolOutput
from shared.tools.routes import Route

VERSION = "1.0.0"
_REF = "#/components/schemas/{model}"
_WHY = {
    400: "The request is invalid (VALIDATION_ERROR names each field; INVALID_REQUEST: not a JSON object).",
    401: (
        "No valid credentials (UNAUTHORIZED): none sent, or a token that is expired, for another audience or"
        " badly signed. WWW-Authenticate says how to authenticate."
    ),
    403: (
        "The credentials may not do this (FORBIDDEN), e.g. a user_id that is not the caller's, or a token"
        ' without the scope (WWW-Authenticate: error="insufficient_scope").'
    ),
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
_COMMON_ERRORS = (400, 401, 403, 413, 429, 503)
# Answers that carry the challenge (RFC 6750 section 3; MCP authorization: resource_metadata points at the
# Protected Resource Metadata).
_CHALLENGED = (401, 403)
_WWW_AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": (
            'The challenge: Bearer realm="firebreak" with resource_metadata="<Protected Resource Metadata URL>" and'
            ' scope="..."; error="invalid_token" for a bad token (401), error="insufficient_scope" (403).'
        ),
        "schema": {"type": "string"},
    }
}
# No security requirement: the document, its page, the readiness probe, the Protected Resource Metadata.
_ANONYMOUS: list[dict[str, list[str]]] = []
# The Protected Resource Metadata function (issue 29), documented when the functions layer has it.
PRM_FUNCTION = "protected_resource_metadata"
PRM_PATH = "/api/.well-known/oauth-protected-resource"
_ENTRA_SCHEME = "entraId"
_API_KEY_SCHEME = "workspaceApiKey"
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


@dataclass(frozen=True)
class EntraSignIn:
    """Where an app signs a person in with Entra ID (authorization code + PKCE) and the scope it asks for."""

    authorization_url: str
    token_url: str
    scope: str


def entra_sign_in(settings: Settings) -> EntraSignIn | None:
    """The sign-in URLs from the Entra settings, or None when token validation is off or the issuer is not Entra's
    `<authority>/v2.0` shape (login.microsoftonline.com/<tenant>/v2.0, External ID's <tenant>.ciamlogin.com/...):
    the document then says only "a bearer JWT"."""
    primary = primary_issuer(settings)
    if primary is None or not primary.issuer.rstrip("/").endswith("/v2.0"):
        return None
    authority = primary.issuer.rstrip("/").removesuffix("/v2.0")
    # The phone (MSAL) asks for the app's own identifier URI's scope; the audience is the app's client id.
    audience = primary.audiences[0].rstrip("/")
    resource = audience if "://" in audience else f"api://{audience}"
    return EntraSignIn(
        authorization_url=f"{authority}/oauth2/v2.0/authorize",
        token_url=f"{authority}/oauth2/v2.0/token",
        scope=f"{resource}/{settings.entra_scope}",
    )


def _security_schemes(sign_in: EntraSignIn | None) -> dict[str, Any]:
    if sign_in is None:
        entra: dict[str, Any] = {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An Entra ID v2.0 access token for the app (Authorization: Bearer <token>).",
        }
    else:
        entra = {
            "type": "oauth2",
            "description": (
                "Entra ID: authorization code with PKCE (S256; MSAL does it), then Authorization: Bearer <access"
                " token>."
            ),
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": sign_in.authorization_url,
                    "tokenUrl": sign_in.token_url,
                    "scopes": {sign_in.scope: "Use Firebreak as the signed-in user."},
                }
            },
        }
    api_key = {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "fbk_ workspace API key",
        "description": "A workspace API key (make api-key) for agents and scripts: Authorization: Bearer fbk_...",
    }
    return {_ENTRA_SCHEME: entra, _API_KEY_SCHEME: api_key}


def _security(sign_in: EntraSignIn | None) -> list[dict[str, list[str]]]:
    return [{_ENTRA_SCHEME: [sign_in.scope] if sign_in else []}, {_API_KEY_SCHEME: []}]


def _error_responses(statuses: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in sorted(set(statuses)):
        answer: dict[str, Any] = {"description": _WHY.get(s, "Error")}
        if s in _CHALLENGED:
            answer["headers"] = _WWW_AUTHENTICATE
        answer["content"] = _json({"$ref": _REF.format(model="Error")})
        out[str(s)] = answer
    return out


def operation_id(name: str) -> str:
    """An identifier every generator takes as a function name: what is not a letter, digit or _ becomes _."""
    return re.sub(r"\W", "_", name, flags=re.ASCII)


def _component_name(key: str) -> str:
    """pydantic names a model by its class, or by module path and class when two share a name
    (`shared__neubird__models__SessionSummary`): that one becomes the capability and the class,
    `NeubirdSessionSummary`."""
    parts = key.split("__")
    if len(parts) > 2 and parts[0] == "shared":
        return parts[1].title().replace("_", "") + parts[-1]
    return operation_id(key)


def _renamed(defs: dict[str, Any]) -> dict[str, str]:
    names = {key: _component_name(key) for key in defs}
    taken = [*names.values(), "Error"]
    clashes = sorted({n for n in taken if taken.count(n) > 1})
    if clashes:
        raise ValueError(f"OpenAPI component names clash: {clashes}; rename one of the models")
    return names


def _rewrite_refs(node: Any, names: dict[str, str]) -> Any:
    prefix = _REF.format(model="")
    if isinstance(node, dict):
        out = {k: _rewrite_refs(v, names) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in names:
            out["$ref"] = prefix + names[ref[len(prefix) :]]
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, names) for v in node]
    return node


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _body(ref: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A JSON request body. An empty body reads as `{}` (functions/http.py), so the body is required only
    when the model has required fields (then an empty one is a 400 anyway)."""
    schema = defs[ref["$ref"].rsplit("/", 1)[-1]] if "$ref" in ref else ref
    return {"required": bool(schema.get("required")), "content": _json(ref)}


def _raw_body(media_types: tuple[str, ...]) -> dict[str, Any]:
    """A body taken as sent (an upload): any bytes per media type; multipart as named file parts. The bytes are
    `format: binary` too (OpenAPI 3.0's spelling), which client generators read as a file argument."""
    file_part = {"type": "string", "contentMediaType": "application/octet-stream"}
    content = {
        mt: {"schema": {"type": "object", "additionalProperties": file_part}}
        if mt.startswith("multipart/")
        else {"schema": {"type": "string", "format": "binary", "contentMediaType": mt}}
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


def build(cat: Catalogue, sign_in: EntraSignIn | None = None) -> dict[str, Any]:
    """The document for a catalogue (pure: the same catalogue and sign-in give the same document); `sign_in`
    from `entra_sign_in(settings)`."""
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
            "operationId": operation_id(r.name),
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
                "operationId": operation_id(f"tool_{t.name}"),
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
    paths.update(_platform_paths(cat))
    names = _renamed(defs)
    schemas = {names[k]: {**v, "title": names[k]} for k, v in defs.items()}
    doc = {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Firebreak",
            "version": VERSION,
            "description": (
                "Every tool is also served over MCP at POST /api/mcp (Streamable HTTP). Authenticate with an Entra "
                "ID access token or a workspace API key (fbk_...) as 'Authorization: Bearer ...'; no function key. "
                "Errors are the envelope in components.schemas.Error; a 401 or 403 also carries WWW-Authenticate."
            ),
        },
        "servers": [{"url": "/"}],
        "security": _security(sign_in),
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": {**dict(sorted(schemas.items())), "Error": _ERROR_SCHEMA},
            "securitySchemes": _security_schemes(sign_in),
        },
    }
    return dict(_rewrite_refs(doc, names))


def _platform_paths(cat: Catalogue) -> dict[str, dict[str, Any]]:
    obj = {"type": "object"}
    paths: dict[str, dict[str, Any]] = {
        "/api/openapi.json": {
            "get": {
                "operationId": "openapi_document",
                "summary": "This document.",
                "tags": ["platform"],
                "security": _ANONYMOUS,
                "responses": {"200": {"description": "OpenAPI 3.1", "content": _json(obj)}},
            }
        },
        "/api/docs": {
            "get": {
                "operationId": "api_docs",
                "summary": "A page that renders this document.",
                "tags": ["platform"],
                "security": _ANONYMOUS,
                "responses": {"200": {"description": "The page", "content": {"text/html": {}}}},
            }
        },
        "/api/health": {
            "get": {
                "operationId": "health",
                "summary": "Readiness: 200 when the stores answer, 503 when one does not.",
                "tags": ["health"],
                "security": _ANONYMOUS,
                "responses": {
                    "200": {"description": "Ready", "content": _json(obj)},
                    "503": {"description": "A store does not answer", "content": _json(obj)},
                },
            }
        },
        "/api/tools": {
            "get": {
                "operationId": "tools_document",
                "summary": "Every tool with its annotations and input and output JSON Schemas.",
                "tags": ["platform"],
                "responses": {
                    "200": {"description": "The tools", "content": _json(obj)},
                    **_error_responses((401, 403)),
                },
            }
        },
    }
    if PRM_FUNCTION in cat.reserved_function_names:
        paths[PRM_PATH] = {
            "get": {
                "operationId": PRM_FUNCTION,
                "summary": "OAuth 2.0 Protected Resource Metadata (RFC 9728): the resource, its authorization servers.",
                "tags": ["platform"],
                "security": _ANONYMOUS,
                "responses": {
                    "200": {"description": "The metadata", "content": _json(obj)},
                    "404": {
                        "description": "Entra ID sign-in is not configured (use a workspace API key)",
                        "content": _json({"$ref": _REF.format(model="Error")}),
                    },
                },
            }
        }
    return paths


@lru_cache(maxsize=4)
def document_bytes(cat: Catalogue, sign_in: EntraSignIn | None = None) -> bytes:
    """The serialised document, built once per catalogue, sign-in and process (pydantic schema generation is not
    free). The functions layer passes `entra_sign_in(settings)`."""
    return json.dumps(build(cat, sign_in), separators=(",", ":"), sort_keys=False).encode()
