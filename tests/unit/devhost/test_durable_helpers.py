"""Pure pieces of the Durable engine: retry delays, payload unwrapping, hub names, history events."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from devhost.durable import history as h
from devhost.durable.engine import _flatten_actions, parse_fail_activities, retry_delay
from devhost.durable.http_api import wire_payload
from devhost.host import task_hub
from devhost.index import UnresolvedSetting
from functions.durable_retry import BackoffRetryOptions


@pytest.mark.parametrize(
    ("options", "attempts", "ms"),
    [
        ({"firstRetryIntervalInMilliseconds": 100}, 1, 100),
        ({"firstRetryIntervalInMilliseconds": 100}, 3, 100),
        ({"firstRetryIntervalInMilliseconds": 100, "backoffCoefficient": 2}, 1, 100),
        ({"firstRetryIntervalInMilliseconds": 100, "backoffCoefficient": 2}, 3, 400),
        (
            {"firstRetryIntervalInMilliseconds": 100, "backoffCoefficient": 3, "maxRetryIntervalInMilliseconds": 500},
            4,
            500,
        ),
    ],
)
def test_retry_delay(options, attempts, ms) -> None:
    assert retry_delay(options, attempts).total_seconds() * 1000 == ms


def test_backoff_retry_options_serialise_what_the_extension_reads() -> None:
    assert BackoffRetryOptions(250, 5, 2.0, 4000).to_json() == {
        "firstRetryIntervalInMilliseconds": 250,
        "maxNumberOfAttempts": 5,
        "backoffCoefficient": 2.0,
        "maxRetryIntervalInMilliseconds": 4000,
    }
    with pytest.raises(ValueError, match="backoff_coefficient"):
        BackoffRetryOptions(250, 5, 0.5)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", None),
        (json.dumps(json.dumps({"a": 1})), '{"a": 1}'),  # DurableOrchestrationClient double-encodes
        ('{"a": 1}', '{"a": 1}'),  # curl sends the value itself
        (json.dumps(json.dumps("yes")), '"yes"'),
        ('"plain words"', '"plain words"'),
        ("42", "42"),
    ],
)
def test_wire_payload(body, expected) -> None:
    assert wire_payload(body) == expected


def test_wire_payload_rejects_bad_json() -> None:
    with pytest.raises(json.JSONDecodeError):
        wire_payload("{nope")


def test_task_hub_resolves_settings() -> None:
    host_json = {"extensions": {"durableTask": {"hubName": "%HUB%"}}}
    assert task_hub(host_json, {"HUB": "mine"}) == "mine"
    assert task_hub({}, {}) == "TestHubName"  # the extension's default applies only when host.json names no hub
    for env in ({}, {"HUB": ""}):  # an unset setting stops the start (as the Functions host does), naming it
        with pytest.raises(UnresolvedSetting, match="HUB"):
            task_hub(host_json, env)


def test_history_event_shape() -> None:
    at = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)
    ev = h.event(h.TASK_COMPLETED, at, TaskScheduledId=3, Result="1")
    assert ev == {
        "EventType": 5,
        "EventId": -1,
        "IsPlayed": False,
        "Timestamp": "2026-11-22T04:00:00.000000Z",
        "TaskScheduledId": 3,
        "Result": "1",
    }
    assert h.public(ev, with_output=False) == {
        "EventType": "TaskCompleted",
        "Timestamp": ev["Timestamp"],
        "TaskScheduledId": 3,
    }


def test_flatten_actions_handles_both_replay_schemas() -> None:
    v1 = [[{"actionType": 0, "functionName": "a"}], [{"actionType": 5}]]
    v2 = [
        {
            "actionType": 12,
            "compoundActions": [{"actionType": 0, "functionName": "a"}, {"actionType": 0, "functionName": "b"}],
        }
    ]
    assert [a["actionType"] for a in _flatten_actions(v1)] == [0, 5]
    assert [a.get("functionName") for a in _flatten_actions(v2)] == [None, "a", "b"]


def test_fail_activity_spec_names_activities_and_failing_attempts() -> None:
    assert parse_fail_activities(None) == {}
    assert parse_fail_activities("") == {}
    assert parse_fail_activities("investigation_plan:2") == {"investigation_plan": 2}
    assert parse_fail_activities(" a:1, b:3 ,") == {"a": 1, "b": 3}
    for bad in ("plan", "plan:", ":2", "plan:two"):
        with pytest.raises(ValueError, match="not name:N"):
            parse_fail_activities(bad)
