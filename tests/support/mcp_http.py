"""The real mcp client over the app's Streamable HTTP endpoint, with the caller's headers (keys, dev workspace)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

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
