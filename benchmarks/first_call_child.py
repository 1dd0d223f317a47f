"""One cold start as the worker lives it, in this fresh process: `python -m benchmarks.first_call_child`.

Imports function_app and indexes it, sets the worker's HTTP-streams server up as the worker does at init
(the web extension's WebApp with its catch-all, uvicorn imported; nothing listens), then answers one MCP
`tools/call health.check` through the `mcp` function the worker would call, with a real Starlette request
and the durableClient binding's JSON, against the stores in the environment (the local stack). Prints
perf_counter marks as JSON on stdout: `index_s` after import + index, `init_s` after the server setup,
`answer_s` when the answer's last byte is sent; with `--baseline`, only `index_s` of the two SDKs' import.
A line `# first-call` goes to stderr before the call, so `-X importtime` output splits by phase.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import asyncio  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

FIRST_CALL_MARK = "# first-call"
TOOL = "health.check"


def _durable_client_json() -> str:
    """What the durableClient binding carries; health.check never calls the Durable API behind it."""
    base = "http://127.0.0.1:9/runtime/webhooks/durabletask"
    return json.dumps(
        {
            "taskHubName": "coldstart",
            "creationUrls": {"createNewInstancePostUri": f"{base}/orchestrators/{{functionName}}"},
            "managementUrls": {"id": "INSTANCEID", "statusQueryGetUri": f"{base}/instances/INSTANCEID"},
            "rpcBaseUrl": "http://127.0.0.1:9/rpc/",
            "httpBaseUrl": f"{base}/",
        }
    )


async def _answer(user_function: Any) -> tuple[int, bytes]:
    """POST /api/mcp tools/call as the worker's server hands it over; the status and the whole body."""
    from starlette.requests import Request

    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {}}}
    ).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/mcp",
        "raw_path": b"/api/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2025-06-18"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 7071),
        "path_params": {},
    }
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    client_stays = asyncio.Event()  # never set: the client waits for the whole answer

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        await client_stays.wait()
        return {"type": "http.disconnect"}

    status, chunks = 0, []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            chunks.append(message.get("body", b""))

    # As the worker calls it: by parameter name, the durableClient binding as its JSON (DFApp builds the client).
    response = await user_function(req=Request(scope, receive), client=_durable_client_json())
    await response(scope, receive, send)
    return status, b"".join(chunks)


def _worker_init() -> None:
    """What the worker does after indexing with HTTP streams on (azure_functions_runtime/http_v2.py
    initialize_http_server): the recorded web extension's WebApp, its catch-all, and the server's module."""
    import importlib

    from azurefunctions.extensions.base import ModuleTrackerMeta  # type: ignore[import-untyped]

    extension = importlib.import_module(ModuleTrackerMeta.get_module())
    web = extension.WebApp()

    async def catch_all(request: Any) -> Any:  # never called here: the call below goes to the function
        raise RuntimeError("unused")

    web.route(catch_all)
    import uvicorn  # noqa: F401  # WebServer.serve imports it when the worker starts the server


def main() -> None:
    marks: dict[str, float] = {}
    if "--baseline" in sys.argv:
        import azure.durable_functions
        import azure.functions  # noqa: F401

        marks["index_s"] = time.perf_counter() - STARTED
        print(json.dumps(marks))
        return
    import function_app

    functions = {f.get_function_name(): f.get_user_function() for f in function_app.app.get_functions()}
    marks["index_s"] = time.perf_counter() - STARTED
    _worker_init()
    marks["init_s"] = time.perf_counter() - STARTED
    print(FIRST_CALL_MARK, file=sys.stderr, flush=True)
    status, body = asyncio.run(_answer(functions["mcp"]))
    marks["answer_s"] = time.perf_counter() - STARTED
    if status != 200 or b'"isError":false' not in body.replace(b" ", b""):
        raise SystemExit(f"the first tools/call did not answer: {status} {body[:500]!r}")
    print(json.dumps(marks))


if __name__ == "__main__":
    main()
