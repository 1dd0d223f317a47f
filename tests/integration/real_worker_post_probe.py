"""Run in the worker venv (`.venv-worker/bin/python -I THIS APP_DIR`): one MCP `tools/call whoami` POSTed through
the real worker's HTTP streams, as the host makes it (the InvocationRequest with the trigger and the durableClient
binding, the request itself to the worker's internal server); prints {"invocation", "status", "content_type",
"body"} as JSON. The GET-only probe in devhost/real_worker.py covers the rest of the worker's contract."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import types
from typing import Any


async def _call(app_dir: str) -> dict[str, Any]:
    import aiohttp
    from azure_functions_runtime import handle_event

    from devhost.real_worker import _protos, start_invocation

    protos = _protos()
    init = types.SimpleNamespace(
        worker_init_request=types.SimpleNamespace(capabilities={}, function_app_directory=app_dir)
    )
    started = await handle_event.worker_init_request(
        types.SimpleNamespace(request=init, properties={"host": "127.0.0.1", "protos": protos})
    )
    metadata = await handle_event.functions_metadata_request(types.SimpleNamespace(request=None, properties={}))
    fn = next(f for f in metadata.function_metadata_results if f.name == "mcp")
    http_uri = dict(started.capabilities)["HttpUri"]
    unused = "http://127.0.0.1:9/"  # whoami never calls the Durable API
    client = {"taskHubName": "probe", "creationUrls": {}, "managementUrls": {}, "rpcBaseUrl": unused}
    http = protos.RpcHttp(
        method="POST", url="http://127.0.0.1/api/mcp", headers={}, params={}, query={}, body=protos.TypedData()
    )
    bindings = [
        protos.ParameterBinding(name="req", data=protos.TypedData(http=http)),
        protos.ParameterBinding(name="client", data=protos.TypedData(string=json.dumps(client))),
    ]
    invocation_id, invoked = start_invocation(handle_event, fn, bindings)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    headers = {
        "x-ms-invocation-id": invocation_id,
        "host": "127.0.0.1",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        for _ in range(100):  # the server was started as a task of this loop: wait until it listens
            try:
                async with session.post(f"{http_uri}/api/mcp", data=json.dumps(body), headers=headers) as answer:
                    call = {
                        "status": answer.status,
                        "content_type": answer.headers.get("Content-Type", ""),
                        "body": await answer.text(),
                    }
                    break
            except aiohttp.ClientConnectorError:
                await asyncio.sleep(0.1)
        else:
            raise RuntimeError(f"the worker's HTTP server at {http_uri} never listened")
    response = await invoked
    call["invocation"] = "Success" if response.result.status == protos.StatusResult.Success else "Failure"
    return call


if __name__ == "__main__":
    app = sys.argv[1]
    sys.path.insert(0, app)  # as the worker's proxy does; also where devhost/ is
    os.chdir(app)
    print(json.dumps(asyncio.run(_call(app))))
