"""ranked_solutions with the bundled embedding model vs without it, on the same 1,000-incident workspace in the
same process: p50/p95 latency and their ratio (budget 2.0), the model's one-time load, and one query's embedding.

The workspace is seeded as memory_ranking seeds it (the documents the service writes, in bulk) plus the
vector shards add_incident writes, computed with the same model. Calls alternate between the two services
so drift on a shared machine hits both alike; the model is loaded before timing (its load is reported apart).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import uuid
from typing import Any

from benchmarks.memory_ranking import ENV, _documents, _percentile, _seed
from shared.app.wiring import build_deps
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.memory.embeddings import LocalEmbedder, encode
from shared.memory.models import RankedSolutionsRequest
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore
from shared.memory.vectors import shard_id
from tests.fixtures.memory.corpus import QUERIES

SIZE = 1_000
CALLS = 120
BUDGET = 2.0


async def _vector_docs(model: LocalEmbedder, workspace: str, incidents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    texts = [". ".join((d["title"], d["error_signature"], d["summary"], " ".join(d["tags"]))) for d in incidents]
    rows = await model.embed(texts)
    assert rows is not None
    shards: dict[str, dict[str, Any]] = {}
    for slot, (doc, row) in enumerate(zip(incidents, rows, strict=True)):
        sid = shard_id(model.model_id, slot)
        shard = shards.setdefault(
            sid, {"id": sid, "type": "vectors", "workspace_id": workspace, "model": model.model_id, "vectors": {}}
        )
        shard["vectors"][doc["id"]] = encode(row)
    return list(shards.values())


async def _run(settings: Settings) -> list[dict[str, Any]]:
    deps = build_deps(settings)
    model = LocalEmbedder()
    try:
        started = time.perf_counter()
        await model.embed(["warm up"])
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        for query, _ in QUERIES:
            await model.embed([query])
        embed_ms = (time.perf_counter() - started) / len(QUERIES) * 1000
        who = Principal(workspace_id=f"bench-sem-{uuid.uuid4().hex[:6]}", user_id="bench", source="dev")
        docs = _documents(who.workspace_id, SIZE, random.Random(SIZE))
        incidents = [d for d in docs if d["type"] == "incident"]
        store = MemoryStore(deps.cosmos)
        await _seed(store, docs + await _vector_docs(model, who.workspace_id, incidents))
        lexical = MemoryService(store, deps.clock)
        hybrid = MemoryService(store, deps.clock, [model])
        for query, _ in QUERIES[:10]:  # warm-up, the shards' cache included
            await lexical.ranked_solutions(who, RankedSolutionsRequest(query_text=query, env=ENV))
            await hybrid.ranked_solutions(who, RankedSolutionsRequest(query_text=query, env=ENV))
        timed: dict[str, list[float]] = {"lexical": [], "hybrid": []}
        for i in range(CALLS):
            query = QUERIES[i % len(QUERIES)][0]
            for name, service in (("lexical", lexical), ("hybrid", hybrid)):
                started = time.perf_counter()
                await service.ranked_solutions(who, RankedSolutionsRequest(query_text=query, env=ENV))
                timed[name].append(time.perf_counter() - started)
    finally:
        await deps.aclose()
    p95 = {k: _percentile(v, 0.95) * 1000 for k, v in timed.items()}
    p50 = {k: statistics.median(v) * 1000 for k, v in timed.items()}
    ratio = p95["hybrid"] / p95["lexical"]
    return [
        {
            "name": "memory_semantic_p95_with_model_vs_without",
            "ratio": round(ratio, 3),
            "budget": BUDGET,
            "ok": ratio <= BUDGET,
            "incidents": SIZE,
            "p50_ms_lexical": round(p50["lexical"], 2),
            "p50_ms_hybrid": round(p50["hybrid"], 2),
            "p95_ms_lexical": round(p95["lexical"], 2),
            "p95_ms_hybrid": round(p95["hybrid"], 2),
            "model_load_s": round(load_s, 3),
            "query_embed_ms": round(embed_ms, 3),
        }
    ]


def run(settings: Settings) -> list[dict[str, Any]]:
    return asyncio.run(_run(settings))
