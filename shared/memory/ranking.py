"""How solutions are scored: environment match, reliability from evidence, recency of confirmation.

final_solution_score = 0.45 * env_match_score + 0.40 * reliability_score + 0.15 * recency_boost

- env_match_score: the best similarity (env_bucket.similarity) between the caller's bucket and any
  bucket the solution has evidence in (or was added for); that bucket is best_env_bucket_match.
- reliability_score: the posterior mean of a Beta(1, 1) prior updated with similarity-weighted
  outcomes: (w + 1) / (w + f + 2), where w and f sum worked and failed counts over the solution's
  buckets, each weighted by that bucket's similarity to the caller's. A 1/1 record scores 0.67, a
  45/50 record 0.88, an untried solution 0.5, a 0/3 record 0.2: evidence counts, luck does not.
- recency_boost: 0.5 ** (days since the last confirmation (a worked outcome) / 90); 0 if never confirmed.

Which solutions are candidates is decided by incident relevance, not by this score: see `gate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared.memory.env_bucket import similarity
from shared.memory.models import SolutionScore

W_ENV, W_RELIABILITY, W_RECENCY = 0.45, 0.40, 0.15
RECENCY_HALF_LIFE_DAYS = 90.0
PRIOR_WORKED, PRIOR_FAILED = 1.0, 1.0
RELEVANCE_GATE = 0.5  # solutions of incidents scoring below half the best incident's relevance are left out


@dataclass(frozen=True)
class BucketEvidence:
    bucket: str
    worked: int
    failed: int
    last_worked_at: str | None


def reliability(evidence: list[BucketEvidence], caller_bucket: str) -> float:
    worked = sum(similarity(caller_bucket, e.bucket) * e.worked for e in evidence)
    failed = sum(similarity(caller_bucket, e.bucket) * e.failed for e in evidence)
    return (worked + PRIOR_WORKED) / (worked + failed + PRIOR_WORKED + PRIOR_FAILED)


def recency(last_confirmed_at: str | None, now: datetime) -> float:
    if not last_confirmed_at:
        return 0.0
    age_days = max((now - datetime.fromisoformat(last_confirmed_at)).total_seconds() / 86400, 0.0)
    return float(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))  # float**float is Any in typeshed (it may be complex)


def score_solution(evidence: list[BucketEvidence], caller_bucket: str, now: datetime) -> SolutionScore:
    best_bucket, best_sim = caller_bucket, 0.0
    for e in evidence:
        sim = similarity(caller_bucket, e.bucket)
        if sim > best_sim or (sim == best_sim and e.worked > 0):
            best_bucket, best_sim = e.bucket, sim
    confirmations = [e.last_worked_at for e in evidence if e.last_worked_at]
    last = max(confirmations) if confirmations else None
    rel = reliability(evidence, caller_bucket)
    rec = recency(last, now)
    final = W_ENV * best_sim + W_RELIABILITY * rel + W_RECENCY * rec
    return SolutionScore(
        best_env_bucket_match=best_bucket,
        env_match_score=round(best_sim, 4),
        reliability_score=round(rel, 4),
        recency_boost=round(rec, 4),
        final_solution_score=round(final, 4),
        worked_count=sum(e.worked for e in evidence),
        failed_count=sum(e.failed for e in evidence),
        last_confirmed_at=last,
    )


def gate(relevance: dict[str, float], exact: set[str]) -> set[str]:
    """Incidents whose solutions are candidates: an exact signature match alone if there is one, else
    every incident within RELEVANCE_GATE of the best one."""
    if exact:
        return set(exact)
    if not relevance:
        return set()
    top = max(relevance.values())
    return {i for i, r in relevance.items() if r >= RELEVANCE_GATE * top}
