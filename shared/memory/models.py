"""Inputs and outputs of the debug-memory tools."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, StrictBool, StrictInt, field_validator

from shared.memory.env_bucket import bucket_problem, normalize_bucket
from shared.tools.registry import ToolInput, ToolOutput

MAX_ENV_BYTES = 8_000
MAX_ENV_DEPTH = 6
# The ids this capability hands out (inc_…, sol_…_…, lkp_…): anything else cannot name a document of ours,
# and characters such as / ? # would reach the store's paths.
ID_PATTERN = r"^[A-Za-z0-9_-]+$"
MAX_STEPS = 50
MAX_STEP_CHARS = 2_000
MAX_STEPS_TOTAL = 20_000

_ENV = (
    'Your environment as JSON, e.g. {"os": "Ubuntu 22.04", "language": "python 3.11", "framework": "Django 4.2",'
    ' "runtime": "EKS", "kubernetes": "1.29"}. It decides which fixes fit you.'
)
_BUCKET = (
    "Explicit env bucket `os|language|framework|runtime|cloud` (e.g. linux|py3|django4|k8s1|aws);"
    " overrides the one derived from env."
)
_STEPS = "The fix as ordered steps (a list of strings, or one string with a step per line)."
_LOOKUP = "The lookup_id ranked_solutions returned, so the memory learns whether its recommendation was followed."


def _depth(value: Any) -> int:
    """How deeply dicts and lists nest in `value`, counted without recursion (a hostile env may nest thousands deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level > MAX_ENV_DEPTH:
                break
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _check_env(value: dict[str, Any]) -> dict[str, Any]:
    if _depth(value) > MAX_ENV_DEPTH:
        raise ValueError(f"env nests more than {MAX_ENV_DEPTH} levels; send flat facts (os, language, framework, ...)")
    if len(json.dumps(value, default=str)) > MAX_ENV_BYTES:
        raise ValueError(
            f"env is larger than {MAX_ENV_BYTES} bytes;"
            " send the facts that matter (os, language, framework, runtime, cloud)"
        )
    return value


def _check_steps(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [line for line in value.splitlines() if line.strip()]
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError("steps must be a list of strings or one string")
    steps = [s.strip() for s in value if s.strip()]
    if not steps:
        raise ValueError("steps must contain at least one non-empty step")
    if len(steps) > MAX_STEPS:
        raise ValueError(f"at most {MAX_STEPS} steps")
    if any(len(s) > MAX_STEP_CHARS for s in steps) or sum(map(len, steps)) > MAX_STEPS_TOTAL:
        raise ValueError(f"steps are too long (each at most {MAX_STEP_CHARS} characters, {MAX_STEPS_TOTAL} in all)")
    return steps


def _check_bucket(value: str | None) -> str | None:
    if value is None:
        return None
    bucket = normalize_bucket(value)
    problem = bucket_problem(bucket)
    if problem:
        raise ValueError(problem)
    return bucket


def _check_words(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain words, not only spaces")
    return value


class _WithEnv(ToolInput):
    env: dict[str, Any] = Field(description=_ENV)
    env_bucket: str | None = Field(None, max_length=200, description=_BUCKET)

    _env = field_validator("env")(classmethod(lambda cls, v: _check_env(v)))
    _bucket = field_validator("env_bucket")(classmethod(lambda cls, v: _check_bucket(v)))


class RankedSolutionsRequest(ToolInput):
    query_text: str = Field(
        min_length=1,
        max_length=8_000,
        description="The error message, log lines, stack trace fragment or a description of the symptom.",
    )
    env: dict[str, Any] = Field(description=_ENV)
    limit: StrictInt = Field(5, ge=1, le=20, description="How many ranked solutions to return (an integer).")

    _env = field_validator("env")(classmethod(lambda cls, v: _check_env(v)))
    _query = field_validator("query_text")(classmethod(lambda cls, v: _check_words(v)))


class RecordOutcomeRequest(_WithEnv):
    solution_id: str = Field(min_length=1, max_length=100, pattern=ID_PATTERN, description="The solution you tried.")
    worked: StrictBool = Field(description="true if the fix resolved the problem, false if not.")
    lookup_id: str | None = Field(None, max_length=100, pattern=ID_PATTERN, description=_LOOKUP)
    notes: str | None = Field(None, max_length=4_000, description="What happened (optional).")


class AddSolutionRequest(_WithEnv):
    incident_id: str = Field(
        min_length=1, max_length=100, pattern=ID_PATTERN, description="The incident this fix belongs to."
    )
    steps: list[str] = Field(description=_STEPS)
    lookup_id: str | None = Field(None, max_length=100, pattern=ID_PATTERN, description=_LOOKUP)

    _steps = field_validator("steps", mode="before")(classmethod(lambda cls, v: _check_steps(v)))


class AddIncidentRequest(_WithEnv):
    title: str = Field(
        min_length=3, max_length=300, description="A short title of the failure, as an engineer would search for it."
    )
    steps: list[str] = Field(description=_STEPS)
    worked: StrictBool = Field(description="Whether these steps fixed it.")
    error_signature: str | None = Field(
        None,
        max_length=4_000,
        description=(
            "The characteristic error line or exception; numbers, ids, paths and timestamps are ignored when matching."
        ),
    )
    summary: str | None = Field(None, max_length=8_000, description="What happened and why (root cause).")
    tags: list[str] = Field(
        default_factory=list, max_length=20, description="Keywords such as kubernetes, postgres, oom."
    )
    lookup_id: str | None = Field(None, max_length=100, pattern=ID_PATTERN, description=_LOOKUP)
    notes: str | None = Field(None, max_length=4_000, description="Notes on the outcome (optional).")

    _steps = field_validator("steps", mode="before")(classmethod(lambda cls, v: _check_steps(v)))
    _title = field_validator("title")(classmethod(lambda cls, v: _check_words(v)))

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        if any(len(t) > 50 for t in value):
            raise ValueError("each tag at most 50 characters")
        return [t.strip().lower() for t in value if t.strip()]


class GetIncidentRequest(ToolInput):
    incident_id: str = Field(min_length=1, max_length=100, pattern=ID_PATTERN, description="The incident to show.")


class ListIncidentsRequest(ToolInput):
    search: str | None = Field(
        None, max_length=1_000, description="Words to search for (ranked by relevance; no continuation)."
    )
    tag: str | None = Field(None, max_length=50, description="Only incidents with this tag.")
    limit: StrictInt = Field(20, ge=1, le=100, description="Page size (an integer).")
    continuation: str | None = Field(None, max_length=4_000, description="The continuation of the previous page.")


class NextAction(ToolOutput):
    type: str = Field(description="What to do next, as a code.")
    instructions: str = Field(description="What to do next, in words, with the ids to use.")


class IncidentMatch(ToolOutput):
    incident_id: str
    title: str
    relevance_score: float = Field(
        description="0..1: 1 for an exact signature match; others at most 0.75, relative to the best of them."
    )
    exact_signature_match: bool
    matched_terms: list[str]
    why: str = Field(description="Why it matched.")
    solution_count: int


class SolutionScore(ToolOutput):
    """How one solution scores for the caller's environment and query (see shared/memory/ranking.py)."""

    best_env_bucket_match: str | None = Field(
        description="The bucket most similar to yours where this solution has recorded outcomes; null when unproven."
    )
    env_match_score: float = Field(description="Similarity of your bucket to best_env_bucket_match; 0 when unproven.")
    reliability_score: float
    recency_boost: float
    fit_score: float = Field(description="0.45 env match + 0.40 reliability + 0.15 recency.")
    incident_relevance: float = Field(
        description="How well its incident matches the query: 1.0 exact signature match, others at most 0.75."
    )
    exact_signature_match: bool
    final_solution_score: float = Field(description="0.30 incident_relevance + 0.70 fit_score; the sort key.")
    worked_count: int
    failed_count: int
    outcomes_in_best_bucket: int = Field(description="Recorded outcomes in best_env_bucket_match.")
    proven: bool = Field(description="false when nobody has recorded an outcome for this solution yet.")
    untried_env_buckets: list[str] = Field(
        description="Buckets it was registered for (add_solution) without any recorded outcome there."
    )
    evidence: str = Field(description="The evidence in one sentence, e.g. 'unproven: 0 outcomes ...'.")
    last_confirmed_at: str | None


class RankedSolution(SolutionScore):
    solution_id: str
    incident_id: str
    steps: list[str]


class RankedSolutionsResult(ToolOutput):
    lookup_id: str
    env_bucket: str = Field(description="Your environment's bucket, as used for matching.")
    incidents: list[IncidentMatch]
    ranked_solutions: list[RankedSolution]
    recommended_solution: RankedSolution | None
    next_action: NextAction


class BucketStats(ToolOutput):
    env_bucket: str
    worked_count: int
    failed_count: int
    last_confirmed_at: str | None


class SolutionStats(ToolOutput):
    solution_id: str
    incident_id: str
    worked_count: int
    failed_count: int
    last_confirmed_at: str | None
    buckets: list[BucketStats]


class RecordOutcomeResult(ToolOutput):
    ok: bool
    outcome_id: str
    solution_id: str
    env_bucket: str
    was_recommended: bool | None = Field(
        description="Whether the lookup recommended this solution (null without lookup_id)."
    )
    stats: SolutionStats
    next_action: NextAction


class AddSolutionResult(ToolOutput):
    solution_id: str
    incident_id: str
    env_bucket: str
    created: bool = Field(
        description="false when the same steps already existed for this incident (the env variant is recorded)."
    )
    next_action: NextAction


class AddIncidentResult(ToolOutput):
    incident_id: str
    solution_id: str | None
    outcome_id: str | None
    env_bucket: str
    created: bool = Field(description="false when the duplicate guard found the same incident (nothing was written).")
    next_action: NextAction


class SolutionDetail(ToolOutput):
    solution_id: str
    steps: list[str]
    created_at: str
    stats: SolutionStats


class IncidentDetail(ToolOutput):
    incident_id: str
    title: str
    summary: str
    error_signature: str
    tags: list[str]
    created_at: str
    solutions: list[SolutionDetail]
    next_action: NextAction


class IncidentSummary(ToolOutput):
    incident_id: str
    title: str
    tags: list[str]
    created_at: str
    solution_count: int
    relevance_score: float | None = None


class ListIncidentsResult(ToolOutput):
    incidents: list[IncidentSummary]
    continuation: str | None
    next_action: NextAction
