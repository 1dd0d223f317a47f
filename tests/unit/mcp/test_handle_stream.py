"""handle_stream bounds a streamed tools/call: a client that stops reading, one that goes away and one whose tool
runs too long all end the call (the tool is cancelled), and nothing hangs. The real SDK managers serve the
requests in-process; only the tools are the test's own."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest
from pydantic import Field

from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.mcp.endpoint import McpEndpoint, StreamReply
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolOutput, ToolRegistry, ToolSet

# A hang guard only: every wait below ends long before it unless the code under test hangs.
HANG_GUARD_S = 60
SSE = "application/json, text/event-stream"
CALLER = Principal(workspace_id="ws-stream", user_id="u1", source="dev")


class Watch:
    """What the test tools saw: started, cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


class Empty(ToolInput):
    pass


class Done(ToolOutput):
    done: bool = Field(description="Always true.")


def registry_for(watch: Watch) -> ToolRegistry:
    toolset = ToolSet("streamtest")

    @toolset.tool("stream.chatty", title="Logs forever")
    async def chatty(ctx: ToolContext, args: Empty) -> Done:
        """Sends log notifications until cancelled."""
        watch.started.set()
        try:
            while True:
                await ctx.log("warning", "x" * 2000)
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            watch.cancelled.set()
            raise

    @toolset.tool("stream.waits", title="Waits forever")
    async def waits(ctx: ToolContext, args: Empty) -> Done:
        """Reports progress once, then waits until cancelled."""
        watch.started.set()
        await ctx.report_progress(1, None, "waiting")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            watch.cancelled.set()
            raise
        return Done(done=True)

    return ToolRegistry([toolset])


def endpoint(watch: Watch, **settings: Any) -> McpEndpoint:
    config = Settings(dev_mode=True, environment="local", **settings)
    return McpEndpoint(registry_for(watch), lambda: cast(Deps, None), config, (["127.0.0.1:*"], []))


def call(tool: str) -> bytes:
    params = {"name": tool, "arguments": {}, "_meta": {"progressToken": "p-1"}}
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def start(mcp: McpEndpoint, tool: str, accept: str = SSE, **kw: Any) -> StreamReply:
    headers = {"host": "127.0.0.1:7071", "accept": accept, "content-type": "application/json"}
    return await mcp.handle_stream("POST", "http://127.0.0.1:7071/api/mcp", headers, call(tool), CALLER, "corr-1", **kw)


async def drain(reply: StreamReply) -> bytes:
    return b"".join([c async for c in reply.chunks])


async def test_a_client_that_never_reads_ends_the_call_by_the_send_timeout() -> None:
    watch = Watch()
    mcp = endpoint(watch, mcp_send_timeout_s=0.2)
    try:
        reply = await start(mcp, "stream.chatty")
        assert reply.headers["content-type"].startswith("text/event-stream")
        # Nobody reads: the queue fills, a notification waits past the send timeout, the tool is cancelled.
        await asyncio.wait_for(watch.cancelled.wait(), HANG_GUARD_S)
        # What was queued can still be read, and the stream ends (no result: the call was stopped).
        body = await asyncio.wait_for(drain(reply), HANG_GUARD_S)
        assert b'"result"' not in body
    finally:
        await mcp.aclose()


async def test_a_disconnect_cancels_the_tool() -> None:
    watch, gone = Watch(), asyncio.Event()
    mcp = endpoint(watch)
    try:
        reply = await start(mcp, "stream.waits", disconnected=gone)
        first = await asyncio.wait_for(anext(reply.chunks), HANG_GUARD_S)
        assert b"notifications/progress" in first
        gone.set()
        await asyncio.wait_for(watch.cancelled.wait(), HANG_GUARD_S)
        await asyncio.wait_for(drain(reply), HANG_GUARD_S)
    finally:
        await mcp.aclose()


async def test_a_consumer_that_stops_iterating_cancels_the_tool() -> None:
    watch = Watch()
    mcp = endpoint(watch)
    try:
        reply = await start(mcp, "stream.waits")
        await asyncio.wait_for(anext(reply.chunks), HANG_GUARD_S)
        await asyncio.wait_for(reply.aclose(), HANG_GUARD_S)
        assert watch.cancelled.is_set()
    finally:
        await mcp.aclose()


@pytest.mark.parametrize("accept", [SSE, "application/json"])
async def test_a_tool_past_the_deadline_is_stopped_and_answers_an_error_result(accept: str) -> None:
    watch = Watch()
    mcp = endpoint(watch, mcp_call_deadline_s=0.3)
    try:
        reply = await start(mcp, "stream.waits", accept=accept)
        body = (await asyncio.wait_for(drain(reply), HANG_GUARD_S)).decode()
        assert watch.cancelled.is_set()
        last = (
            body if accept == "application/json" else [ln for ln in body.splitlines() if ln.startswith("data:")][-1][5:]
        )
        result = json.loads(last)["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["error"]["code"] == "SERVICE_UNAVAILABLE"
        assert "deadline" in result["structuredContent"]["error"]["message"]
    finally:
        await mcp.aclose()


async def test_json_accept_gets_json_even_for_tools_call() -> None:
    watch = Watch()
    mcp = endpoint(watch, mcp_call_deadline_s=0.3)
    try:
        reply = await start(mcp, "stream.waits", accept="application/json")
        assert reply.headers["content-type"].startswith("application/json")
        await asyncio.wait_for(drain(reply), HANG_GUARD_S)
    finally:
        await mcp.aclose()
