"""The app's web extension as the worker drives it (azure_functions_runtime/http_v2.py): its WebApp routes every
path and method to the worker's catch-all, which hands back the function's own Response, streamed as it is."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from functions import http_streams


async def _asgi(app: Any, method: str, path: str, body: bytes) -> list[dict[str, Any]]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"x-ms-invocation-id", b"inv-1"), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 7071),
    }
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_every_path_and_method_reaches_the_catch_all_with_the_body() -> None:
    seen: list[tuple[str, str, bytes]] = []
    web = http_streams.WebApp()

    @web.route
    async def catch_all(request: Request) -> Response:
        seen.append((request.method, request.url.path, await request.body()))
        return Response(b"made by the function", status_code=201, headers={"X-Correlation-ID": "c1"})

    for method, path in (("POST", "/api/mcp"), ("DELETE", "/api/runs/r1/x"), ("GET", "/openapi.json")):
        sent = asyncio.run(_asgi(web.get_app(), method, path, b'{"a":1}' if method == "POST" else b""))
        assert sent[0]["status"] == 201, (method, path)
        assert (b"x-correlation-id", b"c1") in sent[0]["headers"]
        assert b"".join(m.get("body", b"") for m in sent[1:]) == b"made by the function"
    # /openapi.json too: FastAPI's extension answered it with FastAPI's own document, never the function.
    assert seen == [("POST", "/api/mcp", b'{"a":1}'), ("DELETE", "/api/runs/r1/x", b""), ("GET", "/openapi.json", b"")]


def test_a_streamed_response_goes_out_chunk_by_chunk() -> None:
    web = http_streams.WebApp()

    async def chunks() -> Any:
        for part in (b"one\n", b"two\n"):
            yield part

    @web.route
    async def catch_all(request: Request) -> Response:
        return StreamingResponse(chunks(), media_type="text/event-stream")

    sent = asyncio.run(_asgi(web.get_app(), "GET", "/api/stream", b""))
    assert [m["body"] for m in sent[1:] if m.get("body")] == [b"one\n", b"two\n"]


def test_the_hosts_route_parameters_replace_the_servers() -> None:
    request = Request({"type": "http", "path_params": {"path": "api/runs/r1"}})
    http_streams.RequestType.synchronizer.sync_route_params(request, {"run_id": "r1"})
    assert request.path_params == {"run_id": "r1"}


def test_the_worker_accepts_the_types_the_functions_use() -> None:
    from azurefunctions.extensions.base import (  # type: ignore[import-untyped]
        RequestTrackerMeta,
        ResponseTrackerMeta,
    )

    assert RequestTrackerMeta.check_type(Request)
    assert ResponseTrackerMeta.check_type(Response)
    assert ResponseTrackerMeta.check_type(StreamingResponse)
