"""ranked_solutions latency at 1k and 10k incidents (3 solutions and 10 outcomes each), and Cosmos round
trips per ranked_solutions and per record_outcome.

The workspaces are seeded with the documents the service itself writes (incident documents with
embedded solution evidence, append-only outcomes, term postings built by the same indexing functions,
saturation included, and the meta totals), written in bulk because 10k add_incident calls would take
the benchmark's whole budget. The queries are the retrieval corpus's 60 queries.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.app.wiring import build_deps
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.memory.models import RankedSolutionsRequest, RecordOutcomeRequest
from shared.memory.search import DF_CAP, incident_terms
from shared.memory.service import MemoryService
from shared.memory.store import MemoryStore, solution_id_for
from shared.memory.text import steps_hash
from tests.fixtures.memory.corpus import INCIDENTS, QUERIES

SIZES = (1_000, 10_000)
CALLS = 120
BUDGET = 2.0
BUCKETS = [
    "linux|py3|django4|k8s1|aws",
    "linux|node20|express4|k8s1|gcp",
    "macos|py3|any|docker|any",
    "linux|java17|spring3|bare|onprem",
]
SERVICES = [
    "payments",
    "checkout",
    "search",
    "billing",
    "auth",
    "catalog",
    "inventory",
    "shipping",
    "reports",
    "gateway",
    "notifications",
    "ledger",
]
ENV = {"os": "Ubuntu 22.04", "language": "python 3.11", "framework": "django 4.2", "runtime": "EKS 1.29"}


def _documents(workspace: str, size: int, rng: random.Random) -> list[dict[str, Any]]:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    docs: list[dict[str, Any]] = []
    postings: dict[str, dict[str, list[float]]] = defaultdict(dict)
    df: dict[str, int] = defaultdict(int)
    total_length = 0.0
    for n in range(size):
        _, title, signature, summary, tags = INCIDENTS[n % len(INCIDENTS)]
        service = rng.choice(SERVICES)
        title = f"{title} ({service} #{n})"
        incident_id = f"inc_{uuid.uuid4().hex[:16]}"
        solutions = {}
        for s in range(3):
            steps = [f"step {s} for {service} {n}", f"verify {rng.choice(SERVICES)}"]
            sid = solution_id_for(incident_id, steps_hash(steps))
            buckets: dict[str, dict[str, Any]] = {}
            for _ in range(10 if s == 0 else 0):  # the 10 outcomes go to the first solution
                b = buckets.setdefault(rng.choice(BUCKETS), {"w": 0, "f": 0, "t": None})
                worked = rng.random() < 0.7
                b["w" if worked else "f"] += 1
                if worked:
                    b["t"] = (now - timedelta(days=rng.randint(0, 400))).isoformat()
                docs.append(
                    {
                        "id": f"out_{uuid.uuid4().hex[:16]}",
                        "type": "outcome",
                        "workspace_id": workspace,
                        "incident_id": incident_id,
                        "solution_id": sid,
                        "worked": worked,
                        "env_bucket": rng.choice(BUCKETS),
                        "created_at": now.isoformat(),
                    }
                )
            solutions[sid] = {
                "steps": steps,
                "steps_hash": steps_hash(steps),
                "created_at": now.isoformat(),
                "buckets": buckets or {rng.choice(BUCKETS): {"w": 0, "f": 0, "t": None}},
            }
        docs.append(
            {
                "id": incident_id,
                "type": "incident",
                "workspace_id": workspace,
                "created_at": now.isoformat(),
                "title": title,
                "summary": summary,
                "error_signature": signature,
                "tags": tags,
                "solutions": solutions,
            }
        )
        terms, length = incident_terms(title, summary, signature, tags)
        total_length += length
        for token, tf in terms.items():
            df[token] += 1
            if df[token] <= DF_CAP:
                postings[token][incident_id] = [tf, length]
    for token, count in df.items():
        saturated = count > DF_CAP
        docs.append(
            {
                "id": f"term:{token}",
                "type": "term",
                "workspace_id": workspace,
                "token": token,
                "df": count,
                "saturated": saturated,
                "postings": {} if saturated else postings[token],
            }
        )
    docs.append(
        {"id": "meta", "type": "meta", "workspace_id": workspace, "incident_count": size, "total_length": total_length}
    )
    return docs


async def _seed(store: MemoryStore, docs: list[dict[str, Any]]) -> None:
    container = await store.container()
    slots = asyncio.Semaphore(48)

    async def put(doc: dict[str, Any]) -> None:
        async with slots:
            await container.upsert(doc)

    await asyncio.gather(*(put(d) for d in docs))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _measure(service: MemoryService, who: Principal) -> dict[str, Any]:
    container = await service.store.container()
    for query, _ in QUERIES[:10]:  # warm-up
        await service.ranked_solutions(who, RankedSolutionsRequest(query_text=query, env=ENV))
    latencies, requests = [], []
    recommended = None
    for i in range(CALLS):
        query = QUERIES[i % len(QUERIES)][0]
        before = container.requests
        started = time.perf_counter()
        result = await service.ranked_solutions(who, RankedSolutionsRequest(query_text=query, env=ENV))
        latencies.append(time.perf_counter() - started)
        requests.append(container.requests - before)
        recommended = recommended or result.recommended_solution
    outcome_requests = []
    assert recommended is not None
    for i in range(20):
        before = container.requests
        await service.record_outcome(
            who, RecordOutcomeRequest(solution_id=recommended.solution_id, worked=i % 2 == 0, env=ENV)
        )
        outcome_requests.append(container.requests - before)
    return {
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p95_ms": round(_percentile(latencies, 0.95) * 1000, 2),
        "requests_ranked_max": max(requests),
        "requests_ranked_median": statistics.median(requests),
        "requests_record_outcome_max": max(outcome_requests),
    }


async def _run(settings: Settings) -> list[dict[str, Any]]:
    deps = build_deps(settings)
    service = MemoryService(MemoryStore(deps.cosmos), deps.clock)
    measured: dict[int, dict[str, Any]] = {}
    try:
        for size in SIZES:
            who = Principal(workspace_id=f"bench-{size}-{uuid.uuid4().hex[:6]}", user_id="bench", source="dev")
            docs = _documents(who.workspace_id, size, random.Random(size))
            started = time.perf_counter()
            await _seed(service.store, docs)
            measured[size] = {
                **await _measure(service, who),
                "documents": len(docs),
                "seed_s": round(time.perf_counter() - started, 1),
            }
    finally:
        await deps.aclose()
    small, large = measured[SIZES[0]], measured[SIZES[1]]
    ratio = large["p95_ms"] / small["p95_ms"]
    return [
        {
            "name": "memory_ranked_solutions_p95_10k_vs_1k",
            "ratio": round(ratio, 3),
            "budget": BUDGET,
            "ok": ratio <= BUDGET,
            **{f"{k}_1k": v for k, v in small.items()},
            **{f"{k}_10k": v for k, v in large.items()},
        },
    ]


def run(settings: Settings) -> list[dict[str, Any]]:
    return asyncio.run(_run(settings))
