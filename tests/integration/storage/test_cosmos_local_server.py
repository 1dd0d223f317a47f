"""The Cosmos behaviours the app relies on, proven against the local Cosmos-API server through our layer.

Each test names the gap of the local server it covers (see DESIGN.md and shared/storage/cosmos.py).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from shared.core.errors import Conflict, NotFound, ValidationFailed
from shared.tools.deps import Deps


def _id() -> str:
    return uuid.uuid4().hex


async def test_point_read_of_missing_item_is_none_not_500(deps: Deps) -> None:
    # Gap: the local server answers 500 for a missing id; the compat layer turns that into "not found".
    memory = await deps.cosmos.container("memory")
    assert await memory.read(_id(), "ws-missing") is None
    with pytest.raises(NotFound):
        await memory.get(_id(), "ws-missing", what="incident")


async def test_point_read_in_another_partition_is_not_found(deps: Deps) -> None:
    memory = await deps.cosmos.container("memory")
    doc_id = _id()
    await memory.create({"id": doc_id, "workspace_id": "ws-a", "type": "incident"})
    read = await memory.read(doc_id, "ws-a")
    assert read is not None
    assert read["type"] == "incident"
    assert await memory.read(doc_id, "ws-b") is None


async def test_queries_stay_inside_their_partition(deps: Deps) -> None:
    # Gap: the local server ignores the partition-key header on queries; our WHERE clause carries it.
    memory = await deps.cosmos.container("memory")
    tag = _id()
    for ws in ("ws-q1", "ws-q2"):
        for i in range(3):
            await memory.create({"id": _id(), "workspace_id": ws, "tag": tag, "n": i})
    items = await memory.query_all("ws-q1", "c.tag = @tag", {"@tag": tag})
    assert len(items) == 3
    assert {d["workspace_id"] for d in items} == {"ws-q1"}


async def test_paging_with_continuation_tokens(deps: Deps) -> None:
    # Gap: no OFFSET/LIMIT on the local server; continuation tokens work and are what we use.
    memory = await deps.cosmos.container("memory")
    ws, tag = f"ws-{_id()}", _id()
    for i in range(7):
        await memory.create({"id": f"p{i}-{tag}", "workspace_id": ws, "tag": tag, "n": i})
    seen: list[int] = []
    token = None
    pages = 0
    while True:
        page, token = await memory.query(
            ws, "c.tag = @tag", {"@tag": tag}, order_by="c.n", max_items=3, continuation=token
        )
        seen += [d["n"] for d in page]
        pages += 1
        if not token:
            break
    assert seen == list(range(7))
    assert pages == 3


@pytest.mark.parametrize(
    "forged", ["[1]", "[]", '{"a": 1}', '[{"compositeToken": {"token": null, "range": {"min": "", "max": "FF"}}}]']
)
async def test_a_forged_continuation_is_a_validation_error_not_a_500(deps: Deps, forged: str) -> None:
    # Cosmos answers 400 for a token it did not issue: the caller's mistake, said as VALIDATION_ERROR.
    memory = await deps.cosmos.container("memory")
    with pytest.raises(ValidationFailed) as info:
        await memory.query(f"ws-{_id()}", "", {}, order_by="c.created_at DESC", max_items=2, continuation=forged)
    assert info.value.details["errors"][0]["field"] == "continuation"


async def test_create_twice_is_conflict(deps: Deps) -> None:
    memory = await deps.cosmos.container("memory")
    doc = {"id": _id(), "workspace_id": "ws-c"}
    await memory.create(doc)
    with pytest.raises(Conflict):
        await memory.create(doc)


async def test_stale_etag_replace_is_conflict(deps: Deps) -> None:
    memory = await deps.cosmos.container("memory")
    doc = await memory.create({"id": _id(), "workspace_id": "ws-e", "v": 1})
    await memory.replace({**doc, "v": 2}, etag=doc["_etag"])
    with pytest.raises(Conflict):
        await memory.replace({**doc, "v": 3}, etag=doc["_etag"])
    read = await memory.read(doc["id"], "ws-e")
    assert read is not None
    assert read["v"] == 2


async def test_concurrent_patch_increments_add_up(deps: Deps) -> None:
    # Counters are updated with server-side increments, so concurrent writers never lose an update.
    memory = await deps.cosmos.container("memory")
    doc = await memory.create({"id": _id(), "workspace_id": "ws-p", "worked": 0})
    await asyncio.gather(
        *[memory.patch(doc["id"], "ws-p", [{"op": "incr", "path": "/worked", "value": 1}]) for _ in range(50)]
    )
    read = await memory.read(doc["id"], "ws-p")
    assert read is not None
    assert read["worked"] == 50


async def test_patch_and_delete_of_missing_items(deps: Deps) -> None:
    memory = await deps.cosmos.container("memory")
    with pytest.raises(NotFound):
        await memory.patch(_id(), "ws-x", [{"op": "set", "path": "/a", "value": 1}])
    assert await memory.delete(_id(), "ws-x") is False


async def test_every_catalogued_container_is_created_with_its_partition_key(deps: Deps) -> None:
    from shared.app.capabilities import catalogue

    await deps.cosmos.bootstrap()
    assert set(deps.cosmos.catalogue) == set(catalogue().containers)
    for spec in catalogue().containers.values():
        container = await deps.cosmos.container(spec.name)
        props = await container._c.read()
        assert props["partitionKey"]["paths"] == [spec.partition_key], spec.name


async def test_two_processes_bootstrapping_one_database_both_get_their_containers(settings) -> None:
    # Two clients (two hosts on one stack) create the same database and container at the same moment: the
    # SDK's create_*_if_not_exists reads 404 in both and the slower create is a 409, which must not fail
    # the request that was bootstrapping (seen: POST /api/investigations answering 500 on a second host).
    from shared.app.capabilities import catalogue
    from shared.storage.cosmos import CosmosDatabase

    specs = list(catalogue().containers.values())
    for _ in range(3):
        name = f"race-{_id()[:12]}"
        first, second = (CosmosDatabase(settings, specs, database=name) for _ in range(2))
        try:
            got = await asyncio.gather(first.container("memory"), second.container("memory"))
            doc_id = _id()
            await got[0].create({"id": doc_id, "workspace_id": "ws-race", "type": "incident"})
            assert await got[1].read(doc_id, "ws-race") is not None
        finally:
            await first.drop_database()
            await first.close()
            await second.close()
