"""The collect plan's two halves: what a run record may hold, and the sealed secrets that complete it."""

from __future__ import annotations

import json

import pytest

from shared.perf.collect.plan import (
    CollectPlan,
    ProbeSettings,
    RecordedValues,
    RedactionRules,
    StoredPlan,
    split_secrets,
    validate_stored_plan,
    with_secrets,
)
from shared.perf.models import Retention


def a_plan(**changes: object) -> CollectPlan:
    fields: dict = {
        "workspace_id": "ws-a",
        "bundle_id": "bundle_20260101_120000_0123456789",
        "created_at": "2026-01-01T12:00:00+00:00",
        "base_url": "https://example.test",
        "url_paths": ["/health", "/search?q=SECRET-Q;jsessionid=X"],
        "headers": {"Authorization": "Bearer SECRET-H"},
        "probe": ProbeSettings(sample_count=2, concurrency=1, timeout_ms=1000, warmup_count=0),
        "redaction_rules": RedactionRules(),
        "recorded": RecordedValues(base_url="https://example.test", headers=["Authorization"], headers_dropped=[]),
        "inventory": [{"blob": "slow.log", "type": "mysql_slow_log"}],
        "retention": Retention(),
    }
    return CollectPlan(**{**fields, **changes})


def test_the_stored_half_holds_no_header_value_or_unrecorded_query() -> None:
    plan = a_plan()
    stored, secret = split_secrets(plan)
    record = stored.model_dump(mode="json")
    text = json.dumps(record)
    assert "SECRET-H" not in text
    assert "SECRET-Q" not in text
    assert "workspace_id" not in record
    assert "headers" not in record
    assert record["url_paths"] == ["/health", "/search"]
    assert record["header_names"] == ["Authorization"]
    assert secret.sealed() == {"headers": {"Authorization": "Bearer SECRET-H"}, "url_paths": plan.url_paths}
    # Claim re-validates the record; the probe activity joins the halves again for the record's owner.
    assert validate_stored_plan(record) == record
    assert with_secrets(record, secret.sealed() or {}, "ws-a") == plan


def test_a_plan_without_secrets_seals_nothing() -> None:
    plan = a_plan(
        url_paths=["/health"],
        headers={},
        recorded=RecordedValues(base_url="https://example.test", headers=[], headers_dropped=[]),
    )
    stored, secret = split_secrets(plan)
    assert secret.sealed() is None
    assert with_secrets(stored.model_dump(mode="json"), {}, "ws-a") == plan


@pytest.mark.parametrize(
    ("secret", "problem"),
    [
        ({"headers": {"X-Other": "v"}, "url_paths": ["/health", "/search?q=1"]}, "headers do not match"),
        ({"headers": {"Authorization": "v"}, "url_paths": ["/health", "/elsewhere?q=1"]}, "paths do not match"),
        ({"headers": {"Authorization": "v\r\nHost: evil"}}, "secrets are invalid"),
        ({"headers": {"Authorization": "v"}, "extra": 1}, "secrets are invalid"),
    ],
)
def test_secrets_that_do_not_fit_their_plan_are_refused(secret: dict, problem: str) -> None:
    record = split_secrets(a_plan())[0].model_dump(mode="json")
    with pytest.raises(ValueError, match=problem):
        with_secrets(record, secret, "ws-a")


@pytest.mark.parametrize(
    "change",
    [
        {"probe": {"sample_count": 10_000}},
        {"headers": {"A": "b"}},
        {"bundle_id": "../elsewhere"},
        {"url_paths": ["no-slash"]},
    ],
)
def test_a_tampered_record_fails_revalidation(change: dict) -> None:
    record = split_secrets(a_plan())[0].model_dump(mode="json")
    bad = {**record, **change}
    if "probe" in change:
        bad["probe"] = {**record["probe"], **change["probe"]}
    with pytest.raises(ValueError, match="stored collect plan is invalid"):
        StoredPlan.from_record(bad)
