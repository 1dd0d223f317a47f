"""Environment canonicalisation and similarity."""

from __future__ import annotations

import pytest

from shared.memory.env_bucket import canonical_bucket, component_similarity, normalize_bucket, similarity


@pytest.mark.parametrize(
    ("env", "bucket"),
    [
        (
            {
                "os": "Ubuntu 22.04",
                "language": "python 3.11.4",
                "framework": "Django 4.2",
                "runtime": "EKS",
                "kubernetes": "v1.29",
            },
            "linux|py3|django4|k8s1|aws",
        ),
        ({"OS": "  UBUNTU  ", "Language": "Python3.12", "Runtime": "Kubernetes v1.29"}, "linux|py3|any|k8s1|any"),
        ({"platform": "Kubernetes v1.29", "cloud": "AKS", "lang": "Go 1.22"}, "linux|go1|any|k8s1|azure"),
        ({"runtime": "AWS Lambda", "language": "python3.12"}, "any|py3|any|serverless|aws"),
        ({"os": "macOS 14", "language": "Node.js 20.11", "framework": "Express 4"}, "macos|node20|express4|any|any"),
        (
            {"os": "Windows Server 2022", "language": ".NET 8", "framework": "ASP.NET Core 8"},
            "windows|dotnet8|aspnet8|any|any",
        ),
        ({"description": "rails 7 app with ruby 3.2 in docker on gke"}, "linux|rb3|rails7|docker|gcp"),
        ({"os": "linux", "k8s": "1.28", "note": "let us go"}, "linux|any|any|k8s1|any"),
        (
            {"stack": {"lang": "java 17", "framework": "spring boot 3"}, "cloud": "on-prem"},
            "any|java17|spring3|any|onprem",
        ),
        ({}, "any|any|any|any|any"),
    ],
)
def test_canonical_bucket(env, bucket) -> None:
    assert canonical_bucket(env) == bucket


def test_explicit_bucket_is_normalised() -> None:
    assert normalize_bucket("Linux|PY3") == "linux|py3|any|any|any"


@pytest.mark.parametrize(
    ("a", "b", "score"),
    [("py3", "py3", 1.0), ("py3", "py2", 0.5), ("any", "py3", 0.5), ("py3", "node20", 0.0), ("k8s1", "k8s", 0.5)],
)
def test_component_similarity(a, b, score) -> None:
    assert component_similarity(a, b) == score


def test_similarity_is_weighted_and_symmetric() -> None:
    a, b = "linux|py3|django4|k8s1|aws", "linux|py3|django3|k8s1|aws"
    assert similarity(a, a) == 1.0
    assert similarity(a, b) == similarity(b, a) == pytest.approx(1 - 0.25 * 0.5)
    assert similarity(a, "windows|node20|express4|serverless|azure") == 0.0
    # Language weighs more than cloud.
    assert similarity(a, "linux|py3|django4|k8s1|gcp") > similarity(a, "linux|node20|django4|k8s1|aws")
