"""The debug-memory workflow: rank known fixes for an environment, learn from every outcome."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from shared.core.errors import NotFound, ValidationFailed
from shared.core.redaction import redact_text
from shared.identity.models import Principal
from shared.memory import next_actions as na
from shared.memory import vectors
from shared.memory.embeddings import Embedder, encode
from shared.memory.env_bucket import canonical_bucket, is_bucket, normalize_bucket
from shared.memory.models import (
    AddIncidentRequest,
    AddIncidentResult,
    AddSolutionRequest,
    AddSolutionResult,
    BucketStats,
    IncidentDetail,
    IncidentMatch,
    IncidentSummary,
    ListIncidentsRequest,
    ListIncidentsResult,
    RankedSolution,
    RankedSolutionsRequest,
    RankedSolutionsResult,
    RecordOutcomeRequest,
    RecordOutcomeResult,
    SolutionDetail,
    SolutionStats,
)
from shared.memory.ranking import BucketEvidence, gate, score_solution
from shared.memory.ranking import relevance as relevance_of
from shared.memory.retrieval import SemanticScores, fuse
from shared.memory.search import CONCEPT_PREFIX, Match, bm25, incident_terms, query_terms
from shared.memory.store import MemoryStore, incident_of, new_id, solution_id_for
from shared.memory.text import STOPWORDS, digest, normalize_signature, steps_hash
from shared.memory.vectors import VectorCache

CANDIDATE_INCIDENTS = 10
MAX_SIGNATURE_LINES = 5


def bucket_for(env: dict[str, Any], explicit: str | None) -> str:
    if explicit:
        bucket = normalize_bucket(explicit)
        if not is_bucket(bucket):
            raise ValidationFailed.on_field(
                "env_bucket",
                "not a bucket",
                "env_bucket must look like os|language|framework|runtime|cloud, e.g. linux|py3|django4|k8s1|aws",
            )
        return bucket
    return canonical_bucket(env)


def _evidence(solution: dict[str, Any]) -> list[BucketEvidence]:
    return [BucketEvidence(b, v.get("w", 0), v.get("f", 0), v.get("t")) for b, v in solution.get("buckets", {}).items()]


def _stats(incident_id: str, solution_id: str, solution: dict[str, Any]) -> SolutionStats:
    evidence = _evidence(solution)
    confirmations = [e.last_worked_at for e in evidence if e.last_worked_at]
    return SolutionStats(
        solution_id=solution_id,
        incident_id=incident_id,
        worked_count=sum(e.worked for e in evidence),
        failed_count=sum(e.failed for e in evidence),
        last_confirmed_at=max(confirmations) if confirmations else None,
        buckets=[
            BucketStats(
                env_bucket=e.bucket, worked_count=e.worked, failed_count=e.failed, last_confirmed_at=e.last_worked_at
            )
            for e in sorted(evidence, key=lambda e: e.bucket)
        ],
    )


def _signature_guards(text: str) -> list[str]:
    """Guard ids of the query's whole text and of each of its first lines (a pasted log or stack trace)."""
    candidates = [text, *[line for line in text.splitlines() if line.strip()][:MAX_SIGNATURE_LINES]]
    seen: dict[str, None] = {}
    for candidate in candidates:
        norm = normalize_signature(candidate)
        if len(norm) >= 8:
            seen.setdefault(f"sig:{digest(norm)}", None)
    return list(seen)


def _why(match: Match | None) -> str:
    """Why an incident matched, in words: the words it shares, the concepts (`c_oom` is the vocabulary's
    out-of-memory concept: exit 137, OOMKilled, SIGKILL, ...), or its meaning alone."""
    if match is None or not match.matched_terms:
        return "close in meaning (no shared words)"
    words = [t for t in match.matched_terms if not t.startswith(CONCEPT_PREFIX)]
    concepts = [
        t.removeprefix(CONCEPT_PREFIX).replace("_", " ") for t in match.matched_terms if t.startswith(CONCEPT_PREFIX)
    ]
    parts = ([f"shares {', '.join(words[:8])}"] if words else []) + (
        [f"same concepts: {', '.join(concepts[:6])}"] if concepts else []
    )
    return "; ".join(parts)


def _title_guard(title: str, summary: str) -> str:
    # Case, punctuation and word order do not make a new incident; numbers do (502 is not 504), so
    # this uses plain words rather than the search tokens, which drop numbers.
    words = {w for w in re.findall(r"[a-z0-9]+", f"{title} {summary}".lower()) if w not in STOPWORDS}
    return f"tsig:{digest(' '.join(sorted(words)))}"


class MemoryService:
    def __init__(
        self,
        store: MemoryStore,
        clock: Callable[[], datetime],
        embedders: Sequence[Embedder] = (),
        vector_cache: VectorCache | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.embedders = list(embedders)
        self.vector_cache = vector_cache if vector_cache is not None else VectorCache()

    def _now(self) -> str:
        return self.clock().isoformat()

    # ---- ranked_solutions -------------------------------------------------------------------

    async def _search(self, ws: str, text: str, *, signatures: bool) -> tuple[list[Match], set[str]]:
        """Matches for `text`, best first: BM25 fused with meaning (retrieval.fuse) when a model is available;
        and (with `signatures`) the incidents whose error signature it is exactly."""
        guards = _signature_guards(text) if signatures else []
        postings, (count, total_length), exact, query_vectors = await asyncio.gather(
            self.store.postings(ws, query_terms(text)),
            self.store.meta(ws),
            self.store.guards(ws, guards),
            asyncio.gather(*(m.embed([text]) for m in self.embedders)),
        )
        lexical = bm25(postings, count, total_length / count if count else 1.0)
        semantic = await self._semantic(ws, count, query_vectors)
        by_id = {m.incident_id: m for m in lexical}
        fused = fuse({m.incident_id: m.score for m in lexical}, semantic)
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        matches = [Match(i, score, by_id[i].matched_terms if i in by_id else ()) for i, score in ranked]
        return matches, set(exact.values())

    async def _semantic(self, ws: str, count: int, query_vectors: list[Any]) -> list[SemanticScores]:
        """Each available model's scores for the query (models that did not answer are left out)."""
        answered = [(m, q) for m, q in zip(self.embedders, query_vectors, strict=True) if q is not None]
        shards = await asyncio.gather(
            *(vectors.load(self.store, self.vector_cache, ws, m.model_id, count) for m, _ in answered)
        )
        return [
            SemanticScores.of(shard.ids, shard.matrix, q[0], m.min_similarity)
            for (m, q), shard in zip(answered, shards, strict=True)
        ]

    async def _store_vectors(self, ws: str, incident_id: str, slot: int, text: str) -> None:
        """The incident's vector from each model that answers (one that does not leaves it to the words)."""
        answers = await asyncio.gather(*(m.embed([text]) for m in self.embedders))
        await asyncio.gather(
            *(
                self.store.add_vector(ws, vectors.shard_id(m.model_id, slot), m.model_id, incident_id, encode(v[0]))
                for m, v in zip(self.embedders, answers, strict=True)
                if v is not None
            )
        )

    @staticmethod
    def _require_lookup(lookup_id: str | None, lookup: dict[str, Any] | None) -> None:
        """A lookup_id that does not resolve in this workspace is NOT_FOUND, checked before anything is written."""
        if lookup_id and lookup is None:
            raise NotFound(
                f"lookup {lookup_id!r} not found",
                details={"lookup_id": lookup_id},
                recovery_suggestions=["Pass the lookup_id from your ranked_solutions call, or leave it out."],
            )

    async def ranked_solutions(self, who: Principal, req: RankedSolutionsRequest) -> RankedSolutionsResult:
        ws = who.workspace_id
        bucket = canonical_bucket(req.env)
        matches, exact_ids = await self._search(ws, req.query_text, signatures=True)
        ordered = list(dict.fromkeys(sorted(exact_ids) + [m.incident_id for m in matches]))[:CANDIDATE_INCIDENTS]
        docs = {d["id"]: d for d in await self.store.incidents(ws, ordered)}
        by_id = {m.incident_id: m for m in matches}
        relevance = relevance_of({i: by_id[i].score if i in by_id else 0.0 for i in ordered if i in docs}, exact_ids)

        incidents = [
            IncidentMatch(
                incident_id=i,
                title=docs[i]["title"],
                relevance_score=relevance[i],
                exact_signature_match=i in exact_ids,
                matched_terms=list(by_id[i].matched_terms) if i in by_id else [],
                why="exact error-signature match" if i in exact_ids else _why(by_id.get(i)),
                solution_count=len(docs[i].get("solutions", {})),
            )
            for i in ordered
            if i in docs
        ]
        now = self.clock()
        ranked: list[RankedSolution] = []
        for incident_id in gate(relevance, exact_ids):
            for solution_id, solution in docs[incident_id].get("solutions", {}).items():
                s = score_solution(
                    _evidence(solution),
                    bucket,
                    now,
                    incident_relevance=relevance[incident_id],
                    exact_signature_match=incident_id in exact_ids,
                )
                ranked.append(
                    RankedSolution(
                        solution_id=solution_id,
                        incident_id=incident_id,
                        steps=solution.get("steps", []),
                        **s.model_dump(),
                    )
                )
        ranked.sort(key=lambda r: (-r.final_solution_score, -relevance[r.incident_id], r.solution_id))
        ranked = ranked[: req.limit]

        lookup_id = new_id("lkp")
        recommended = ranked[0] if ranked else None
        await self.store.create(
            {
                "id": lookup_id,
                "type": "lookup",
                "workspace_id": ws,
                "user_id": who.user_id,
                "created_at": self._now(),
                "query_text": redact_text(req.query_text[:2000]),
                "env_bucket": bucket,
                "incident_ids": [m.incident_id for m in incidents],
                "ranked_solution_ids": [r.solution_id for r in ranked],
                "recommended_solution_id": recommended.solution_id if recommended else None,
            }
        )
        if not incidents:
            action = na.no_match(lookup_id)
        elif not ranked:
            action = na.no_solutions(incidents[0].incident_id, lookup_id)
        else:
            action = na.try_solution(ranked[0].solution_id, lookup_id, proven=ranked[0].proven)
        return RankedSolutionsResult(
            lookup_id=lookup_id,
            env_bucket=bucket,
            incidents=incidents,
            ranked_solutions=ranked,
            recommended_solution=recommended,
            next_action=action,
        )

    # ---- record_outcome ---------------------------------------------------------------------

    async def _append_outcome(
        self,
        who: Principal,
        incident_id: str,
        solution_id: str,
        bucket: str,
        req: RecordOutcomeRequest | AddIncidentRequest,
        now: str,
        *,
        was_recommended: bool | None,
    ) -> str:
        """Write one outcome document (append-only evidence, before any counter moves); its id."""
        outcome_id = new_id("out")
        await self.store.create(
            {
                "id": outcome_id,
                "type": "outcome",
                "workspace_id": who.workspace_id,
                "user_id": who.user_id,
                "created_at": now,
                "incident_id": incident_id,
                "solution_id": solution_id,
                "worked": req.worked,
                "env_bucket": bucket,
                "env": req.env,
                "notes": redact_text(req.notes) if req.notes else req.notes,
                "lookup_id": req.lookup_id,
                "was_recommended": was_recommended,
            }
        )
        return outcome_id

    async def record_outcome(self, who: Principal, req: RecordOutcomeRequest) -> RecordOutcomeResult:
        ws = who.workspace_id
        bucket = bucket_for(req.env, req.env_bucket)
        incident_id = incident_of(req.solution_id)
        incident, lookup = await asyncio.gather(
            self.store.read_typed(ws, incident_id, "incident"), self.store.read_typed(ws, req.lookup_id, "lookup")
        )
        if incident_id is None or not incident or req.solution_id not in incident.get("solutions", {}):
            raise NotFound(
                f"solution {req.solution_id!r} not found",
                details={"solution_id": req.solution_id},
                recovery_suggestions=["Use a solution_id returned by ranked_solutions, add_solution or add_incident."],
            )
        self._require_lookup(req.lookup_id, lookup)
        now = self._now()
        was_recommended = (lookup.get("recommended_solution_id") == req.solution_id) if lookup else None
        outcome_id = await self._append_outcome(
            who, incident_id, req.solution_id, bucket, req, now, was_recommended=was_recommended
        )
        await self.store.count_outcome(ws, incident, req.solution_id, bucket, req.worked, now)
        fresh = await self.store.read(ws, incident_id) or incident
        stats = _stats(incident_id, req.solution_id, fresh["solutions"][req.solution_id])
        action = na.done(incident_id) if req.worked else na.debug_further(incident_id, req.lookup_id)
        return RecordOutcomeResult(
            ok=True,
            outcome_id=outcome_id,
            solution_id=req.solution_id,
            env_bucket=bucket,
            was_recommended=was_recommended,
            stats=stats,
            next_action=action,
        )

    # ---- add_solution -----------------------------------------------------------------------

    async def add_solution(self, who: Principal, req: AddSolutionRequest) -> AddSolutionResult:
        ws = who.workspace_id
        bucket = bucket_for(req.env, req.env_bucket)
        incident, lookup = await asyncio.gather(
            self.store.read_typed(ws, req.incident_id, "incident"), self.store.read_typed(ws, req.lookup_id, "lookup")
        )
        if not incident:
            raise NotFound(
                f"incident {req.incident_id!r} not found",
                details={"incident_id": req.incident_id},
                recovery_suggestions=["Use an incident_id from ranked_solutions or list_incidents."],
            )
        self._require_lookup(req.lookup_id, lookup)
        solution_id = solution_id_for(req.incident_id, steps_hash(req.steps))
        entry: dict[str, Any] = {
            "steps": req.steps,
            "steps_hash": steps_hash(req.steps),
            "created_at": self._now(),
            "created_by": who.user_id,
            "created_bucket": bucket,
            "lookup_id": req.lookup_id,
            "buckets": {},
        }
        created = await self.store.add_solution(ws, req.incident_id, solution_id, entry, bucket)
        return AddSolutionResult(
            solution_id=solution_id,
            incident_id=req.incident_id,
            env_bucket=bucket,
            created=created,
            next_action=na.record_new(solution_id, req.lookup_id),
        )

    # ---- add_incident -----------------------------------------------------------------------

    async def add_incident(self, who: Principal, req: AddIncidentRequest) -> AddIncidentResult:
        ws = who.workspace_id
        bucket = bucket_for(req.env, req.env_bucket)
        if req.lookup_id:
            self._require_lookup(req.lookup_id, await self.store.read_typed(ws, req.lookup_id, "lookup"))
        signature_norm = normalize_signature(req.error_signature or "")
        guards = ([f"sig:{digest(signature_norm)}"] if len(signature_norm) >= 8 else []) + [
            _title_guard(req.title, req.summary or "")
        ]
        existing = await self.store.guards(ws, guards)
        for existing_owner in existing.values():
            if await self.store.read(ws, existing_owner):
                return self._duplicate(existing_owner, bucket, req.lookup_id)

        incident_id = new_id("inc")
        claimed: list[str] = []
        for guard in guards:
            owner = await self.store.claim_guard(ws, guard, incident_id)
            if owner:  # lost a race to a concurrent add_incident of the same incident
                for g in claimed:
                    await self.store.release_guard(ws, g)
                return self._duplicate(owner, bucket, req.lookup_id)
            claimed.append(guard)

        now = self._now()
        digest_ = steps_hash(req.steps)
        solution_id = solution_id_for(incident_id, digest_)
        counts = {"w": 1, "f": 0, "t": now} if req.worked else {"w": 0, "f": 1, "t": None}
        await self.store.create(
            {
                "id": incident_id,
                "type": "incident",
                "workspace_id": ws,
                "created_at": now,
                "created_by": who.user_id,
                "title": req.title,
                "summary": req.summary or "",
                "error_signature": req.error_signature or "",
                "signature_norm": signature_norm,
                "tags": req.tags,
                "lookup_id": req.lookup_id,
                "solutions": {
                    solution_id: {
                        "steps": req.steps,
                        "steps_hash": digest_,
                        "created_at": now,
                        "created_by": who.user_id,
                        "created_bucket": bucket,
                        "buckets": {bucket: counts},
                    }
                },
            }
        )
        outcome_id = await self._append_outcome(who, incident_id, solution_id, bucket, req, now, was_recommended=None)
        terms, length = incident_terms(req.title, req.summary or "", req.error_signature or "", req.tags)
        slot = await self.store.index(ws, incident_id, terms, length)
        if self.embedders:
            text = ". ".join(x for x in (req.title, req.error_signature, req.summary, " ".join(req.tags)) if x)
            await self._store_vectors(ws, incident_id, slot, text)
        action = na.done(incident_id) if req.worked else na.debug_further(incident_id, req.lookup_id)
        return AddIncidentResult(
            incident_id=incident_id,
            solution_id=solution_id,
            outcome_id=outcome_id,
            env_bucket=bucket,
            created=True,
            next_action=action,
        )

    @staticmethod
    def _duplicate(incident_id: str, bucket: str, lookup_id: str | None) -> AddIncidentResult:
        return AddIncidentResult(
            incident_id=incident_id,
            solution_id=None,
            outcome_id=None,
            env_bucket=bucket,
            created=False,
            next_action=na.use_add_solution(incident_id, lookup_id),
        )

    # ---- reading the memory -----------------------------------------------------------------

    async def get_incident(self, who: Principal, incident_id: str) -> IncidentDetail:
        doc = await self.store.read_typed(who.workspace_id, incident_id, "incident")
        if not doc:
            raise NotFound(f"incident {incident_id!r} not found", details={"incident_id": incident_id})
        solutions = [
            SolutionDetail(
                solution_id=sid,
                steps=s.get("steps", []),
                created_at=s.get("created_at", ""),
                stats=_stats(incident_id, sid, s),
            )
            for sid, s in sorted(doc.get("solutions", {}).items(), key=lambda kv: kv[1].get("created_at", ""))
        ]
        return IncidentDetail(
            incident_id=incident_id,
            title=doc["title"],
            summary=doc.get("summary", ""),
            error_signature=doc.get("error_signature", ""),
            tags=doc.get("tags", []),
            created_at=doc["created_at"],
            solutions=solutions,
            next_action=na.review(incident_id, bool(solutions)),
        )

    async def list_incidents(self, who: Principal, req: ListIncidentsRequest) -> ListIncidentsResult:
        ws = who.workspace_id
        if req.search:
            matches = (await self._search(ws, req.search, signatures=False))[0][: req.limit]
            docs = {d["id"]: d for d in await self.store.incidents(ws, [m.incident_id for m in matches])}
            top = matches[0].score if matches else 1.0
            found: list[tuple[dict[str, Any], float | None]] = [
                (docs[m.incident_id], round(m.score / top, 4)) for m in matches if m.incident_id in docs
            ]
            if req.tag:
                found = [(d, r) for d, r in found if req.tag.lower() in d.get("tags", [])]
            continuation = None
        else:
            page, continuation = await self.store.list_incidents(ws, req.tag, req.limit, req.continuation)
            found = [(d, None) for d in page]  # listed, not searched: no relevance
        summaries = [
            IncidentSummary(
                incident_id=d["id"],
                title=d["title"],
                tags=d.get("tags", []),
                created_at=d["created_at"],
                solution_count=len(d.get("solutions", {})),
                relevance_score=r,
            )
            for d, r in found
        ]
        action = (
            na.review(summaries[0].incident_id, summaries[0].solution_count > 0) if summaries else na.nothing_listed()
        )
        return ListIncidentsResult(incidents=summaries, continuation=continuation, next_action=action)
