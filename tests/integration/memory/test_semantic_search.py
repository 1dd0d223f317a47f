"""Ranking by meaning: through an OpenAI-compatible embeddings endpoint (a real HTTP double on 127.0.0.1),
and with the model bundled in the wordllama wheel, loaded offline."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from shared.identity.models import Principal
from shared.memory.embeddings import Embedders, EndpointEmbedder, LocalEmbedder
from shared.memory.models import AddIncidentRequest, RankedSolutionsRequest
from shared.memory.service import MemoryService
from shared.memory.settings import MemorySettings
from shared.memory.store import MemoryStore
from shared.tools.deps import Deps
from tests.support.fake_embeddings import FakeEmbeddings, serve

ENV = {"os": "linux", "runtime": "kubernetes 1.29"}
KEY = "sk-test-embeddings-key-123"
# What the double treats as one meaning: the stored incident's words and the query's, none shared.
SYNONYMS = {
    "vanish": "crash",
    "disappear": "crash",
    "crash": "crash",
    "ledger": "books",
    "books": "books",
    "quorum": "majority",
    "majority": "majority",
    "fencing": "isolation",
    "isolation": "isolation",
}


def principal() -> Principal:
    return Principal(workspace_id=f"ws-sem-{uuid.uuid4().hex[:8]}", user_id="tester", source="dev")


def _settings(base_url: str) -> MemorySettings:
    """Read as the app reads them: the endpoint's key is the LLM's variable, taken when settings load."""
    return MemorySettings.from_env(
        {
            "FIREBREAK_MEMORY_LOCAL_EMBEDDINGS": "false",
            "FIREBREAK_MEMORY_EMBEDDINGS_ENDPOINT": base_url,
            "FIREBREAK_MEMORY_EMBEDDINGS_MODEL": "text-embed-small",
            "FIREBREAK_MEMORY_EMBEDDINGS_MIN_SIMILARITY": "0.5",
            "FIREBREAK_LLM_API_KEY": KEY,
        }
    )


async def _incidents(service: MemoryService, who: Principal) -> str:
    added = await service.add_incident(
        who,
        AddIncidentRequest(
            title="ledger crash when quorum lost",
            summary="fencing broke",
            steps=["restore quorum"],
            env=ENV,
            worked=True,
        ),
    )
    await service.add_incident(
        who,
        AddIncidentRequest(title="redis timeouts under load", steps=["raise the timeout"], env=ENV, worked=True),
    )
    return added.incident_id


async def test_an_embeddings_endpoint_finds_an_incident_sharing_no_word(
    deps: Deps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serve(FakeEmbeddings(synonyms=SYNONYMS)) as fake:
        embedders = Embedders.from_settings(_settings(fake.base_url))
        assert [type(m) for m in embedders.models] == [EndpointEmbedder]
        service = MemoryService(MemoryStore(deps.cosmos), deps.clock, embedders.models)
        who = principal()
        expected = await _incidents(service, who)
        words_only = MemoryService(MemoryStore(deps.cosmos), deps.clock)
        query = RankedSolutionsRequest(query_text="books disappear after majority isolation", env=ENV)
        assert (await words_only.ranked_solutions(who, query)).incidents == []
        found = await service.ranked_solutions(who, query)
        await embedders.aclose()
    assert [i.incident_id for i in found.incidents] == [expected]
    assert found.incidents[0].why == "close in meaning (no shared words)"
    assert {r["body"]["model"] for r in fake.requests} == {"text-embed-small"}
    assert {r["authorization"] for r in fake.requests} == {f"Bearer {KEY}"}
    assert KEY not in caplog.text


async def test_an_endpoint_that_fails_leaves_the_words(deps: Deps, caplog: pytest.LogCaptureFixture) -> None:
    with serve(FakeEmbeddings(synonyms=SYNONYMS)) as fake:
        embedders = Embedders.from_settings(_settings(fake.base_url))
        service = MemoryService(MemoryStore(deps.cosmos), deps.clock, embedders.models)
        who = principal()
        expected = await _incidents(service, who)
        fake.fail_with = 500
        found = await service.ranked_solutions(who, RankedSolutionsRequest(query_text="ledger quorum lost", env=ENV))
        unrelated = await service.ranked_solutions(
            who, RankedSolutionsRequest(query_text="books disappear after majority isolation", env=ENV)
        )
        await embedders.aclose()
    assert found.incidents[0].incident_id == expected
    assert unrelated.incidents == []
    assert "embeddings endpoint did not answer" in caplog.text
    assert KEY not in caplog.text


async def test_the_bundled_model_loads_offline_from_the_wheel_and_only_when_asked(deps: Deps) -> None:
    import wordllama  # type: ignore[import-untyped]

    local = LocalEmbedder()
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock, [local])
    loaded = [local.loaded]  # building the service loads nothing
    who = principal()
    added = await service.add_incident(
        who,
        AddIncidentRequest(
            title="JVM pods killed when traffic peaks",
            error_signature="java.lang.OutOfMemoryError: Java heap space",
            steps=["size the heap from the container limit"],
            env=ENV,
            worked=True,
        ),
    )
    loaded.append(local.loaded)
    assert loaded == [False, True]
    assert (Path(wordllama.__file__).parent / "weights" / "l2_supercat_256.safetensors").is_file()
    found = await service.ranked_solutions(
        who, RankedSolutionsRequest(query_text="the spring backend is terminated by the orchestrator", env=ENV)
    )
    assert [i.incident_id for i in found.incidents] == [added.incident_id]
    nothing = await service.ranked_solutions(who, RankedSolutionsRequest(query_text="bake sourdough bread", env=ENV))
    assert nothing.incidents == []
