"""Each ranking term's effect, with crafted evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.memory.env_bucket import similarity
from shared.memory.ranking import BucketEvidence, gate, recency, relevance, reliability, score_solution
from shared.memory.search import bm25

NOW = datetime(2026, 11, 22, tzinfo=UTC)
MINE = "linux|py3|django4|k8s1|aws"


def ev(bucket: str = MINE, worked: int = 0, failed: int = 0, days_ago: float | None = None) -> BucketEvidence:
    return BucketEvidence(
        bucket, worked, failed, (NOW - timedelta(days=days_ago)).isoformat() if days_ago is not None else None
    )


def test_reliability_does_not_overrate_a_lucky_record() -> None:
    one_of_one = reliability([ev(worked=1)], MINE)
    forty_five_of_fifty = reliability([ev(worked=45, failed=5)], MINE)
    assert forty_five_of_fifty > one_of_one > reliability([ev()], MINE) > reliability([ev(failed=3)], MINE)
    assert reliability([ev()], MINE) == 0.5


def test_reliability_weights_evidence_by_environment_similarity() -> None:
    elsewhere = "windows|node20|express4|serverless|azure"
    assert reliability([ev(MINE, worked=10)], MINE) > reliability([ev(elsewhere, worked=10)], MINE) == 0.5


def test_env_similarity_decides_between_equally_reliable_fixes() -> None:
    same = score_solution([ev(MINE, worked=5, days_ago=10)], MINE, NOW)
    near = score_solution([ev("linux|py3|django3|k8s1|aws", worked=5, days_ago=10)], MINE, NOW)
    far = score_solution([ev("macos|node20|express4|docker|any", worked=5, days_ago=10)], MINE, NOW)
    assert same.final_solution_score > near.final_solution_score > far.final_solution_score
    assert (same.env_match_score, same.best_env_bucket_match) == (1.0, MINE)


def test_best_bucket_is_the_most_similar_one() -> None:
    s = score_solution(
        [ev("macos|py3|django4|docker|any", worked=3), ev("linux|py3|django4|k8s1|gcp", failed=1)], MINE, NOW
    )
    assert s.best_env_bucket_match == "linux|py3|django4|k8s1|gcp"
    assert s.env_match_score == 0.9
    assert (s.worked_count, s.failed_count) == (3, 1)


def test_recency_decays_with_a_ninety_day_half_life() -> None:
    assert recency(NOW.isoformat(), NOW) == 1.0
    assert recency((NOW - timedelta(days=90)).isoformat(), NOW) == pytest.approx(0.5)
    assert recency(None, NOW) == 0.0
    fresh = score_solution([ev(worked=5, days_ago=1)], MINE, NOW)
    stale = score_solution([ev(worked=5, days_ago=400)], MINE, NOW)
    assert fresh.final_solution_score > stale.final_solution_score
    assert fresh.reliability_score == stale.reliability_score


def test_final_score_weights() -> None:
    s = score_solution([ev(worked=1, days_ago=0)], MINE, NOW, incident_relevance=0.5)
    fit = 0.45 * 1.0 + 0.40 * (2 / 3) + 0.15 * 1.0
    assert s.fit_score == pytest.approx(fit, abs=1e-4)
    assert s.final_solution_score == pytest.approx(0.30 * 0.5 + 0.70 * fit, abs=1e-4)


def test_a_bucket_without_outcomes_is_not_evidence() -> None:
    elsewhere = "windows|dotnet8|aspnet8|any|any"
    s = score_solution([ev(MINE, worked=5, days_ago=1), ev(elsewhere)], elsewhere, NOW)
    assert s.best_env_bucket_match == MINE
    assert s.env_match_score == similarity(elsewhere, MINE) < 0.2  # not 1.0 for the bucket nobody tried
    assert s.untried_env_buckets == [elsewhere]
    assert s.proven is True
    nobody = score_solution([ev(MINE)], MINE, NOW)
    assert (nobody.proven, nobody.best_env_bucket_match, nobody.env_match_score) == (False, None, 0.0)
    assert nobody.evidence.startswith("unproven: 0 outcomes")


def test_relevance_reserves_one_for_exact_matches() -> None:
    assert relevance({"a": 10.0, "b": 5.0, "c": 20.0}, {"c"}) == {"a": 0.75, "b": 0.375, "c": 1.0}
    assert relevance({"a": 10.0}, set()) == {"a": 0.75}


def test_gate_keeps_relevant_incidents_and_every_exact_match() -> None:
    assert gate({"a": 0.75, "b": 0.45, "c": 0.15}, set()) == {"a", "b"}
    # An exact match does not push the other relevant incidents out.
    assert gate({"a": 0.75, "b": 1.0}, {"b"}) == {"a", "b"}
    assert gate({"a": 0.75, "b": 1.0, "c": 0.1}, {"b"}) == {"a", "b"}
    assert gate({}, set()) == set()


def test_bm25_ranks_rarer_and_more_frequent_terms_higher() -> None:
    postings = {
        "oom": {"i1": [3.0, 10.0], "i2": [1.0, 10.0]},
        "pod": {"i1": [1.0, 10.0], "i2": [1.0, 10.0], "i3": [1.0, 10.0]},
    }
    ranked = bm25(postings, total_docs=10, avg_len=10.0)
    assert [m.incident_id for m in ranked] == ["i1", "i2", "i3"]
    assert ranked[0].matched_terms == ("oom", "pod")
