"""The task tools over MCP with the real client: declarations, a chat-like session, errors as envelopes."""

from __future__ import annotations

import uuid
from typing import Any

from mcp import Client

from devhost.processes import HostProcess
from tests.support.mcp_http import mcp_client

READS = {
    "get_task",
    "get_all_tasks",
    "search_tasks",
    "get_completed_tasks",
    "get_tasks_summary",
    "get_tasks_by_date",
}
TOOLS = READS | {
    "create_task",
    "update_task",
    "delete_task",
    "bulk_delete_tasks",
    "update_task_status",
    "set_task_preferences",
}


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None, result
    out = dict(result.structured_content)
    assert result.is_error == ("error" in out), out
    return out


async def test_declarations(host: HostProcess) -> None:
    async with mcp_client(host, {"x-dev-workspace": f"ws-{uuid.uuid4().hex[:8]}"}) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) >= TOOLS
    for name in TOOLS:
        tool = listed[name]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in READS), name
        assert tool.annotations.destructive_hint is (name in {"delete_task", "bulk_delete_tasks"}), name
        assert tool.output_schema is not None, name
        assert tool.description is not None
        assert "Use it" in tool.description or "Step 1" in tool.description, name
    spec = listed["get_all_tasks"].input_schema["properties"]
    assert (spec["status"]["default"], spec["limit"]["default"], spec["include_deleted"]["default"]) == (
        "all",
        100,
        False,
    )
    assert listed["search_tasks"].input_schema["properties"]["limit"]["default"] == 20
    assert listed["get_completed_tasks"].input_schema["properties"]["limit"]["default"] == 50
    assert listed["get_tasks_summary"].input_schema["properties"]["group_by"]["default"] == "status"
    by_date = listed["get_tasks_by_date"].input_schema
    assert by_date["properties"]["date_type"]["default"] == "due_date"
    assert by_date["properties"]["status"]["default"] == "pending"
    assert "date_range" in by_date["required"]
    assert listed["bulk_delete_tasks"].input_schema["properties"]["require_confirmation"]["default"] is True
    assert set(listed["update_task_status"].input_schema["required"]) == {"task_ids", "new_status"}


async def test_a_session_over_mcp(host: HostProcess) -> None:
    headers = {"x-dev-workspace": f"ws-mcp-{uuid.uuid4().hex[:8]}", "x-dev-user": "carol"}
    async with mcp_client(host, headers) as client:
        prefs = await call(client, "set_task_preferences", tz="Asia/Tokyo")
        assert prefs["tz"] == "Asia/Tokyo"
        ids = []
        for title, category in [("Buy milk", "Shopping"), ("Write report", "Work"), ("Buy bread", "shopping")]:
            ids.append((await call(client, "create_task", title=title, category=category))["task"]["id"])
        listed = await call(client, "get_all_tasks", status="pending", limit=2)
        assert listed["count"] == 2
        assert listed["continuation"]
        rest = await call(client, "get_all_tasks", status="pending", limit=2, continuation=listed["continuation"])
        assert {t["id"] for t in listed["tasks"] + rest["tasks"]} == set(ids)
        found = await call(client, "search_tasks", query="buy")
        assert {t["title"] for t in found["tasks"]} == {"Buy milk", "Buy bread"}
        await call(client, "update_task_status", task_ids=ids[:1], new_status="completed")
        today = await call(client, "get_completed_tasks", date_range="today")
        assert [t["id"] for t in today["tasks"]] == ids[:1]
        assert today["window"]["tz"] == "Asia/Tokyo"
        summary = await call(client, "get_tasks_summary", group_by="category")
        assert [(g["category"], g["count"]) for g in summary["grouped_data"]] == [("Shopping", 2), ("Work", 1)]
        preview = await call(client, "bulk_delete_tasks", category="shopping")
        assert preview["count"] == 2
        assert preview["dry_run"] is True
        bad = await call(
            client,
            "bulk_delete_tasks",
            category="work",
            require_confirmation=False,
            confirmation_token=preview["confirmation_token"],
        )
        assert bad["error"]["code"] == "VALIDATION_ERROR"
        done = await call(
            client,
            "bulk_delete_tasks",
            category="shopping",
            require_confirmation=False,
            confirmation_token=preview["confirmation_token"],
        )
        assert sorted(done["deleted_ids"]) == sorted([ids[0], ids[2]])
        missing = await call(client, "get_task", task_id=ids[0])
        assert missing["error"]["code"] == "NOT_FOUND"
        kept = await call(client, "get_task", task_id=ids[0], include_deleted=True)
        assert kept["task"]["deleted"] is True
        hostile = await call(client, "get_all_tasks", limit=1000)
        assert hostile["error"]["code"] == "VALIDATION_ERROR"
        assert hostile["error"]["details"]["errors"][0]["field"] == "limit"
        remaining = await call(client, "get_all_tasks")
        assert [t["title"] for t in remaining["tasks"]] == ["Write report"]
