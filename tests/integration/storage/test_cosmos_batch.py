"""Transactional batch through CosmosContainer.batch against the local Cosmos-API server (devhost/cosmos-server.js).

The server's own batch handler had no Patch and left earlier operations applied when a later one failed;
the wrapper adds Patch (with its condition) and rolls a failed batch back, as Cosmos DB does.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from azure.cosmos.exceptions import CosmosBatchOperationError

from shared.core.errors import Conflict, NotFound
from shared.storage.cosmos import (
    CosmosContainer,
    PreconditionFailed,
    batch_create,
    batch_delete,
    batch_patch,
    batch_read,
    batch_replace,
    batch_upsert,
)
from shared.tools.deps import Deps


def _id() -> str:
    return uuid.uuid4().hex


async def _memory(deps: Deps) -> CosmosContainer:
    return await deps.cosmos.container("memory")


async def _partition(c: CosmosContainer, ws: str) -> dict[str, dict]:
    docs = await c.query_all(ws)
    return {d["id"]: {k: v for k, v in d.items() if not k.startswith("_")} for d in docs}


async def test_batch_applies_every_operation_in_one_round_trip(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    await c.create({"id": "counter", "workspace_id": ws, "n": 1, "owner": "abc"})
    await c.create({"id": "old", "workspace_id": ws, "v": 1})
    before = c.requests
    results = await c.batch(
        ws,
        [
            batch_patch(
                "counter",
                [{"op": "incr", "path": "/n", "value": 2}, {"op": "set", "path": "/at", "value": "t1"}],
                condition="from c where c.owner = 'abc'",
            ),
            batch_create({"id": "new", "workspace_id": ws, "v": 2}),
            batch_upsert({"id": "up", "workspace_id": ws, "v": 3}),
            batch_replace({"id": "old", "workspace_id": ws, "v": 10}),
            batch_read("new"),
        ],
    )
    assert c.requests - before == 1
    # The patch's result carries the value after its incr.
    assert results[0] is not None
    assert results[0]["n"] == 3
    assert results[0]["at"] == "t1"
    assert results[1] is not None
    assert results[1]["v"] == 2
    assert results[4] is not None
    assert results[4]["id"] == "new"
    stored = await _partition(c, ws)
    assert stored["counter"]["n"] == 3
    assert stored["new"]["v"] == 2
    assert stored["up"]["v"] == 3
    assert stored["old"]["v"] == 10
    await c.batch(ws, [batch_delete("new")])
    assert await c.read("new", ws) is None


async def test_failed_condition_rolls_back_the_operations_before_it(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    await c.create({"id": "a", "workspace_id": ws, "n": 1})
    await c.create({"id": "gate", "workspace_id": ws, "owner": "abc", "n": 5})
    await c.create({"id": "gone", "workspace_id": ws, "v": 1})
    before_docs = {d["id"]: d for d in await c.query_all(ws)}
    with pytest.raises(PreconditionFailed) as raised:
        await c.batch(
            ws,
            [
                batch_patch("a", [{"op": "incr", "path": "/n", "value": 1}]),
                batch_create({"id": "created", "workspace_id": ws}),
                batch_delete("gone"),
                batch_upsert({"id": "a2", "workspace_id": ws}),
                batch_patch("gate", [{"op": "incr", "path": "/n", "value": 1}], condition="from c where c.owner = 'x'"),
                batch_create({"id": "after", "workspace_id": ws}),
            ],
        )
    assert raised.value.details == {"id": "gate", "operation": 4}
    after_docs = {d["id"]: d for d in await c.query_all(ws)}
    # Exactly as before: the same documents, the same values, even the same etags (restored, not rewritten).
    assert after_docs == before_docs


async def test_conflict_rolls_back_and_is_typed(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    await c.create({"id": "session", "workspace_id": ws, "count": 0})
    await c.create({"id": "dup", "workspace_id": ws})
    with pytest.raises(Conflict) as raised:
        await c.batch(
            ws,
            [
                batch_patch("session", [{"op": "incr", "path": "/count", "value": 1}]),
                batch_create({"id": "dup", "workspace_id": ws}),
            ],
        )
    assert not isinstance(raised.value, PreconditionFailed)
    assert raised.value.details["operation"] == 1
    session = await c.read("session", ws)
    assert session is not None
    assert session["count"] == 0


async def test_missing_item_is_not_found_and_nothing_is_written(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    with pytest.raises(NotFound):
        await c.batch(
            ws,
            [
                batch_create({"id": "m1", "workspace_id": ws}),
                batch_patch("no-such", [{"op": "incr", "path": "/n", "value": 1}]),
            ],
        )
    assert await c.query_all(ws) == []
    # An id that cannot exist never reaches the server.
    before = c.requests
    with pytest.raises(NotFound):
        await c.batch(ws, [batch_patch("a/../b", [{"op": "set", "path": "/x", "value": 1}])])
    assert c.requests == before


async def test_condition_is_checked_on_the_item_of_the_batch_partition(deps: Deps) -> None:
    c = await _memory(deps)
    ws, other = f"ws-batch-{_id()}", f"ws-batch-{_id()}"
    await c.create({"id": "s", "workspace_id": ws, "owner": "abc", "n": 0})
    await c.create({"id": "s", "workspace_id": other, "owner": "zzz", "n": 0})
    with pytest.raises(PreconditionFailed):
        await c.batch(
            other,
            [batch_patch("s", [{"op": "incr", "path": "/n", "value": 1}], condition="from c where c.owner = 'abc'")],
        )
    # A document of another partition must not be written by a batch of this one.
    with pytest.raises(CosmosBatchOperationError) as bad:
        await c.batch(ws, [batch_create({"id": "x", "workspace_id": other})])
    assert bad.value.status_code == 400
    assert await c.read("x", other) is None
    assert await c.read("x", ws) is None
    await c.batch(
        ws, [batch_patch("s", [{"op": "incr", "path": "/n", "value": 1}], condition="from c where c.owner = 'abc'")]
    )
    mine, theirs = await c.read("s", ws), await c.read("s", other)
    assert mine is not None
    assert mine["n"] == 1
    assert theirs is not None
    assert theirs["n"] == 0


async def test_concurrent_batches_keep_counters_exact(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    await c.create({"id": "counter", "workspace_id": ws, "n": 0})

    async def one(i: int) -> None:
        await c.batch(
            ws,
            [
                batch_patch("counter", [{"op": "incr", "path": "/n", "value": 1}]),
                batch_create({"id": f"item-{i}", "workspace_id": ws}),
            ],
        )

    await asyncio.gather(*(one(i) for i in range(30)))
    counter = await c.read("counter", ws)
    assert counter is not None
    assert counter["n"] == 30
    assert len(await c.query_all(ws, "STARTSWITH(c.id, 'item-')")) == 30


async def test_conditional_single_patch(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    await c.create({"id": "p", "workspace_id": ws, "n": 3})
    with pytest.raises(PreconditionFailed):
        await c.patch("p", ws, [{"op": "set", "path": "/n", "value": 1}], condition="from c where c.n < 1")
    patched = await c.patch("p", ws, [{"op": "set", "path": "/n", "value": 9}], condition="from c where c.n < 9")
    assert patched["n"] == 9


async def test_etag_precondition_in_a_batch(deps: Deps) -> None:
    c = await _memory(deps)
    ws = f"ws-batch-{_id()}"
    doc = await c.create({"id": "e", "workspace_id": ws, "v": 1})
    await c.batch(ws, [batch_replace({"id": "e", "workspace_id": ws, "v": 2}, etag=doc["_etag"])])
    with pytest.raises(PreconditionFailed):
        # The etag of the first version no longer matches.
        await c.batch(
            ws,
            [
                batch_create({"id": "f", "workspace_id": ws}),
                batch_replace({"id": "e", "workspace_id": ws, "v": 3}, etag=doc["_etag"]),
            ],
        )
    current = await c.read("e", ws)
    assert current is not None
    assert current["v"] == 2
    assert await c.read("f", ws) is None
