"""get_investigation_tool_output against the session's Cosmos-API server and Azurite: a call's whole output read in
pages from the record and from Blob, the call it came from, workspace isolation, unknown calls, bad pages."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.app.capabilities import catalogue
from shared.identity.models import Principal
from shared.investigations.alerts import Alert
from shared.investigations.models import CallEntry, InvestigationRecord
from shared.investigations.store import InvestigationStore, new_record_fields, output_blob_name
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, ToolOutcome, invoke

# Lines a person can tell apart, with characters outside ASCII: a page boundary must not split or lose any.
INLINE = "".join(f"line {i:04d} café ✓ réseau\n" for i in range(200))
BLOB = "".join(f"log {i:06d} OOMKilled container memory-eater exceeded 512Mi — 🚨\n" for i in range(3000))


def ctx(deps: Deps, workspace: str) -> ToolContext:
    principal = Principal(workspace_id=workspace, user_id="alice", source="dev")
    return ToolContext(principal, deps, f"corr-{uuid.uuid4().hex[:8]}", transport="rest")


async def call(deps: Deps, workspace: str, name: str, **args: Any) -> ToolOutcome:
    tool = catalogue().registry.get(name)
    assert tool is not None
    return await invoke(tool, args, ctx(deps, workspace))


def output_of(outcome: ToolOutcome) -> dict[str, Any]:
    assert outcome.output is not None, outcome.error
    return outcome.output


@pytest.fixture
async def seeded(deps: Deps) -> tuple[str, str]:
    """(workspace, investigation id) of a record with an inline output, a Blob output, an error, a gone blob."""
    store = InvestigationStore(deps.cosmos, deps.blobs)
    ws = f"ws-out-{uuid.uuid4().hex[:8]}"
    inv = uuid.uuid4().hex
    alert = Alert(
        name="KubePodCrashLooping",
        title="Pod api-1 is crash looping",
        source="prometheus",
        starts_at=datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
        labels={"namespace": "shop", "pod": "api-1"},
    )
    await store.create(InvestigationRecord(**new_record_fields(ws, "alice", inv), alert=alert, status="completed"))
    big = await store.put_output(ws, inv, "i1-c2", BLOB)
    assert big.output_ref is not None  # over the 32 KB inline limit: in Blob
    calls = [
        CallEntry(
            key="i1-c1",
            tool="resources_get",
            args={"kind": "Pod", "name": "api-1"},
            reason="see the pod",
            output=INLINE,
            output_bytes=len(INLINE.encode()),
        ),
        CallEntry(
            key="i1-c2",
            tool="pods_log",
            args={"name": "api-1", "previous": True},
            reason="why it died",
            output_ref=big.output_ref,
            output_bytes=big.output_bytes,
        ),
    ]
    for c in calls:
        await store.put_call(ws, inv, 1, c)
    await store.put_call(
        ws,
        inv,
        2,
        CallEntry(
            key="i2-c1",
            tool="events_list",
            args={"namespace": "shop"},
            output="forbidden: events is not allowed",
            is_error=True,
        ),
    )
    gone = output_blob_name(ws, inv, "i2-c2")  # named, never written: as if the blob had been deleted
    await store.put_call(ws, inv, 2, CallEntry(key="i2-c2", tool="pods_log", output_ref=gone, output_bytes=40_000))
    return ws, inv


async def read_all(deps: Deps, ws: str, inv: str, call_id: str, limit: int) -> tuple[str, list[dict[str, Any]]]:
    pages: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = output_of(
            await call(
                deps,
                ws,
                "get_investigation_tool_output",
                investigation_id=inv,
                call_id=call_id,
                offset=offset,
                limit=limit,
            )
        )
        pages.append(page)
        offset = page["next_offset"]
    return "".join(p["text"] for p in pages), pages


async def test_an_inline_output_reads_whole_in_pages_with_its_call(deps: Deps, seeded: tuple[str, str]) -> None:
    ws, inv = seeded
    whole, pages = await read_all(deps, ws, inv, "i1-c1", 1_000)
    assert whole == INLINE
    assert len(pages) == -(-len(INLINE) // 1_000)
    first = pages[0]
    assert {k: first[k] for k in ("call_id", "iteration", "tool", "args", "reason", "is_error", "stored_in")} == {
        "call_id": "i1-c1",
        "iteration": 1,
        "tool": "resources_get",
        "args": {"kind": "Pod", "name": "api-1"},
        "reason": "see the pod",
        "is_error": False,
        "stored_in": "inline",
    }
    assert (first["total_chars"], first["offset"], first["next_offset"]) == (len(INLINE), 0, 1_000)
    assert pages[-1]["next_offset"] is None
    assert "offset 1000" in first["next_action"]


async def test_a_blob_output_reads_whole_past_the_preview(deps: Deps, seeded: tuple[str, str]) -> None:
    ws, inv = seeded
    view = output_of(await call(deps, ws, "get_alert_investigation", investigation_id=inv))
    listed = {c["call_id"]: c for it in view["iterations"] for c in it["calls"]}
    assert list(listed) == ["i1-c1", "i1-c2", "i2-c1", "i2-c2"]
    assert listed["i1-c2"]["output_in_blob"]
    assert listed["i1-c2"]["output_preview"] == ""  # what was missing: no preview at all for a Blob output
    assert listed["i1-c2"]["output_url"] == f"/api/investigations/{inv}/calls/i1-c2/output"
    assert all(c["key"] == c["call_id"] for c in listed.values())

    whole, pages = await read_all(deps, ws, inv, "i1-c2", 100_000)
    assert whole == BLOB
    assert len(whole) < len(BLOB.encode())  # characters, not bytes: no emoji was cut in half
    assert pages[0]["stored_in"] == "blob"
    assert pages[0]["output_bytes"] == len(BLOB.encode())
    assert pages[0]["available"]
    assert not pages[0]["truncated"]
    default = output_of(await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id="i1-c2"))
    assert (len(default["text"]), default["next_offset"]) == (20_000, 20_000)  # the default page
    tail = output_of(
        await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id="i1-c2", offset=len(BLOB))
    )
    assert (tail["text"], tail["next_offset"]) == ("", None)  # offset == length: an empty last page


async def test_an_error_output_and_a_gone_blob_say_what_they_are(deps: Deps, seeded: tuple[str, str]) -> None:
    ws, inv = seeded
    err = output_of(await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id="i2-c1"))
    assert (err["is_error"], err["text"], err["iteration"]) == (True, "forbidden: events is not allowed", 2)
    gone = output_of(await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id="i2-c2"))
    assert (gone["available"], gone["text"], gone["total_chars"], gone["next_offset"]) == (False, "", 0, None)
    assert "gone" in gone["next_action"]


async def test_another_workspaces_investigation_is_not_found_exactly_as_an_unknown_one(
    deps: Deps, seeded: tuple[str, str]
) -> None:
    _, inv = seeded
    other = f"ws-other-{uuid.uuid4().hex[:8]}"
    unknown = uuid.uuid4().hex
    foreign = await call(deps, other, "get_investigation_tool_output", investigation_id=inv, call_id="i1-c1")
    missing = await call(deps, other, "get_investigation_tool_output", investigation_id=unknown, call_id="i1-c1")
    assert foreign.error is not None
    assert missing.error is not None
    assert foreign.error.code == "NOT_FOUND"

    def body(outcome: ToolOutcome, shown: str) -> str:
        env = outcome.error_envelope()
        env["error"]["correlation_id"] = "c"
        return json.dumps(env).replace(shown, "ID")

    assert body(foreign, inv) == body(missing, unknown)
    assert INLINE[:20] not in json.dumps(foreign.error_envelope())


async def test_an_unknown_call_is_not_found_and_bad_pages_are_validation_errors(
    deps: Deps, seeded: tuple[str, str]
) -> None:
    ws, inv = seeded
    for call_id, shown in (("i9-c9", "i9-c9"), ("../../x", None)):
        outcome = await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id=call_id)
        assert outcome.error is not None
        assert outcome.error.code == "NOT_FOUND"
        assert outcome.error.details == {"investigation_id": inv, "call_id": shown}
        assert "call_id" in outcome.error.recovery_suggestions[0]
    for bad, field in (
        ({"offset": -1}, "offset"),
        ({"limit": 0}, "limit"),
        ({"limit": 100_001}, "limit"),
        ({"offset": "ten"}, "offset"),
        ({"offset": len(INLINE) + 1}, "offset"),
    ):
        outcome = await call(deps, ws, "get_investigation_tool_output", investigation_id=inv, call_id="i1-c1", **bad)
        assert outcome.error is not None, bad
        assert outcome.error.code == "VALIDATION_ERROR", bad
        assert outcome.error.http_status == 400
        assert [e["field"] for e in outcome.error.details["errors"]] == [field], bad
