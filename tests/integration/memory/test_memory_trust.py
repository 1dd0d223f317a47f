"""What ranked_solutions must not hide or overstate: other incidents' fixes beside an exact signature match,
and fixes registered for an environment where nobody has tried them yet."""

from __future__ import annotations

import uuid

import pytest

from shared.identity.models import Principal
from shared.memory.models import (
    AddIncidentRequest,
    AddSolutionRequest,
    RankedSolution,
    RankedSolutionsRequest,
    RankedSolutionsResult,
    RecordOutcomeRequest,
)
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore, incident_of
from shared.tools.deps import Deps

GO_ON_GKE = {"os": "linux", "language": "go 1.22", "runtime": "kubernetes 1.30", "cloud": "gcp"}
DOTNET_ON_WINDOWS = {"os": "windows server 2022", "language": ".NET 8", "framework": "ASP.NET Core 8"}
SIGNATURE = "ledgerd: shard rebalance aborted: quorum lost while fencing replica"


@pytest.fixture
def service(deps: Deps) -> MemoryService:
    return MemoryService(MemoryStore(deps.cosmos), deps.clock)


def principal() -> Principal:
    return Principal(workspace_id=f"ws-trust-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")


async def _add(
    service: MemoryService, who: Principal, title: str, signature: str, steps: list[str], worked: bool
) -> str:
    r = await service.add_incident(
        who,
        AddIncidentRequest(
            title=title, error_signature=signature, summary=title, steps=steps, env=GO_ON_GKE, worked=worked
        ),
    )
    assert r.solution_id is not None
    return r.solution_id


async def _outcomes(service: MemoryService, who: Principal, solution_id: str, worked: bool, n: int) -> None:
    for _ in range(n):
        await service.record_outcome(who, RecordOutcomeRequest(solution_id=solution_id, worked=worked, env=GO_ON_GKE))


def _by_id(result: RankedSolutionsResult) -> dict[str, RankedSolution]:
    return {r.solution_id: r for r in result.ranked_solutions}


async def _two_incidents(service: MemoryService, who: Principal, *, exact_worked: bool) -> tuple[str, str]:
    """An incident whose signature the query is, and another about the same ledger rebalance failure."""
    exact = await _add(
        service, who, "ledgerd shard rebalance aborts", SIGNATURE, ["restart the fencing agent"], exact_worked
    )
    other = await _add(
        service,
        who,
        "ledgerd shard rebalance aborts when quorum is lost during fencing",
        "ledgerd: fencing timeout on replica",
        ["raise the fencing timeout to 30s"],
        True,
    )
    await _outcomes(service, who, other, True, 9)  # 10 of 10
    return exact, other


async def test_an_exact_signature_match_does_not_hide_other_matching_incidents(service: MemoryService) -> None:
    who = principal()
    exact, other = await _two_incidents(service, who, exact_worked=True)
    result = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=SIGNATURE, env=GO_ON_GKE))
    ranked = _by_id(result)
    assert set(ranked) == {exact, other}
    assert ranked[exact].exact_signature_match is True
    assert ranked[other].exact_signature_match is False
    # The exact match is a strong signal: with evidence on both sides, its proven fix comes first.
    assert result.ranked_solutions[0].solution_id == exact
    assert ranked[exact].incident_relevance > ranked[other].incident_relevance


async def test_a_better_proven_fix_of_another_incident_beats_an_exact_match_that_failed(service: MemoryService) -> None:
    who = principal()
    exact, other = await _two_incidents(service, who, exact_worked=False)
    await _outcomes(service, who, exact, False, 2)  # 0 of 3
    result = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=SIGNATURE, env=GO_ON_GKE))
    assert [r.solution_id for r in result.ranked_solutions] == [other, exact]
    assert result.recommended_solution is not None
    assert result.recommended_solution.solution_id == other


async def test_steps_registered_for_a_new_environment_are_not_proven_there(service: MemoryService) -> None:
    who = principal()
    steps = ["restart the fencing agent"]
    solution_id = await _add(service, who, "ledgerd shard rebalance aborts", SIGNATURE, steps, True)
    await _outcomes(service, who, solution_id, True, 4)  # 5 of 5 on Go/GKE
    variant = await service.add_solution(
        who,
        AddSolutionRequest(incident_id=str(incident_of(solution_id)), steps=steps, env=DOTNET_ON_WINDOWS),
    )
    assert variant.solution_id == solution_id
    assert variant.created is False
    result = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=SIGNATURE, env=DOTNET_ON_WINDOWS))
    top = _by_id(result)[solution_id]
    # Its evidence is on Go/GKE: the Windows bucket it was registered for has no outcome.
    assert top.best_env_bucket_match == "linux|go1|any|k8s1|gcp"
    assert top.env_match_score < 0.5
    assert top.outcomes_in_best_bucket == 5
    assert top.untried_env_buckets == [variant.env_bucket]
    assert "0 outcomes" in top.evidence


async def test_a_fix_nobody_tried_says_so_and_ranks_below_a_proven_one(service: MemoryService) -> None:
    who = principal()
    proven = await _add(service, who, "ledgerd shard rebalance aborts", SIGNATURE, ["restart the fencing agent"], True)
    untried = await service.add_solution(
        who,
        AddSolutionRequest(incident_id=str(incident_of(proven)), steps=["drain the replica first"], env=GO_ON_GKE),
    )
    result = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=SIGNATURE, env=GO_ON_GKE))
    ranked = _by_id(result)
    new = ranked[untried.solution_id]
    assert new.proven is False
    assert new.env_match_score == 0.0
    assert new.best_env_bucket_match is None
    assert new.untried_env_buckets == ["linux|go1|any|k8s1|gcp"]
    assert new.evidence.startswith("unproven: 0 outcomes")
    alone = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=SIGNATURE, env=GO_ON_GKE, limit=1))
    assert alone.recommended_solution is not None
    assert "unproven" not in alone.next_action.instructions  # the recommended one is proven
    assert [r.solution_id for r in result.ranked_solutions] == [proven, untried.solution_id]
