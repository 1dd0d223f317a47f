"""Stored free text (lookup queries, outcome notes) keeps no secret a user pasted with a log."""

from __future__ import annotations

import json
import uuid

from shared.identity.models import Principal
from shared.memory.models import AddIncidentRequest, RankedSolutionsRequest, RecordOutcomeRequest
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.tools.deps import Deps

PASTED = (
    "upstream 401 calling https://api.example/v1/items?api_key=AK-SECRET-1&page=2 with "
    "Authorization: Basic dXNlcjpTRUNSRVQtUEFTUw== and x-functions-key: FK-SECRET-2, "
    "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.SIGNATURE-SECRET-3"
)
SECRETS = ["AK-SECRET-1", "dXNlcjpTRUNSRVQtUEFTUw", "FK-SECRET-2", "SIGNATURE-SECRET-3", "eyJzdWIiOiJib2IifQ"]


async def test_lookup_query_and_outcome_notes_are_stored_redacted(deps: Deps) -> None:
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock)
    who = Principal(workspace_id=f"ws-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")
    added = await service.add_incident(
        who,
        AddIncidentRequest(
            title="upstream 401 from items api", steps=["rotate the key"], env={}, worked=False, notes=PASTED
        ),
    )
    ranked = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=PASTED, env={}))
    assert added.solution_id is not None
    await service.record_outcome(
        who,
        RecordOutcomeRequest(
            solution_id=added.solution_id, worked=True, env={}, notes=PASTED, lookup_id=ranked.lookup_id
        ),
    )

    docs = await (await deps.cosmos.container("memory")).query_all(who.workspace_id)
    stored = [d for d in docs if d["type"] in ("lookup", "outcome")]
    assert len(stored) == 3  # one lookup, two outcomes
    text = json.dumps(stored)
    assert "upstream 401" in text
    assert "[REDACTED]" in text
    for secret in SECRETS:
        assert secret not in text, secret
