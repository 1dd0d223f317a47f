"""Every input of every memory tool refuses values of the wrong kind instead of coercing them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from shared.memory.models import (
    AddIncidentRequest,
    AddSolutionRequest,
    GetIncidentRequest,
    ListIncidentsRequest,
    RankedSolutionsRequest,
    RecordOutcomeRequest,
)

ENV = {"os": "linux", "language": "python 3.11"}
INCIDENT = {"title": "redis timeouts", "steps": ["raise the timeout"], "worked": True, "env": ENV}


def _deep(depth: int) -> dict[str, Any]:
    env: dict[str, Any] = {"os": "linux"}
    for _ in range(depth):
        env = {"nested": env}
    return env


@pytest.mark.parametrize(
    ("model", "body", "field"),
    [
        (RankedSolutionsRequest, {"query_text": "x", "env": ENV, "limit": True}, "limit"),
        (RankedSolutionsRequest, {"query_text": "x", "env": ENV, "limit": "5"}, "limit"),
        (RankedSolutionsRequest, {"query_text": "x", "env": ENV, "limit": 5.0}, "limit"),
        (RankedSolutionsRequest, {"query_text": "   ", "env": ENV}, "query_text"),
        (RankedSolutionsRequest, {"query_text": "x", "env": _deep(3_000)}, "env"),
        (RankedSolutionsRequest, {"query_text": "x", "env": _deep(20)}, "env"),
        (ListIncidentsRequest, {"limit": True}, "limit"),
        (ListIncidentsRequest, {"limit": "20"}, "limit"),
        (
            RecordOutcomeRequest,
            {"solution_id": "sol_a_b", "worked": True, "env": ENV, "env_bucket": "garbage"},
            "env_bucket",
        ),
        (
            RecordOutcomeRequest,
            {"solution_id": "sol_a_b", "worked": True, "env": ENV, "env_bucket": "linux|py3|nonsense|k8s1|aws"},
            "env_bucket",
        ),
        (
            RecordOutcomeRequest,
            {"solution_id": "sol_a_b", "worked": True, "env": ENV, "env_bucket": "linux|py3|django4|k8s1|aws|extra"},
            "env_bucket",
        ),
        (RecordOutcomeRequest, {"solution_id": "sol_a/b", "worked": True, "env": ENV}, "solution_id"),
        (
            AddSolutionRequest,
            {"incident_id": "inc_x", "steps": ["a"], "env": ENV, "env_bucket": "garbage"},
            "env_bucket",
        ),
        (AddSolutionRequest, {"incident_id": "inc_x?y", "steps": ["a"], "env": ENV}, "incident_id"),
        (AddIncidentRequest, {**INCIDENT, "env_bucket": "windows|klingon9|any|any|any"}, "env_bucket"),
        (AddIncidentRequest, {**INCIDENT, "title": "     "}, "title"),
        (AddIncidentRequest, {**INCIDENT, "worked": 1}, "worked"),
        (AddIncidentRequest, {**INCIDENT, "lookup_id": "lkp#1"}, "lookup_id"),
        (GetIncidentRequest, {"incident_id": "inc_x/../y"}, "incident_id"),
    ],
)
def test_wrong_kinds_are_refused(model: type[BaseModel], body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    assert field in {str(e["loc"][0]) for e in caught.value.errors()}


@pytest.mark.parametrize(
    "bucket", ["linux|py3|django4|k8s1|aws", "any|any|any|any|any", "Linux|PY3", "macos|node20|express4|docker|any"]
)
def test_real_buckets_are_accepted(bucket: str) -> None:
    req = RecordOutcomeRequest.model_validate(
        {"solution_id": "sol_a_b", "worked": False, "env": ENV, "env_bucket": bucket}
    )
    assert req.env_bucket is not None


def test_a_modest_nested_env_is_accepted() -> None:
    assert RankedSolutionsRequest.model_validate({"query_text": "x", "env": _deep(3)}).env
