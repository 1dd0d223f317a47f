"""`GET /api/openapi.json` (the OpenAPI 3.1 document) and `GET /api/docs` (a page that renders it, no CDN).

Both are public (anonymous at the host, no principal): the document describes the API, it holds no data.
The page is one self-contained file whose script is pinned by hash
in its Content-Security-Policy, so nothing but that script runs and it can reach only this app.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import azure.functions as func

from functions import wiring
from functions.http import Call, endpoint
from shared.core.logging import CORRELATION_HEADER

bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure-functions declares Blueprint.__init__ without annotations

_PAGE = Path(__file__).resolve().parent.parent / "shared" / "app" / "api_docs.html"


@lru_cache(maxsize=1)
def _page() -> tuple[bytes, str]:
    html = _PAGE.read_text(encoding="utf-8")
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode() if script else b"").digest()).decode()
    csp = (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; style-src 'unsafe-inline'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return html.encode("utf-8"), csp


@bp.function_name("openapi_document")
@bp.route(route="openapi.json", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint(anonymous=True)
async def openapi_document(call: Call) -> func.HttpResponse:
    """The OpenAPI 3.1 document of every REST route and per-tool function, generated from their pydantic models."""
    from shared.app.openapi import document_bytes, entra_sign_in

    return func.HttpResponse(
        document_bytes(wiring.catalogue(), entra_sign_in(wiring.settings())),
        status_code=200,
        mimetype="application/json",
        # private: the document is public, but it follows the deployment (its capabilities and routes), so only
        # the caller's own browser keeps it for a while; a shared cache must not serve it across deployments.
        headers={CORRELATION_HEADER: call.correlation_id, "Cache-Control": "private, max-age=300"},
    )


@bp.function_name("api_docs")
@bp.route(route="docs", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@endpoint(anonymous=True)
async def api_docs(call: Call) -> func.HttpResponse:
    """A page for people that renders /api/openapi.json (served by the app: no CDN), with a "Send" per operation."""
    body, csp = _page()
    return func.HttpResponse(
        body,
        status_code=200,
        mimetype="text/html",
        charset="utf-8",
        headers={
            "Content-Security-Policy": csp,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )
