"""Where incident vectors live and how a query reads them all with a few point reads.

An incident's vector goes to shard `vec:<model>:<slot // SHARD_SIZE>` of its workspace, `slot` being its
position in the order incidents were indexed (the workspace's counter). A query reads the shards up to the
workspace's incident count: ceil(count / 256) point reads of ~100 KB each for the bundled model. A shard
whose slots are all taken no longer changes once its writers are done, so this process keeps it, decoded,
for CLOSED_SHARD_TTL_SECONDS; only the open shard is read on every query.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from shared.memory.embeddings import decode, normalise
from shared.memory.store import MemoryStore

SHARD_SIZE = 256
CLOSED_SHARD_TTL_SECONDS = 600.0
MAX_CACHED_SHARDS = 2_000  # ~100 MB of float32 vectors at 256 dimensions, 256 per shard, at most


def shard_id(model_id: str, slot: int) -> str:
    return f"vec:{model_id}:{slot // SHARD_SIZE}"


@dataclass(frozen=True)
class Shard:
    ids: tuple[str, ...]
    matrix: np.ndarray  # one unit row per id

    @classmethod
    def of(cls, vectors: dict[str, str] | None) -> Shard:
        if not vectors:
            return cls((), np.zeros((0, 0), dtype=np.float32))
        ids = tuple(vectors)
        rows = [decode(vectors[i]) for i in ids]
        if len({len(r) for r in rows}) != 1:  # a model whose dimension changed: keep the majority's rows
            width = max({len(r) for r in rows}, key=[len(r) for r in rows].count)
            ids = tuple(i for i, r in zip(ids, rows, strict=True) if len(r) == width)
            rows = [r for r in rows if len(r) == width]
        return cls(ids, normalise(np.vstack(rows)))


@dataclass
class VectorCache:
    """Closed shards this process has read, per (workspace, shard id), with when they were read."""

    shards: dict[tuple[str, str], tuple[float, Shard]] = field(default_factory=dict)

    def get(self, key: tuple[str, str], now: float) -> Shard | None:
        hit = self.shards.get(key)
        return hit[1] if hit and now - hit[0] < CLOSED_SHARD_TTL_SECONDS else None

    def put(self, key: tuple[str, str], shard: Shard, now: float) -> None:
        if len(self.shards) >= MAX_CACHED_SHARDS:
            self.shards.pop(next(iter(self.shards)))
        self.shards[key] = (now, shard)


async def load(store: MemoryStore, cache: VectorCache, workspace: str, model_id: str, count: int) -> Shard:
    """Every vector of `model_id` in the workspace (incidents indexed before vectors existed have none)."""
    if count <= 0:
        return Shard.of(None)
    now = time.monotonic()
    last = (count - 1) // SHARD_SIZE
    wanted = [f"vec:{model_id}:{n}" for n in range(last + 1)]
    shards: dict[str, Shard] = {}
    missing = []
    for n, sid in enumerate(wanted):
        cached = cache.get((workspace, sid), now) if n < last else None
        if cached is not None:
            shards[sid] = cached
        else:
            missing.append(sid)
    for sid, vectors in zip(missing, await store.vector_shards(workspace, missing), strict=True):
        shards[sid] = Shard.of(vectors)
        if sid != wanted[-1]:
            cache.put((workspace, sid), shards[sid], now)
    parts = [shards[s] for s in wanted if shards[s].ids]
    if not parts:
        return Shard.of(None)
    width = parts[-1].matrix.shape[1]
    parts = [p for p in parts if p.matrix.shape[1] == width]
    return Shard(tuple(i for p in parts for i in p.ids), np.vstack([p.matrix for p in parts]))
