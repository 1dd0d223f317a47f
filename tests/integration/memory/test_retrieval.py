"""Retrieval quality on 200 realistic incidents and 60 differently phrased queries (figures in the README)."""

from __future__ import annotations

import uuid

from shared.identity.models import Principal
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.tools.deps import Deps
from tests.fixtures.memory import retrieval

# Measured 2026-11-22; the test fails if a change makes retrieval worse than this.
MIN_TOP1 = 0.85
MIN_TOP3 = 0.95


async def test_top1_and_top3_accuracy(deps: Deps) -> None:
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock)
    who = Principal(workspace_id=f"ws-retrieval-{uuid.uuid4().hex[:8]}", user_id="eval", source="dev")
    ids = await retrieval.load(service, who)
    assert len(ids) == 200
    top1, top3, misses = await retrieval.accuracy(service, who, ids)
    print(f"retrieval: top-1 {top1:.3f}, top-3 {top3:.3f}; misses: {misses}")
    assert top1 >= MIN_TOP1, misses
    assert top3 >= MIN_TOP3, misses
