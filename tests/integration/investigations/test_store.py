"""InvestigationStore against the session's Cosmos-API server and Azurite: paging, workspace isolation,
concurrent updates, output offload at the inline boundary, record size with large outputs, hostile ids."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.core.errors import Conflict, NotFound, envelope
from shared.core.settings import Settings
from shared.investigations.alerts import Alert
from shared.investigations.models import MAX_INLINE_TOTAL_CHARS, CallEntry, InvestigationRecord, Iteration
from shared.investigations.store import (
    INVESTIGATIONS_CONTAINER,
    InvestigationStore,
    Mutation,
    new_record_fields,
    output_blob_name,
)
from shared.storage.cosmos import CosmosDatabase
from shared.tools.deps import Deps

LIMIT = 32 * 1024


@pytest.fixture(scope="module")
async def store(settings: Settings, deps: Deps) -> AsyncIterator[InvestigationStore]:
    # The container is not in the app's catalogue yet: a database handle of its own, on the session's database.
    cosmos = CosmosDatabase(settings, [INVESTIGATIONS_CONTAINER])
    yield InvestigationStore(cosmos, deps.blobs, inline_output_bytes=LIMIT)
    await cosmos.close()


def _ws() -> str:
    return f"ws-{uuid.uuid4().hex[:8]}"


def _record(workspace: str, **extra: Any) -> InvestigationRecord:
    alert = Alert(
        name="KubePodCrashLooping",
        title="Pod api-1 is crash looping",
        source="prometheus",
        starts_at=datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
        labels={"namespace": "shop", "pod": "api-1"},
    )
    return InvestigationRecord(**new_record_fields(workspace, "user-1", uuid.uuid4().hex), alert=alert, **extra)


async def test_create_then_get_round_trips_the_record(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws, status="running", phase="runbook", progress=10, path="llm", path_reason="model configured")
    await store.create(rec)
    got = await store.get(ws, rec.id)
    assert got == rec
    assert got.alert.labels["pod"] == "api-1"


async def test_list_recent_pages_newest_first(store: InvestigationStore) -> None:
    ws = _ws()
    created = []
    for _ in range(25):
        rec = _record(ws)
        await store.create(rec)
        created.append(rec.id)
    seen: list[str] = []
    pages: list[int] = []
    token: str | None = None
    while True:
        items, token = await store.list_recent(ws, 10, token)
        pages.append(len(items))
        seen.extend(r.id for r in items)
        if not token:
            break
    assert pages[:3] == [10, 10, 5]
    assert seen == list(reversed(created))


async def test_another_workspaces_id_answers_as_an_unknown_id(store: InvestigationStore) -> None:
    owner, other = _ws(), _ws()
    rec = _record(owner)
    await store.create(rec)
    with pytest.raises(NotFound) as foreign:
        await store.get(other, rec.id)
    unknown_id = uuid.uuid4().hex
    with pytest.raises(NotFound) as unknown:
        await store.get(other, unknown_id)
    # The same envelope but for the id the caller gave: nothing says the id exists elsewhere.
    body_foreign = json.dumps(envelope(foreign.value, "c")).replace(rec.id, "ID")
    body_unknown = json.dumps(envelope(unknown.value, "c")).replace(unknown_id, "ID")
    assert body_foreign == body_unknown
    assert "ID" in body_foreign
    with pytest.raises(NotFound):
        await store.update(other, rec.id, lambda r: None)
    assert (await store.list_recent(other, 10))[0] == []
    assert (await store.get(owner, rec.id)).id == rec.id


async def test_concurrent_updates_lose_nothing(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    await store.create(rec)

    def add_phase(i: int) -> Mutation:
        def mutate(r: InvestigationRecord) -> None:
            r.timings.phases_ms[f"p{i}"] = i
            r.progress = min(100, r.progress + 1)

        return mutate

    container = await store.container()
    before = container.requests
    await asyncio.gather(*(store.update(ws, rec.id, add_phase(i)) for i in range(10)))
    print(f"10 concurrent updates: {container.requests - before} round trips (20 without a lost race)")
    got = await store.get(ws, rec.id)
    assert got.timings.phases_ms == {f"p{i}": i for i in range(10)}
    assert got.progress == 10


async def test_append_iteration_is_idempotent_per_n(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    await store.create(rec)
    it1 = Iteration(n=1, calls=[CallEntry(key="i1-c1", tool="pods_list", output="ok", output_bytes=2)])
    await store.append_iteration(ws, rec.id, it1)
    await store.append_iteration(ws, rec.id, it1.model_copy(update={"partial_analysis": "retried"}))
    await store.append_iteration(ws, rec.id, Iteration(n=2))
    got = await store.get(ws, rec.id)
    assert [it.n for it in got.iterations] == [1, 2]
    assert got.iterations[0].partial_analysis == "retried"


async def test_outputs_offload_exactly_past_the_inline_limit(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    at_limit = "a" * LIMIT
    over = "b" * (LIMIT + 1)
    inline = await store.put_output(ws, rec.id, "i1-c1", at_limit)
    assert inline.output == at_limit
    assert inline.output_ref is None
    offloaded = await store.put_output(ws, rec.id, "i1-c2", over)
    assert offloaded.output is None
    assert offloaded.output_ref == output_blob_name(ws, rec.id, "i1-c2")
    assert offloaded.output_bytes == LIMIT + 1
    assert await store.read_output(ws, offloaded.output_ref) == over
    # Multi-byte text is measured in bytes, not characters.
    wide = await store.put_output(ws, rec.id, "i1-c3", "é" * (LIMIT // 2 + 1))
    assert wide.output_ref is not None
    # Another workspace cannot read it, not even by naming the blob.
    with pytest.raises(NotFound):
        await store.read_output(_ws(), offloaded.output_ref)


async def test_read_output_refuses_names_outside_the_prefix(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    ref = (await store.put_output(ws, rec.id, "i1-c1", "x" * (LIMIT + 5))).output_ref
    assert ref is not None
    for hostile in (
        f"{ws}/investigations/{rec.id}/../{rec.id}/i1-c1.txt",
        f"{ws}/investigations/../../other/investigations/{rec.id}/i1-c1.txt",
        f"{ws}/perf/artifacts/x.txt",
        f"/{ref}",
        ref + "/",
    ):
        with pytest.raises(NotFound):
            await store.read_output(ws, hostile)


async def test_a_record_with_15_large_outputs_stays_small(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    await store.create(rec)
    for n in range(1, 6):
        calls = []
        for c in range(1, 4):
            key = f"i{n}-c{c}"
            out = await store.put_output(ws, rec.id, key, f"{key}\n" + "log line\n" * 11_400)  # ~100 KB
            calls.append(
                CallEntry(
                    key=key, tool="pods_log", args={"pod": "api-1"}, reason="why", duration_ms=12, **out.model_dump()
                )
            )
        await store.append_iteration(ws, rec.id, Iteration(n=n, calls=calls, partial_analysis="so far"))
    got = await store.get(ws, rec.id)
    assert len(got.calls()) == 15
    assert all(c.output_ref and c.output is None and c.output_bytes > 100_000 for c in got.calls())
    size = len(json.dumps(got.to_doc()))
    print(f"record with 15 offloaded 100 KB outputs: {size} bytes of JSON")
    assert size < 16 * 1024
    assert (await store.read_output(ws, got.calls()[-1].output_ref or "")).startswith("i5-c3\n")


async def test_hostile_ids_are_not_found_without_a_read(store: InvestigationStore) -> None:
    ws = _ws()
    container = await store.container()
    before = container.requests
    for hostile in ("../" + uuid.uuid4().hex, "a/../b", "x" * 10_240, "", uuid.uuid4().hex.upper(), "%2e%2e%2f"):
        with pytest.raises(NotFound) as err:
            await store.get(ws, hostile)
        assert err.value.details == {"investigation_id": None}
        with pytest.raises(NotFound):
            await store.update(ws, hostile, lambda r: None)
    assert container.requests == before


async def test_a_stale_etag_is_refused_and_a_duplicate_id_conflicts(store: InvestigationStore) -> None:
    # What update's retry loop relies on: the server refuses a replace whose etag is no longer current.
    ws = _ws()
    rec = _record(ws)
    await store.create(rec)
    with pytest.raises(Conflict):
        await store.create(rec)
    container = await store.container()
    raw = await container.read(rec.id, ws)
    assert raw is not None
    await store.update(ws, rec.id, lambda r: setattr(r, "phase", "runbook"))
    with pytest.raises(Conflict):
        await container.replace({**raw, "phase": "stale"}, etag=raw["_etag"])
    assert (await store.get(ws, rec.id)).phase == "runbook"


async def test_a_hostile_workspace_stays_inside_its_own_prefix(store: InvestigationStore) -> None:
    rec = _record("ws")
    ref = (await store.put_output("../other", rec.id, "i1-c1", "y" * (LIMIT + 1))).output_ref
    assert ref == f"..%2Fother/investigations/{rec.id}/i1-c1.txt"
    assert await store.read_output("../other", ref) == "y" * (LIMIT + 1)
    with pytest.raises(NotFound):
        await store.read_output("other", ref)


async def test_inline_outputs_past_the_record_budget_move_to_blob(store: InvestigationStore) -> None:
    ws = _ws()
    rec = _record(ws)
    await store.create(rec)
    texts: dict[str, str] = {}
    for n in range(1, 6):
        calls = []
        for c in range(1, 7):
            key = f"i{n}-c{c}"
            texts[key] = key + "z" * (LIMIT - len(key))  # exactly at the inline limit: put_output keeps it inline
            out = await store.put_output(ws, rec.id, key, texts[key])
            assert out.output is not None
            calls.append(CallEntry(key=key, tool="t", **out.model_dump()))
        await store.append_iteration(ws, rec.id, Iteration(n=n, calls=calls))
    got = await store.get(ws, rec.id)
    inline = [c for c in got.calls() if c.output is not None]
    moved = [c for c in got.calls() if c.output_ref is not None]
    assert len(inline) + len(moved) == 30
    assert sum(len(c.output or "") for c in inline) <= MAX_INLINE_TOTAL_CHARS
    assert moved
    for call in moved:
        assert await store.read_output(ws, call.output_ref or "") == texts[call.key]
    print(f"30 outputs of 32 KB: {len(inline)} inline, {len(moved)} moved; {len(json.dumps(got.to_doc()))} bytes")


async def test_list_summaries_project_each_record_and_page_newest_first(store: InvestigationStore) -> None:
    ws = _ws()
    created = []
    big = {"analysis": "x" * 100_000}
    for _ in range(12):
        rec = _record(ws, status="completed", phase="done", progress=100, path="rule", report=big)
        await store.create(rec)
        await store.append_iteration(ws, rec.id, Iteration(n=1, partial_analysis="y" * 10_000))
        created.append(rec.id)
    first, token = await store.list_summaries(ws, 5)
    assert [s.id for s in first] == list(reversed(created))[:5]
    assert token is not None
    summary = first[0]
    assert summary.alert_name == "KubePodCrashLooping"
    assert summary.alert_title == "Pod api-1 is crash looping"
    assert summary.status == "completed"
    assert summary.path == "rule"
    # The page carries the summary fields only: no report, no iterations.
    assert len(summary.model_dump_json()) < 1_000
    rest: list[str] = []
    while token:
        page, token = await store.list_summaries(ws, 5, token)
        rest.extend(s.id for s in page)
    assert [s.id for s in first] + rest == list(reversed(created))
    assert (await store.list_summaries(_ws(), 5))[0] == []


async def test_a_projection_takes_identifiers_only(store: InvestigationStore) -> None:
    container = await store.container()
    with pytest.raises(ValueError, match="identifiers"):
        await container.query("ws", fields=("id, c.secret",))
