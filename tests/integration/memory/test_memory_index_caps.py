"""add_incident indexes a bounded number of terms, the heaviest ones, whatever the size of its text."""

from __future__ import annotations

import random
import string
import uuid

from shared.identity.models import Principal
from shared.memory.models import AddIncidentRequest, RankedSolutionsRequest
from shared.memory.search import MAX_INDEXED_TERMS
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.memory.text import tokens
from shared.tools.deps import Deps

ENV = {"os": "linux", "language": "go 1.22", "runtime": "kubernetes 1.30", "cloud": "gcp"}


def _words(rng: random.Random, chars: int) -> str:
    out, size = [], 0
    while size < chars:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(5, 9)))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:chars]


async def test_twelve_kilobytes_of_distinct_words_index_a_bounded_set_of_terms(deps: Deps) -> None:
    rng = random.Random(10)
    who = Principal(workspace_id=f"ws-caps-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock)
    container = await deps.cosmos.container("memory")
    before = container.requests
    title = "zookeeper quorum flapping during rollout"
    await service.add_incident(
        who,
        AddIncidentRequest(
            title=title,
            steps=["pin the zookeeper image"],
            env=ENV,
            worked=True,
            error_signature=_words(rng, 4000),
            summary=_words(rng, 8000),
        ),
    )
    requests = container.requests - before
    terms = [d for d in await container.query_all(who.workspace_id) if d.get("type") == "term"]
    # The old code wrote one term document per distinct word (about 1,500 here) with 3,000+ requests.
    assert len(terms) == MAX_INDEXED_TERMS
    assert requests <= 2 * MAX_INDEXED_TERMS + 20
    indexed = {d["token"] for d in terms}
    assert set(tokens(title)) <= indexed  # the title (weight 3) is always kept
    found = await service.ranked_solutions(who, RankedSolutionsRequest(query_text="zookeeper quorum flapping", env=ENV))
    assert found.ranked_solutions
    assert found.ranked_solutions[0].steps == ["pin the zookeeper image"]
