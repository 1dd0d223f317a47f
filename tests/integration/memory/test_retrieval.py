"""Retrieval quality through the real service and store: the corpus's 200 incidents, its 60 queries and our
paraphrase sets (written before tuning; figures in shared/memory/README.md), with and without the bundled
embedding model."""

from __future__ import annotations

import uuid

import pytest

from shared.identity.models import Principal
from shared.memory.embeddings import local_embedder
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.tools.deps import Deps
from tests.fixtures.memory import retrieval

# Floors a little under the figures measured on 2026-11-27, second pass (README): the test fails if a change
# makes retrieval worse. (top-1, top-3) per query set; the held-out halves were never looked at while tuning.
HYBRID_FLOORS = {
    # The model is off by default (README); the sets it was not tuned on show why. Tune-set figures, measured
    # with it on the same day: corpus 0.983 / 1.000, tune 0.973 / 0.987, hard_tune 0.733 / 0.933.
    "heldout": (0.84, 0.91),  # 0.867 / 0.933 (held-out: measured once)
    "hard_heldout": (0.60, 0.80),  # 0.633 / 0.833 (held-out: measured once)
    "blind": (0.40, 0.65),  # 0.425 / 0.675: worse than the words alone, hence the model is off by default
}
LEXICAL_FLOORS = {
    "corpus": (0.98, 0.98),  # 1.000 / 1.000
    "heldout": (0.88, 0.93),  # 0.907 / 0.960
    "hard_heldout": (0.61, 0.78),  # 0.633 / 0.800 (0.667 / 0.833 before the second pass)
    "blind": (0.60, 0.78),  # 0.625 / 0.800
}


@pytest.fixture(scope="module")
async def loaded(deps: Deps) -> tuple[Deps, Principal, dict[str, str]]:
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock, [local_embedder()])
    who = Principal(workspace_id=f"ws-retrieval-{uuid.uuid4().hex[:8]}", user_id="eval", source="dev")
    ids = await retrieval.load(service, who)
    return deps, who, ids


@pytest.mark.parametrize("name", list(HYBRID_FLOORS))
async def test_hybrid_retrieval(loaded: tuple[Deps, Principal, dict[str, str]], name: str) -> None:
    deps, who, ids = loaded
    assert len(ids) == 200
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock, [local_embedder()])
    top1, top3, misses = await retrieval.accuracy(service, who, ids, retrieval.query_sets()[name])
    print(f"hybrid {name}: top-1 {top1:.3f}, top-3 {top3:.3f}; misses: {misses}")
    assert top1 >= HYBRID_FLOORS[name][0], misses
    assert top3 >= HYBRID_FLOORS[name][1], misses


@pytest.mark.parametrize("name", list(LEXICAL_FLOORS))
async def test_lexical_retrieval_alone(loaded: tuple[Deps, Principal, dict[str, str]], name: str) -> None:
    deps, who, ids = loaded
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock)  # no model: the index and the vocabulary
    top1, top3, misses = await retrieval.accuracy(service, who, ids, retrieval.query_sets()[name])
    print(f"lexical {name}: top-1 {top1:.3f}, top-3 {top3:.3f}; misses: {misses}")
    assert top1 >= LEXICAL_FLOORS[name][0], misses
    assert top3 >= LEXICAL_FLOORS[name][1], misses
