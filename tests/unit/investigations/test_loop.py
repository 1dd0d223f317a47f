"""The loop's pure rules: which planned calls run, when the loop stops, what the status says."""

from __future__ import annotations

import pytest

from shared.core.settings import SettingsError
from shared.investigations.loop import Limits, Planned, admit, progress, signature, status
from shared.investigations.settings import InvestigationSettings


def c(tool: str, **args: object) -> Planned:
    return Planned(key=f"k-{tool}", tool=tool, args=args, reason="r")


def test_signature_ignores_argument_order() -> None:
    assert signature("t", {"a": 1, "b": 2}) == signature("t", {"b": 2, "a": 1})
    assert signature("t", {"a": 1}) != signature("t", {"a": 2})


def test_admit_drops_calls_made_before_and_cuts_to_the_budget() -> None:
    made = [signature("pods_get", {"name": "x"})]
    planned = [c("pods_get", name="x"), c("pods_log", name="x"), c("events_list"), c("events_list")]
    calls, stop = admit(planned, made, [], calls_left=10, per_iteration=10)
    assert stop is None
    assert [x.tool for x in calls] == ["pods_log", "events_list"]  # the repeat and the duplicate are gone
    calls, stop = admit(planned, made, [], calls_left=1, per_iteration=10)
    assert [x.tool for x in calls] == ["pods_log"]
    calls, stop = admit(planned, made, [], calls_left=10, per_iteration=1)
    assert len(calls) == 1


def test_only_repeats_stop_the_loop() -> None:
    made = [signature("pods_get", {"name": "x"})]
    calls, stop = admit([c("pods_get", name="x")], made, [], calls_left=10, per_iteration=5)
    assert calls == []
    assert stop is not None
    assert "repeated" in stop


def test_going_back_to_the_calls_of_two_iterations_ago_stops_the_loop() -> None:
    a, b = [signature("x", {"i": 1})], [signature("y", {"i": 2})]
    calls, stop = admit([c("x", i=1)], [], [a, b], calls_left=10, per_iteration=5)
    assert calls == []
    assert stop is not None
    assert "alternating" in stop


def test_an_empty_plan_is_not_a_repeat() -> None:
    assert admit([], [], [], calls_left=10, per_iteration=5) == ([], None)


def test_progress_rises_through_the_phases() -> None:
    limits = Limits(max_iterations=5)
    values = [
        progress("queued"),
        progress("preparing"),
        *(progress("iterating", i, limits) for i in range(1, 6)),
        progress("reporting"),
        progress("done"),
    ]
    assert values == sorted(values)
    assert values[0] == 0
    assert values[-1] == 100
    body = status("iterating", iteration=2, limits=limits, calls_made=3, tools=["a", "b"], path="rule")
    assert body["phase"] == "iterating"
    assert body["iteration"] == 2
    assert body["calling"] == ["a", "b"]
    assert body["max_tool_calls"] == 15


def test_limits_come_from_the_settings() -> None:
    s = InvestigationSettings(max_iterations=3, max_tool_calls=4, max_calls_per_iteration=6)
    limits = Limits.of(s)
    assert (limits.max_iterations, limits.max_tool_calls, limits.max_calls_per_iteration) == (3, 4, 4)


def test_a_bad_server_list_names_the_variable_not_the_value() -> None:
    with pytest.raises(SettingsError) as err:
        InvestigationSettings.from_env(
            {"FIREBREAK_INVESTIGATIONS_MCP_SERVERS": '[{"name": "k", "url": "x", "headers": 5}]'}
        )
    assert "FIREBREAK_INVESTIGATIONS_MCP_SERVERS" in str(err.value)


def test_stdio_servers_are_refused_on_azure_at_load() -> None:
    from shared.core.settings import Settings

    env = {
        "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": '[{"name": "local", "command": "npx", "args": ["x"]}]',
        "FIREBREAK_INVESTIGATIONS_MCP_ALLOW_STDIO": "true",
    }
    assert Settings.from_env(env, sections=(InvestigationSettings,)).section(InvestigationSettings).mcp_allow_stdio
    with pytest.raises(SettingsError, match="refused on Azure"):
        Settings.from_env({**env, "WEBSITE_INSTANCE_ID": "abc"}, sections=(InvestigationSettings,))


def test_github_token_is_read_from_its_alias_and_never_shown() -> None:
    s = InvestigationSettings.from_env({"GITHUB_TOKEN": "ghp_" + "s" * 36})
    assert s.github_token is not None
    assert "ghp_" not in repr(s)
    assert s.runbooks().github_token is not None


def test_calls_that_would_read_secrets_are_recognised() -> None:
    from shared.investigations.secret_calls import reads_secrets

    assert reads_secrets("resources_get", {"apiVersion": "v1", "kind": "Secret", "name": "db"})
    assert reads_secrets("resources_list", {"kind": "secrets"})
    assert reads_secrets("secrets_get", {"name": "x"})
    assert not reads_secrets("resources_get", {"kind": "Pod", "name": "secret-santa"})
    assert not reads_secrets("pods_log", {"name": "secretary"})


def test_an_alert_repeated_has_one_dedup_key() -> None:
    from shared.investigations.alerts import normalise
    from shared.investigations.service import dedup_key

    a = {
        "title": "KubePodCrashLooping",
        "labels": {"pod": "web-1", "namespace": "prod"},
        "starts_at": "2026-11-23T10:00:00Z",
    }
    b = {**a, "description": "a later resend, another text", "labels": {"namespace": "prod", "pod": "web-1"}}
    c = {**a, "labels": {"pod": "web-2", "namespace": "prod"}}
    keys = [dedup_key(normalise(x)[0]) for x in (a, b, c)]
    assert keys[0] == keys[1]
    assert keys[0] != keys[2]
    assert dedup_key(normalise({**a, "fingerprint": "f1"})[0]) == dedup_key(normalise({**c, "fingerprint": "f1"})[0])


@pytest.mark.parametrize(
    "args",
    [
        {"resource_type": "secret"},
        {"args": "get secret db -o yaml"},
        {"resource": "secrets/db"},
        {"kind": "Secrets.v1"},
        {"resourceKind": "Secret"},
        {"kind": "SealedSecret"},
        {"query": {"selector": ["x", "Secret"]}},
    ],
)
def test_secret_reads_are_recognised_in_any_argument_but_a_name(args: dict[str, object]) -> None:
    from shared.investigations.secret_calls import reads_secrets

    assert reads_secrets("resources_get", args)
