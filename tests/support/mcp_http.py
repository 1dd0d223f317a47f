"""The real mcp client over the app's Streamable HTTP endpoint, with the caller's headers (keys, dev workspace)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client

from devhost.processes import HostProcess


@asynccontextmanager
async def mcp_client(host: HostProcess, headers: dict[str, str]) -> AsyncIterator[Client]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{host.base_url}/api/mcp", http_client=http)) as client,
    ):
        yield client


def rpc_reply(response: Any) -> dict[str, Any]:
    """The JSON-RPC reply of a raw POST to /api/mcp: the JSON body, or the last event of an SSE stream (a
    tools/call whose Accept takes text/event-stream is answered as one; earlier events are notifications)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        reply: dict[str, Any] = json.loads(data[-1])
        return reply
    body: dict[str, Any] = response.json()
    return body
