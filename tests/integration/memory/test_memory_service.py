"""Debug memory against the local Cosmos: atomic evidence, isolation, bad input that writes nothing."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from pydantic import ValidationError

from shared.core.errors import NotFound, ValidationFailed
from shared.identity.models import Principal
from shared.memory.models import AddIncidentRequest, AddSolutionRequest, RankedSolutionsRequest, RecordOutcomeRequest
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.tools.deps import Deps

ENV = {"os": "linux", "language": "go 1.22", "runtime": "kubernetes 1.30", "cloud": "gcp"}


def principal(ws: str | None = None) -> Principal:
    return Principal(workspace_id=ws or f"ws-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")


@pytest.fixture
def service(deps: Deps) -> MemoryService:
    return MemoryService(MemoryStore(deps.cosmos), deps.clock)


async def _incident(
    service: MemoryService, who: Principal, title: str = "etcd leader election timeouts"
) -> tuple[str, str]:
    r = await service.add_incident(
        who,
        AddIncidentRequest(
            title=title,
            steps=["raise etcd heartbeat interval"],
            env=ENV,
            worked=True,
            error_signature=f"etcdserver: request timed out {uuid.uuid4().hex}",
        ),
    )
    assert r.solution_id is not None
    return r.incident_id, r.solution_id


async def _workspace_docs(deps: Deps, ws: str) -> list[dict]:
    return await (await deps.cosmos.container("memory")).query_all(ws)


async def test_hundred_concurrent_outcomes_are_all_counted(service: MemoryService, deps: Deps) -> None:
    who = principal()
    incident_id, solution_id = await _incident(service, who)
    buckets = ["linux|go1|any|k8s1|gcp", "linux|go1|any|k8s1|aws"]  # one existing bucket, one created under contention

    async def one(i: int) -> None:
        await service.record_outcome(
            who, RecordOutcomeRequest(solution_id=solution_id, worked=i % 3 != 0, env={}, env_bucket=buckets[i % 2])
        )

    await asyncio.gather(*(one(i) for i in range(100)))
    docs = await _workspace_docs(deps, who.workspace_id)
    outcomes = [d for d in docs if d["type"] == "outcome" and d["solution_id"] == solution_id]
    assert len(outcomes) == 101  # 100 + the one add_incident recorded
    detail = await service.get_incident(who, incident_id)
    stats = detail.solutions[0].stats
    worked = sum(1 for o in outcomes if o["worked"])
    assert (stats.worked_count, stats.failed_count) == (worked, 101 - worked)
    per_bucket = {b.env_bucket: b.worked_count + b.failed_count for b in stats.buckets}
    assert per_bucket == {buckets[0]: 51, buckets[1]: 50}


async def test_workspaces_never_see_each_other(service: MemoryService) -> None:
    alice, bob = principal(), principal()
    incident_id, solution_id = await _incident(service, alice, "Kafka consumer lag grows after rebalance storm")
    found = await service.ranked_solutions(
        bob, RankedSolutionsRequest(query_text="kafka consumer lag rebalance", env=ENV)
    )
    assert found.incidents == []
    with pytest.raises(NotFound):
        await service.get_incident(bob, incident_id)
    with pytest.raises(NotFound):
        await service.record_outcome(bob, RecordOutcomeRequest(solution_id=solution_id, worked=True, env=ENV))
    with pytest.raises(NotFound):
        await service.add_solution(bob, AddSolutionRequest(incident_id=incident_id, steps=["x"], env=ENV))
    assert (
        await service.ranked_solutions(
            alice, RankedSolutionsRequest(query_text="kafka consumer lag rebalance", env=ENV)
        )
    ).incidents[0].incident_id == incident_id


async def test_lookup_from_another_workspace_is_not_found_and_writes_nothing(
    service: MemoryService, deps: Deps
) -> None:
    alice, bob = principal(), principal()
    lookup = await service.ranked_solutions(alice, RankedSolutionsRequest(query_text="anything", env=ENV))
    _, solution_id = await _incident(service, bob)
    before = await _workspace_docs(deps, bob.workspace_id)
    with pytest.raises(NotFound):
        await service.record_outcome(
            bob, RecordOutcomeRequest(solution_id=solution_id, worked=True, env=ENV, lookup_id=lookup.lookup_id)
        )
    with pytest.raises(NotFound):
        await service.add_incident(
            bob,
            AddIncidentRequest(
                title="new thing entirely", steps=["a"], env=ENV, worked=True, lookup_id=lookup.lookup_id
            ),
        )
    after = await _workspace_docs(deps, bob.workspace_id)
    assert len(after) == len(before)


@pytest.mark.parametrize(
    ("model", "args", "field"),
    [
        (RankedSolutionsRequest, {"query_text": "x"}, "env"),
        (RecordOutcomeRequest, {"solution_id": "s", "worked": "yes", "env": {}}, "worked"),
        (RecordOutcomeRequest, {"solution_id": "s", "worked": 1, "env": {}}, "worked"),
        (AddSolutionRequest, {"incident_id": "i", "steps": [], "env": {}}, "steps"),
        (AddSolutionRequest, {"incident_id": "i", "steps": ["   "], "env": {}}, "steps"),
        (AddSolutionRequest, {"incident_id": "i", "steps": ["x" * 1_000_000], "env": {}}, "steps"),
        (AddIncidentRequest, {"title": "ok title", "steps": ["a"], "env": {}}, "worked"),
        (
            AddIncidentRequest,
            {"title": "ok title", "steps": ["a"], "env": {"blob": "x" * 10_000}, "worked": True},
            "env",
        ),
    ],
)
def test_bad_input_is_a_validation_error_naming_the_field(model, args, field) -> None:
    with pytest.raises(ValidationError) as info:
        model.model_validate(args)
    assert field in [str(e["loc"][0]) for e in info.value.errors()]


async def test_unknown_ids_and_bad_bucket(service: MemoryService, deps: Deps) -> None:
    who = principal()
    for bad in ("sol_nope_nope", "garbage", "sol_0000000000000000_000000000000"):
        with pytest.raises(NotFound):
            await service.record_outcome(who, RecordOutcomeRequest(solution_id=bad, worked=True, env=ENV))
    with pytest.raises(NotFound):
        await service.add_solution(who, AddSolutionRequest(incident_id="inc_0000000000000000", steps=["a"], env=ENV))
    _incident_id, solution_id = await _incident(service, who)
    with pytest.raises(ValidationError):  # the tool's input model refuses it
        RecordOutcomeRequest(solution_id=solution_id, worked=True, env=ENV, env_bucket="not a bucket!")
    with pytest.raises(ValidationFailed):  # and so does the service, for a caller that skipped the model
        await service.record_outcome(
            who,
            RecordOutcomeRequest.model_construct(
                solution_id=solution_id, worked=True, env=ENV, env_bucket="not a bucket!", lookup_id=None, notes=None
            ),
        )
    assert not [
        d
        for d in await _workspace_docs(deps, who.workspace_id)
        if d["type"] == "outcome" and d.get("env_bucket") == "not a bucket!"
    ]


async def test_concurrent_duplicate_incidents_create_one(service: MemoryService, deps: Deps) -> None:
    who = principal()
    request = AddIncidentRequest(
        title="Redis OOM command not allowed",
        error_signature="OOM command not allowed when used memory > 'maxmemory'",
        steps=["set maxmemory-policy allkeys-lru"],
        env=ENV,
        worked=True,
    )
    results = await asyncio.gather(*(service.add_incident(who, request) for _ in range(5)))
    created = [r for r in results if r.created]
    assert len(created) == 1
    assert {r.incident_id for r in results} == {created[0].incident_id}
    incidents = [d for d in await _workspace_docs(deps, who.workspace_id) if d["type"] == "incident"]
    assert len(incidents) == 1


async def test_near_identical_title_and_summary_is_a_duplicate(service: MemoryService) -> None:
    who = principal()
    first = await service.add_incident(
        who,
        AddIncidentRequest(
            title="Nginx 502 after deploy",
            summary="Upstream pods not ready.",
            steps=["add readiness probe"],
            env=ENV,
            worked=True,
        ),
    )
    second = await service.add_incident(
        who,
        AddIncidentRequest(
            title="nginx 502, after deploy!", summary="upstream pods NOT ready", steps=["other"], env=ENV, worked=False
        ),
    )
    assert first.created
    assert not second.created
    assert second.incident_id == first.incident_id
    other_code = await service.add_incident(
        who,
        AddIncidentRequest(
            title="Nginx 504 after deploy", summary="Upstream pods not ready.", steps=["x"], env=ENV, worked=True
        ),
    )
    assert other_code.created
    assert other_code.incident_id != first.incident_id


async def test_list_incidents_pages_with_continuation_and_filters_by_tag(service: MemoryService) -> None:
    from shared.memory.models import ListIncidentsRequest

    who = principal()
    for i, word in enumerate(["alpha", "bravo", "charlie", "delta", "echo"]):
        await service.add_incident(
            who,
            AddIncidentRequest(
                title=f"{word} service fails", steps=["s"], env=ENV, worked=True, tags=["even" if i % 2 == 0 else "odd"]
            ),
        )
    seen, continuation = [], None
    while True:
        page = await service.list_incidents(who, ListIncidentsRequest(limit=2, continuation=continuation))
        seen += [i.incident_id for i in page.incidents]
        continuation = page.continuation
        if not continuation:
            break
    assert len(seen) == len(set(seen)) == 5
    evens = await service.list_incidents(who, ListIncidentsRequest(tag="even"))
    assert len(evens.incidents) == 3
    assert all("even" in i.tags for i in evens.incidents)
