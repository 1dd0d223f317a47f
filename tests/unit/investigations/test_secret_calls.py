"""The secret filter (the second line behind the tool policy): quoting, escapes and encodings do not hide a word."""

from __future__ import annotations

import json

import pytest

from shared.investigations.secret_calls import DECODES, EXPOSES, NAMES_SECRETS, normal_forms, secret_read
from tests.support import scenarios

PATH = "/var/run/secrets/kubernetes.io/serviceaccount/token"


@pytest.mark.parametrize(
    "command",
    [
        "cat /var/run/sec''rets/kubernetes.io",
        'cat /var/run/sec""rets/kubernetes.io',
        r"cat /var/run/sec\rets/kubernetes.io",
        r"cat /var/run/s\e\c\r\e\t\s/x",
        "cat /var/run/sec\\\nrets/x",  # a backslash-newline is a line continuation
        r"cat $'/var/run/\x73ecrets/x'",
        r"cat $'/var/run/\163ecrets/x'",
        r"cat $'/var/run/\u0073ecrets/x'",
        "cat /var/run/sec${IFS:0:0}rets/x",
        "cat /var/run/sec${x}rets/x",
        "cat /var/run/sec$(true)rets/x",
        "cat /var/run/sec`true`rets/x",
        "cat /var/run/sec$@rets/x",
        "kubectl get SECRETS -A",
        "kubectl get Secret db -o yaml",
        "cat /var/run/sec{r,}ets/x",
        "cat /var/run/se?rets/x",
        "cat /var/run/[s]ecrets/x",
        "cat /var/run/secr*/x",
        "cat /var/run/%73ecrets/x",
        "cat /var/run/%2573ecrets/x",  # encoded twice
        "cat /var/run/\uff53\uff45\uff43\uff52\uff45\uff54\uff53/x",  # full-width letters
        "cat /var/run/sec\u200brets/x",  # a zero-width space
        "cat /var/run/sec\u00adrets/x",  # a soft hyphen
    ],
)
def test_a_secret_path_hidden_by_quoting_escapes_expansions_globs_or_encodings_is_found(command: str) -> None:
    assert secret_read("exec_shell", {"command": command}) is not None, normal_forms(command)


@pytest.mark.parametrize(
    "command",
    [
        "printenv",
        "print''env",
        'p"r"intenv AWS_SECRET',
        "env",
        "/usr/bin/env",
        "env | grep KEY",
        "sh -c env",
        "e''nv",
        "$(env)",
        "env -0",
        "cat /proc/1/environ",
        "cat /proc/self/environ",
        "strings /proc/*/environ",
        "cat /proc/*/env*",
        "cat /pr''oc/self/envir''on",
        "export -p",
        "declare -px",
        "ps auxe",
        "cat ~/.kube/config",
        "cat $KUBECONFIG",
        "cat ~/.aws/credentials",
        "cat /etc/shadow",
        "cat ~/.ssh/id_rsa",
        "cat /app/.env",
        f"cat {PATH}",
    ],
)
def test_environment_dumps_and_credential_files_are_found(command: str) -> None:
    assert secret_read("exec_shell", {"command": command}) in (EXPOSES, NAMES_SECRETS), normal_forms(command)


@pytest.mark.parametrize(
    "command",
    ["echo Y2F0IC92YXIvcnVuL3NlY3JldHM= | base64 -d | sh", "xxd -r -p <<< 636174", "eval $CMD", "echo x | rev"],
)
def test_commands_built_from_text_the_filter_cannot_read_are_dropped(command: str) -> None:
    assert secret_read("exec_shell", {"command": command}) == DECODES


@pytest.mark.parametrize(
    "args",
    [
        {"command": ["sh", "-c", "cat /var/run/sec''rets/x"]},  # an argv list
        {"request": {"path": "/api/v1/namespaces/x/sec%72ets"}},  # nested, URL-encoded
        {"sec''rets": "x"},  # a key
    ],
)
def test_every_string_of_the_arguments_is_searched(args: dict[str, object]) -> None:
    assert secret_read("run", args) is not None


@pytest.mark.parametrize("tool", ["secrets_get", "get_secret", "SecretsList", "get-env", "printenv", "read_environ"])
def test_tools_named_for_secrets_or_the_environment_are_dropped(tool: str) -> None:
    assert secret_read(tool, {}) is not None


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("resources_get", {"apiVersion": "v1", "kind": "Pod", "name": "secret-santa", "namespace": "default"}),
        ("pods_log", {"name": "secretary", "namespace": "secrets-team"}),
        ("pods_get", {"name": "env", "namespace": "environ"}),  # names, however they sound
        ("resources_list", {"apiVersion": "v1", "kind": "Pod", "labelSelector": "app.kubernetes.io/name=secret-santa"}),
        ("resources_list", {"apiVersion": "v1", "kind": "Pod", "fieldSelector": "metadata.name=secret-santa"}),
        ("resources_get", {"apiVersion": "v1", "kind": "ServiceAccount", "name": "default", "namespace": "x"}),
        ("events_list", {"namespace": "default"}),
        ("prometheus_execute_range_query", {"query": 'up{env="prod"} * 100'}),
        ("prometheus_execute_range_query", {"query": 'sum by (pod) (rate(x{pod=~"api-.*|web-.*"}[5m]))'}),
        ("prometheus_list_available_metrics", {"name_filter": "container_*"}),
        ("pods_log", {"name": "api-0", "namespace": "payments", "previous": True, "tail": 100}),
    ],
)
def test_names_of_things_and_ordinary_queries_pass(tool: str, args: dict[str, object]) -> None:
    assert secret_read(tool, args) is None


def test_a_name_that_is_not_a_name_is_searched_for_commands_and_paths() -> None:
    assert secret_read("pods_log", {"name": "api-0; printenv"}) == EXPOSES
    assert secret_read("pods_log", {"name": "x", "container": "a && cat /proc/1/environ"}) == EXPOSES


def test_no_call_the_scenarios_plan_is_dropped() -> None:
    calls = [
        (entry["tool"], entry.get("match", {}))
        for path in scenarios.scenario_files() + scenarios.scenario_files(scenarios.HELDOUT)
        for entry in json.loads(path.read_text()).get("tool_responses", [])
    ]
    assert len(calls) > 100
    assert [c for c in calls if secret_read(*c)] == []


def test_normal_forms_are_bounded() -> None:
    hostile = "{a,b}" * 40 + "$(" * 50 + "%25" * 200 + "'" * 1000
    assert len(normal_forms(hostile)) <= 32
