"""Debug-memory documents in the `memory` container, one partition per workspace.

Documents (`type`):
- `incident` (id `inc_<hex>`): title, summary, error signature, tags, and its solutions embedded as
  `solutions.<solution id>` with per-bucket evidence `buckets.<bucket> = {w, f, t}` (worked, failed,
  last worked at). Embedding keeps ranked_solutions to point reads; counters change only by server-side
  `incr`, and a bucket is added by an etag-checked replace, so concurrent outcomes never lose a count.
- `outcome` (`out_<hex>`): append-only evidence, written before the counters move.
- `lookup` (`lkp_<hex>`): what ranked_solutions recommended, so outcomes can say whether it was followed.
- `term` (`term:<token>`): postings for lexical search, {incident id: [weighted tf, length]}; a token in
  more than DF_CAP incidents is marked saturated and its postings dropped (it no longer discriminates).
- `guard` (`sig:<hash>`, `tsig:<hash>`): the duplicate guard on normalised signature / title+summary,
  claimed with `create` so two concurrent add_incident calls cannot both win.
- `meta` (`meta`): incident count and total indexed length for BM25.
Reads of ranked_solutions are point reads only: none of them scans the workspace.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from shared.core.errors import Conflict, NotFound
from shared.memory.search import DF_CAP
from shared.storage.containers import ContainerSpec
from shared.storage.cosmos import CosmosContainer, CosmosDatabase

MEMORY_CONTAINER = ContainerSpec(
    "memory",
    "/workspace_id",
    "Debug memory: incidents, solutions, outcomes (append-only) and lookups, discriminated by `type`.",
    # Free text is never filtered on; leaving it out of the index saves RU on every write.
    excluded_paths=("/steps/*", "/notes/?", "/summary/?"),
)

Doc = dict[str, Any]
_MAX_ETAG_RETRIES = 50


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def solution_id_for(incident_id: str, steps_digest: str) -> str:
    # The incident is part of the id, so record_outcome finds a solution with one point read.
    return f"sol_{incident_id.removeprefix('inc_')}_{steps_digest[:12]}"


def incident_of(solution_id: str) -> str | None:
    parts = solution_id.split("_")
    if len(parts) != 3 or parts[0] != "sol" or not parts[1]:
        return None
    return f"inc_{parts[1]}"


def _key(value: str) -> str:
    """A map key usable in a patch path (JSON pointer escaping)."""
    return value.replace("~", "~0").replace("/", "~1")


class MemoryStore:
    def __init__(self, cosmos: CosmosDatabase) -> None:
        self._cosmos = cosmos

    async def container(self) -> CosmosContainer:
        return await self._cosmos.container(MEMORY_CONTAINER.name)

    # ---- reads ---------------------------------------------------------------------------------

    async def read(self, workspace: str, doc_id: str) -> Doc | None:
        return await (await self.container()).read(doc_id, workspace)

    async def read_typed(self, workspace: str, doc_id: str | None, doc_type: str) -> Doc | None:
        """The document if it exists and is of `doc_type` (ids of other kinds answer None, as unknown ones do)."""
        if not doc_id:
            return None
        doc = await self.read(workspace, doc_id)
        return doc if doc and doc.get("type") == doc_type else None

    async def incidents(self, workspace: str, ids: list[str]) -> list[Doc]:
        found = await asyncio.gather(*(self.read(workspace, i) for i in ids))
        return [d for d in found if d and d.get("type") == "incident"]

    async def postings(self, workspace: str, tokens: list[str]) -> dict[str, dict[str, list[float]]]:
        docs = await asyncio.gather(*(self.read(workspace, f"term:{t}") for t in tokens))
        return {t: d["postings"] for t, d in zip(tokens, docs, strict=True) if d and not d.get("saturated")}

    async def meta(self, workspace: str) -> tuple[int, float]:
        doc = await self.read(workspace, "meta")
        return (doc.get("incident_count", 0), doc.get("total_length", 0.0)) if doc else (0, 0.0)

    async def guards(self, workspace: str, guard_ids: list[str]) -> dict[str, str]:
        docs = await asyncio.gather(*(self.read(workspace, g) for g in guard_ids))
        return {g: d["incident_id"] for g, d in zip(guard_ids, docs, strict=True) if d}

    async def list_incidents(
        self, workspace: str, tag: str | None, limit: int, continuation: str | None
    ) -> tuple[list[Doc], str | None]:
        where, params = "c.type = 'incident'", {}
        if tag:
            where += " AND ARRAY_CONTAINS(c.tags, @tag)"
            params["@tag"] = tag.lower()
        return await (await self.container()).query(
            workspace, where, params, order_by="c.created_at DESC", max_items=limit, continuation=continuation
        )

    # ---- writes --------------------------------------------------------------------------------

    async def claim_guard(self, workspace: str, guard_id: str, incident_id: str) -> str | None:
        """Claim a duplicate guard; returns the incident that already holds it, if any."""
        container = await self.container()
        try:
            await container.create(
                {"id": guard_id, "type": "guard", "workspace_id": workspace, "incident_id": incident_id}
            )
            return None
        except Conflict:
            holder = await container.read(guard_id, workspace)
            owner = holder.get("incident_id") if holder else None
            if owner and await container.read(owner, workspace) is None:
                # A guard left behind by an add_incident that died before creating its incident: take it over.
                await container.upsert(
                    {"id": guard_id, "type": "guard", "workspace_id": workspace, "incident_id": incident_id}
                )
                return None
            return owner

    async def release_guard(self, workspace: str, guard_id: str) -> None:
        await (await self.container()).delete(guard_id, workspace)

    async def create(self, doc: Doc) -> Doc:
        return await (await self.container()).create(doc)

    async def add_solution(self, workspace: str, incident_id: str, solution_id: str, entry: Doc, bucket: str) -> bool:
        """Add a solution (or only its bucket when the steps exist already); True if the solution is new."""
        container = await self.container()
        for _ in range(_MAX_ETAG_RETRIES):
            doc = await container.get(incident_id, workspace, what="incident")
            solutions = doc.setdefault("solutions", {})
            created = solution_id not in solutions
            if created:
                solutions[solution_id] = entry
            buckets = solutions[solution_id].setdefault("buckets", {})
            if not created and bucket in buckets:
                return False
            buckets.setdefault(bucket, {"w": 0, "f": 0, "t": None})
            try:
                await container.replace(doc, etag=doc["_etag"])
                return created
            except Conflict:
                await asyncio.sleep(0.005 * secrets.randbelow(10))
        raise Conflict("the incident is too busy to add a solution; retry", details={"incident_id": incident_id})

    async def count_outcome(
        self, workspace: str, incident: Doc, solution_id: str, bucket: str, worked: bool, at: str
    ) -> None:
        """Move the (solution, bucket) counters by one, atomically on the server."""
        buckets = incident.get("solutions", {}).get(solution_id, {}).get("buckets", {})
        if bucket not in buckets:
            await self.add_solution(workspace, incident["id"], solution_id, {}, bucket)
        path = f"/solutions/{_key(solution_id)}/buckets/{_key(bucket)}"
        operations = [{"op": "incr", "path": f"{path}/{'w' if worked else 'f'}", "value": 1}]
        if worked:
            operations.append({"op": "set", "path": f"{path}/t", "value": at})
        await (await self.container()).patch(incident["id"], workspace, operations)

    async def index(self, workspace: str, incident_id: str, terms: dict[str, float], length: float) -> int:
        """Add the incident to each term's postings and to the workspace totals; its slot (0, 1, 2, ... in the
        order incidents were indexed), which decides the vector shard it goes to."""
        _, count = await asyncio.gather(
            asyncio.gather(*(self._post(workspace, token, incident_id, tf, length) for token, tf in terms.items())),
            self._bump_meta(workspace, length),
        )
        return count - 1

    # ---- vectors ------------------------------------------------------------------------------------------

    async def add_vector(self, workspace: str, shard_id: str, model_id: str, incident_id: str, vector: str) -> None:
        """Put one incident's encoded vector in its shard document (created by the first incident of the shard)."""
        container = await self.container()
        op = [{"op": "add", "path": f"/vectors/{_key(incident_id)}", "value": vector}]
        try:
            await container.patch(shard_id, workspace, op)
        except NotFound:
            try:
                await container.create(
                    {
                        "id": shard_id,
                        "type": "vectors",
                        "workspace_id": workspace,
                        "model": model_id,
                        "vectors": {incident_id: vector},
                    }
                )
            except Conflict:
                await container.patch(shard_id, workspace, op)

    async def vector_shards(self, workspace: str, shard_ids: list[str]) -> list[dict[str, str] | None]:
        """Each shard's incident -> encoded vector (None for a shard nobody has written)."""
        docs = await asyncio.gather(*(self.read(workspace, s) for s in shard_ids))
        return [d.get("vectors", {}) if d else None for d in docs]

    async def _post(self, workspace: str, token: str, incident_id: str, tf: float, length: float) -> None:
        container = await self.container()
        doc_id = f"term:{token}"
        key = _key(incident_id)
        ops: list[dict[str, Any]] = [
            {"op": "add", "path": f"/postings/{key}", "value": [tf, length]},
            {"op": "incr", "path": "/df", "value": 1},
        ]
        try:
            doc = await container.patch(doc_id, workspace, ops)
        except NotFound:
            try:
                await container.create(
                    {
                        "id": doc_id,
                        "type": "term",
                        "workspace_id": workspace,
                        "token": token,
                        "df": 1,
                        "saturated": False,
                        "postings": {incident_id: [tf, length]},
                    }
                )
                return
            except Conflict:
                doc = await container.patch(doc_id, workspace, ops)
        if doc.get("saturated"):
            await container.patch(doc_id, workspace, [{"op": "remove", "path": f"/postings/{key}"}])
        elif doc.get("df", 0) > DF_CAP:
            await container.patch(
                doc_id,
                workspace,
                [{"op": "set", "path": "/saturated", "value": True}, {"op": "set", "path": "/postings", "value": {}}],
            )

    async def _bump_meta(self, workspace: str, length: float) -> int:
        """Count one more indexed incident; the count after it (atomic on the server, so each caller's is its own)."""
        container = await self.container()
        ops = [
            {"op": "incr", "path": "/incident_count", "value": 1},
            {"op": "incr", "path": "/total_length", "value": length},
        ]
        try:
            return int((await container.patch("meta", workspace, ops))["incident_count"])
        except NotFound:
            try:
                await container.create(
                    {
                        "id": "meta",
                        "type": "meta",
                        "workspace_id": workspace,
                        "incident_count": 1,
                        "total_length": length,
                    }
                )
                return 1
            except Conflict:
                return int((await container.patch("meta", workspace, ops))["incident_count"])
