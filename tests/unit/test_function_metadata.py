"""The function metadata the Functions host indexes is what `func start` and Azure accept."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from devhost.index import index_functions, load_app, read_host_json
from shared.app.capabilities import catalogue

ROOT = Path(__file__).resolve().parents[2]
_FUNCTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,127}$")


@pytest.fixture(scope="module")
def functions():
    return index_functions(load_app(ROOT))


def test_app_is_a_durable_app() -> None:
    import azure.durable_functions as df

    assert isinstance(load_app(ROOT), df.DFApp)


def test_names_are_unique_and_valid(functions) -> None:
    names = [f.name for f in functions]
    assert len(names) == len(set(names))
    assert all(_FUNCTION_NAME.match(n) for n in names), names


def test_http_bindings_are_complete(functions) -> None:
    for f in functions:
        trigger = f.trigger
        if trigger["type"] != "httpTrigger":
            continue
        assert trigger["direction"] == "IN", f.name
        assert trigger["authLevel"] in ("ANONYMOUS", "FUNCTION", "ADMIN"), f.name
        assert trigger["route"], f.name
        assert not trigger["route"].lower().startswith("admin"), f.name  # /admin is the host's
        assert trigger["methods"], f.name
        assert {"type": "http", "direction": "OUT", "name": "$return"} in [dict(b) for b in f.bindings], f.name


def test_parameters_match_bindings_as_the_worker_checks(functions) -> None:
    for f in functions:
        inputs = {b["name"] for b in f.bindings if b["name"] != "$return"}
        # `context` is the worker's invocation context unless a binding takes that name (orchestrators do).
        params = set(inspect.signature(f.user_function).parameters) - ({"context"} - inputs)
        assert params == inputs, f"{f.name}: params {params} vs bindings {inputs}"


def test_routes_do_not_clash(functions) -> None:
    seen: dict[tuple[str, str], str] = {}
    for f in functions:
        if f.trigger["type"] != "httpTrigger":
            continue
        for method in f.trigger["methods"]:
            key = (method, f.trigger["route"].lower())
            assert key not in seen, f"{f.name} and {seen.get(key)} both serve {key}"
            seen[key] = f.name


def test_durable_functions_are_declared(functions) -> None:
    by_name = {f.name: f for f in functions}
    assert by_name["diagnostics_orchestrator"].trigger["type"] == "orchestrationTrigger"
    assert by_name["diagnostics_check"].trigger["type"] == "activityTrigger"
    assert {b["type"] for b in by_name["rest_diagnostics_start"].bindings} == {"httpTrigger", "durableClient", "http"}


def test_only_routes_declared_with_runs_bind_the_durable_client(functions) -> None:
    by_name = {f.name: f for f in functions}
    for route in catalogue().routes:
        bindings = {b["type"] for b in by_name[route.function_name].bindings}
        assert ("durableClient" in bindings) == route.runs, route.name
    assert any(r.runs for r in catalogue().routes)
    assert not all(r.runs for r in catalogue().routes)


def test_expected_routes_and_auth_levels(functions) -> None:
    by_name = {f.name: f.trigger for f in functions}
    assert by_name["health"]["route"] == "health"
    assert by_name["health"]["authLevel"] == "ANONYMOUS"
    assert by_name["mcp"]["route"] == "mcp"
    assert sorted(by_name["mcp"]["methods"]) == ["DELETE", "GET", "POST"]
    assert by_name["tools_document"]["route"] == "tools"
    for tool in catalogue().registry:
        trigger = by_name[tool.function_name]
        assert trigger["route"] == f"tools/{tool.name}"
        assert trigger["methods"] == ["POST"]
        assert trigger["authLevel"] == "ANONYMOUS"


def test_every_app_http_function_is_anonymous_at_the_host(functions) -> None:
    # The app authenticates every call itself (issue #29): a function key in a phone or MCP client would be a
    # shared secret, and the host's bare 401 would hide the app's challenge.
    for f in functions:
        if f.trigger["type"] == "httpTrigger":
            assert f.trigger["authLevel"] == "ANONYMOUS", f.name


def test_host_json_has_what_func_start_needs() -> None:
    host = read_host_json(ROOT)
    assert host["version"] == "2.0"
    assert host["extensionBundle"]["id"] == "Microsoft.Azure.Functions.ExtensionBundle"
    assert host["extensionBundle"]["version"].startswith("[4.")
    assert host["extensions"]["http"]["routePrefix"] == "api"
    durable = host["extensions"]["durableTask"]
    assert durable["hubName"]
    assert durable["storageProvider"]["connectionName"] == "AzureWebJobsStorage"


def test_requirements_and_local_settings() -> None:
    reqs = (ROOT / "requirements.txt").read_text()
    # Pinned per Python (tests/unit/test_dependency_locks.py checks the pins against the lock).
    assert 'azure-functions==1.26.0; python_version < "3.13"' in reqs
    assert "azure-functions-durable==" in reqs
    values = json.loads((ROOT / "local.settings.example.json").read_text())["Values"]
    assert values["FUNCTIONS_WORKER_RUNTIME"] == "python"
    assert values["AzureWebJobsStorage"]
