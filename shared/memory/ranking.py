"""How solutions are scored: how well their incident matches, environment match, reliability, recency.

final_solution_score = 0.30 * incident_relevance + 0.70 * fit_score
fit_score            = 0.45 * env_match_score + 0.40 * reliability_score + 0.15 * recency_boost

- incident_relevance: 1.0 for an exact error-signature match; any other incident at most 0.75 (its search
  score relative to the best non-exact one, times 0.75). An exact match is a strong signal, not a filter:
  the solutions of every relevant incident are ranked together, so a well-proven fix of a similar incident
  can beat an exact match's fix that keeps failing.
- env_match_score: the best similarity (env_bucket.similarity) between the caller's bucket and a bucket
  where the solution has at least one recorded outcome; that bucket is best_env_bucket_match. A bucket a
  solution was only registered for (add_solution, no outcome yet) is not evidence: a solution with no
  outcome anywhere is unproven, with env_match_score 0 and best_env_bucket_match null.
- reliability_score: the posterior mean of a Beta(1, 1) prior updated with similarity-weighted
  outcomes: (w + 1) / (w + f + 2), where w and f sum worked and failed counts over the solution's
  buckets, each weighted by that bucket's similarity to the caller's. A 1/1 record scores 0.67, a
  45/50 record 0.88, an untried solution 0.5, a 0/3 record 0.2: evidence counts, luck does not.
- recency_boost: 0.5 ** (days since the last confirmation (a worked outcome) / 90); 0 if never confirmed.

Which incidents' solutions are candidates is decided by relevance: see `gate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared.memory.env_bucket import similarity
from shared.memory.models import SolutionScore

W_ENV, W_RELIABILITY, W_RECENCY = 0.45, 0.40, 0.15
W_MATCH = 0.30  # the incident's relevance in final_solution_score; the rest is the solution's fit
NON_EXACT_CEILING = 0.75  # the relevance of the best incident that is not an exact signature match
RECENCY_HALF_LIFE_DAYS = 90.0
PRIOR_WORKED, PRIOR_FAILED = 1.0, 1.0
RELEVANCE_GATE = 0.5  # non-exact incidents below half the best non-exact incident's relevance are left out


@dataclass(frozen=True)
class BucketEvidence:
    bucket: str
    worked: int
    failed: int
    last_worked_at: str | None

    @property
    def outcomes(self) -> int:
        return self.worked + self.failed


def reliability(evidence: list[BucketEvidence], caller_bucket: str) -> float:
    worked = sum(similarity(caller_bucket, e.bucket) * e.worked for e in evidence)
    failed = sum(similarity(caller_bucket, e.bucket) * e.failed for e in evidence)
    return (worked + PRIOR_WORKED) / (worked + failed + PRIOR_WORKED + PRIOR_FAILED)


def recency(last_confirmed_at: str | None, now: datetime) -> float:
    if not last_confirmed_at:
        return 0.0
    age_days = max((now - datetime.fromisoformat(last_confirmed_at)).total_seconds() / 86400, 0.0)
    return float(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))  # float**float is Any in typeshed (it may be complex)


def _evidence_note(tried: list[BucketEvidence], untried: list[str], best: BucketEvidence | None, sim: float) -> str:
    """One sentence an agent can repeat: what was tried where, and what was never tried."""
    never = f"; 0 outcomes in {', '.join(untried)}" if untried else ""
    if best is None:
        where = f" (registered for {', '.join(untried)}, never tried there)" if untried else ""
        return f"unproven: 0 outcomes{where}"
    worked = sum(e.worked for e in tried)
    failed = sum(e.failed for e in tried)
    return (
        f"{worked} worked, {failed} failed; closest evidence {best.bucket} (env match {round(sim, 2)},"
        f" {best.worked} worked, {best.failed} failed there){never}"
    )


def score_solution(
    evidence: list[BucketEvidence],
    caller_bucket: str,
    now: datetime,
    *,
    incident_relevance: float = 1.0,
    exact_signature_match: bool = False,
) -> SolutionScore:
    tried = [e for e in evidence if e.outcomes > 0]
    untried = sorted(e.bucket for e in evidence if e.outcomes == 0)
    best: BucketEvidence | None = None
    best_sim = 0.0
    for e in tried:
        sim = similarity(caller_bucket, e.bucket)
        if best is None or sim > best_sim or (sim == best_sim and e.worked > best.worked):
            best, best_sim = e, sim
    confirmations = [e.last_worked_at for e in tried if e.last_worked_at]
    last = max(confirmations) if confirmations else None
    rel = reliability(tried, caller_bucket)
    rec = recency(last, now)
    fit = W_ENV * best_sim + W_RELIABILITY * rel + W_RECENCY * rec
    final = W_MATCH * incident_relevance + (1 - W_MATCH) * fit
    return SolutionScore(
        best_env_bucket_match=best.bucket if best else None,
        env_match_score=round(best_sim, 4),
        reliability_score=round(rel, 4),
        recency_boost=round(rec, 4),
        fit_score=round(fit, 4),
        incident_relevance=round(incident_relevance, 4),
        exact_signature_match=exact_signature_match,
        final_solution_score=round(final, 4),
        worked_count=sum(e.worked for e in tried),
        failed_count=sum(e.failed for e in tried),
        outcomes_in_best_bucket=best.outcomes if best else 0,
        proven=best is not None,
        untried_env_buckets=untried,
        evidence=_evidence_note(tried, untried, best, best_sim),
        last_confirmed_at=last,
    )


def relevance(scores: dict[str, float], exact: set[str]) -> dict[str, float]:
    """Each incident's relevance in 0..1: 1.0 for an exact signature match, else its search score relative to
    the best non-exact incident's, times NON_EXACT_CEILING (an exact match always outranks a paraphrase)."""
    top = max((s for i, s in scores.items() if i not in exact), default=0.0) or 1.0
    return {i: 1.0 if i in exact else round(NON_EXACT_CEILING * s / top, 4) for i, s in scores.items()}


def gate(relevances: dict[str, float], exact: set[str]) -> set[str]:
    """Incidents whose solutions are candidates: every exact signature match, and every other incident within
    RELEVANCE_GATE of the best other one (an exact match does not push the others out)."""
    others = {i: r for i, r in relevances.items() if i not in exact}
    top = max(others.values(), default=0.0)
    return (exact & set(relevances)) | {i for i, r in others.items() if r >= RELEVANCE_GATE * top}
