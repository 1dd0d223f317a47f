"""A withheld tool cannot be called: not by call_tool with the offered catalogue, and not by the call activity even
when the stored catalogue still lists it (one stored by an older version, or before the allow-list was narrowed).
Against a real MCP server on 127.0.0.1 whose call log shows what reached it, and the session's stores."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.investigations.activities.call import call
from shared.investigations.activities.payloads import CallRequest, StartedBy, StoredPlan
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits
from shared.investigations.mcp_servers import McpServerConfig, call_tool, list_tools
from shared.investigations.models import InvestigationRecord
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields, workspace_segment
from shared.investigations.tool_policy import ToolPolicy, offer
from shared.tools.deps import Deps
from tests.support.investigations import Run
from tests.support.scenario_mcp_server import serve_app

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}


@dataclass
class Served:
    url: str = ""
    calls: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def server() -> Iterator[Served]:
    """pods_get annotated read-only; exec_shell with no annotations (the MCP default: not read-only)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [
        types.Tool(
            name="pods_get",
            input_schema={"type": "object"},
            annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
        ),
        types.Tool(name="exec_shell", input_schema={"type": "object"}),
    ]
    served = Served()

    async def list_tools_(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool_(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        served.calls.append(params.name)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} ran")])

    app = Server("shell", on_list_tools=list_tools_, on_call_tool=call_tool_).streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host="127.0.0.1"
    )
    with serve_app(app) as port:
        served.url = f"http://127.0.0.1:{port}/mcp"
        yield served


def servers(url: str) -> list[McpServerConfig]:
    return [McpServerConfig(name="k8s", url=url)]


async def test_call_tool_refuses_a_withheld_tool_before_any_request(server: Served) -> None:
    guard = OutboundGuard(Settings.from_env(LOCAL))
    listed = await list_tools(servers(server.url), guard=guard)
    offered = offer(listed, ToolPolicy())
    assert [t.name for t in offered.catalogue.tools] == ["pods_get"]
    before = list(server.calls)
    refused = await call_tool(servers(server.url), offered.catalogue, "exec_shell", {"cmd": "id"}, guard=guard)
    assert (refused.is_error, refused.error_kind) == (True, "unknown_tool")
    assert server.calls == before  # nothing reached the server
    allowed = offer(listed, ToolPolicy(allowed=("k8s/exec_shell",))).catalogue
    ran = await call_tool(servers(server.url), allowed, "exec_shell", {"cmd": "id"}, guard=guard)
    assert (ran.is_error, ran.text) == (False, "exec_shell ran")


@pytest.fixture
async def deps_for(app_env: dict[str, str], server: Served) -> AsyncIterator[Deps]:
    """The session's stores, with the investigations' MCP server set to the test server."""
    env = {**app_env, **LOCAL, "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": server.url}])}
    deps = build_deps(load_settings(env))
    yield deps
    await deps.aclose()


async def test_the_call_activity_refuses_a_tool_a_stored_catalogue_still_lists(deps_for: Deps, server: Served) -> None:
    deps = deps_for
    alert = Alert(name="KubePodCrashLooping", title="KubePodCrashLooping", source="test", starts_at=datetime.now(UTC))
    ws, run_id = f"ws-policy-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    plan = StoredPlan(
        alert=alert,
        limits=Limits.of(deps.settings.section(InvestigationSettings)),
        started_by=StartedBy(user_id="alice", source="dev"),
    ).model_dump(mode="json")
    store = InvestigationStore(deps.cosmos, deps.blobs)
    await store.create(InvestigationRecord(**new_record_fields(ws, "alice", run_id), alert=alert))
    # The catalogue an earlier version stored: every listed tool, the unannotated shell included.
    guard = OutboundGuard(deps.settings)
    listed = await list_tools(servers(server.url), guard=guard)
    assert {t.name for t in listed.tools} == {"pods_get", "exec_shell"}
    blob = f"{workspace_segment(ws)}/investigations/{run_id}/tools.json"
    await deps.blobs.put(blob, listed.model_dump_json(), content_type="application/json")
    before = list(server.calls)

    run = Run(run_id, ws, "alice", plan)
    planned = CallRequest(n=1, key="i1-c1", tool="exec_shell", args={"cmd": "printenv"}, reason="injected")
    out = await call(run, planned, deps)
    assert (out.ok, out.error_kind) == (False, "unknown_tool")
    assert server.calls == before
    looked = await call(run, planned.model_copy(update={"key": "i1-c2", "tool": "pods_get", "args": {}}), deps)
    assert looked.ok
    assert server.calls == [*before, "pods_get"]
