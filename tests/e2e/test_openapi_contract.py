"""The OpenAPI document is a contract the running app keeps: schemathesis fuzzes it against a real host.

The schema is loaded from the host's own GET /api/openapi.json. For every operation carrying one of the
CONTRACT_TAGS, schemathesis sends generated requests (valid ones and, from the same schemas, invalid ones)
with the headers of a fresh dev workspace and checks that the app never answers 5xx, that every status is
one the operation documents, and that every answer's content type and body match the document. The
plugin app (tests/fixtures/plugin_app) adds the throwaway capability's REST routes.

A capability joins the contract by adding its tags to CONTRACT_TAGS, nothing else. Generation is seeded
and derandomized, the example count per operation bounded, so a run is the same run every time.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import pytest
import schemathesis
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from devhost.processes import HostProcess

# Operations (by OpenAPI tag) the contract covers on the app; the plugin app's own ones below. Not here:
# "tools: neubird" (503 NOT_CONFIGURED without NEUBIRD_* settings, and not_a_server_error counts every 5xx).
CONTRACT_TAGS: tuple[str, ...] = ("platform", "tools: memory", "tools: chat", "tools: tasks", "tasks", "chat")
PLUGIN_CONTRACT_TAGS: tuple[str, ...] = ("throwaway",)

EXAMPLES_PER_OPERATION = 25

# Operations whose answers feed others (an id created, then read, changed, deleted): schemathesis infers the
# links from path parameters and Location headers and chains them in short scenarios, so reads and changes
# run on ids that exist. One entry per host ("app" or "plugin") and tag set.
STATEFUL: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("app", ("tasks",)),
    ("app", ("chat",)),  # a set of its own: together with tasks, only task operations started scenarios
    ("plugin", ("throwaway",)),
)
STATEFUL_SCENARIOS = 30
STATEFUL_STEPS = 5
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]

PLUGIN_APP = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_app"
FUNCTION_KEY = "contract-key"


# Derandomized (the seed comes from the test), no example database, no shrinking: the same requests every
# run, and a failure is reported as the request that failed (with its curl line) rather than minimised.
SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    suppress_health_check=list(hypothesis.HealthCheck),
)


def _config() -> schemathesis.Config:
    # The dev host resolves the caller from x-dev-workspace: generated credentials would only test 401s.
    return schemathesis.Config.from_dict({"generation": {"with-security-parameters": False}})


def _load(base_url: str) -> Any:
    return schemathesis.openapi.from_url(
        f"{base_url}/api/openapi.json", config=_config(), headers={"x-functions-key": FUNCTION_KEY}, timeout=30
    )


@pytest.fixture(scope="module")
def app_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    """A host of this module's own, on a database of its own: the scenarios see only what they created."""
    return start_host({"FIREBREAK_COSMOS_DATABASE": f"contract{uuid.uuid4().hex[:8]}"})


@pytest.fixture(scope="module")
def app_schema(app_host: HostProcess) -> Any:
    return _load(app_host.base_url)


@pytest.fixture(scope="module")
def plugin_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    """Function keys enforced, as on Azure (the app's `host` has none): every call here carries the key."""
    return start_host({"DEVHOST_FUNCTION_KEY": FUNCTION_KEY}, app_dir=PLUGIN_APP)


@pytest.fixture(scope="module")
def plugin_schema(plugin_host: HostProcess) -> Any:
    return _load(plugin_host.base_url)


def _fresh_workspace() -> dict[str, str]:
    # The function key is for the plugin host, which enforces keys; the app's host ignores it.
    return {
        "x-dev-workspace": f"ws-contract-{uuid.uuid4().hex[:12]}",
        "x-dev-user": "contract",
        "x-functions-key": FUNCTION_KEY,
    }


def _keep_the_contract(schema: Any, tag: str) -> None:
    """Fuzz every operation tagged `tag`: valid requests, then invalid ones; all failures in one report."""
    operations = [r.ok() for r in schema.include(tag=tag).get_all_operations()]
    assert operations, f"no operation is tagged {tag!r}"
    failures: list[str] = []
    for operation in operations:
        headers = _fresh_workspace()
        # An operation with no parameters and no body has no invalid request to send.
        takes_input = bool(operation.body) or any(True for _ in operation.iter_parameters())
        modes = [schemathesis.GenerationMode.POSITIVE] + ([schemathesis.GenerationMode.NEGATIVE] if takes_input else [])
        for mode in modes:
            try:
                _fuzz(operation, mode, headers)
            # Collected, so one report names every failing operation. Schemathesis raises its check failures
            # as a FailureGroup (a BaseExceptionGroup); anything else (a refused connection) is a failure too.
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.label} ({mode.value}):\n{_describe(exc)}")
    assert not failures, "\n\n".join(failures)


def _fuzz(operation: Any, mode: schemathesis.GenerationMode, headers: dict[str, str]) -> None:
    @hypothesis.settings(SETTINGS)
    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)

    run()


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, BaseExceptionGroup):  # the group's message is the report: checks, response and curl
        text = "\n".join([text, *(f"- {type(e).__name__}: {e}" for e in exc.exceptions)])
    return text


@pytest.mark.parametrize("tag", CONTRACT_TAGS)
def test_the_app_keeps_its_openapi_contract(tag: str, app_schema: Any) -> None:
    _keep_the_contract(app_schema, tag)


@pytest.mark.parametrize("tag", PLUGIN_CONTRACT_TAGS)
def test_a_plugged_in_capability_keeps_the_contract(tag: str, plugin_schema: Any) -> None:
    _keep_the_contract(plugin_schema, tag)


@pytest.mark.parametrize(("which", "tags"), STATEFUL, ids=[f"{w}: {', '.join(t)}" for w, t in STATEFUL])
def test_linked_operations_keep_the_contract(which: str, tags: tuple[str, ...], request: pytest.FixtureRequest) -> None:
    schema = request.getfixturevalue("app_schema" if which == "app" else "plugin_schema")
    answered: dict[str, set[int]] = {}

    class Scenario(schema.include(tag=list(tags)).as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.headers = _fresh_workspace()  # one workspace per scenario: its ids are its own

        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"headers": self.headers, "timeout": 30}

        def validate_response(
            self, response: Any, case: schemathesis.Case, additional_checks: Any = None, **kwargs: Any
        ) -> None:
            answered.setdefault(case.operation.label, set()).add(response.status_code)
            case.validate_response(response, checks=CHECKS, headers=self.headers, transport_kwargs=kwargs)

    Scenario.run(
        settings=hypothesis.settings(
            SETTINGS,
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            phases=[hypothesis.Phase.generate],
        )
    )
    # The links worked: an operation taking an id in its path answered a success (the id existed). Not every
    # one must: generated bodies rarely pass every rule of a PATCH (those are the capability's own tests).
    by_id = [codes for label, codes in answered.items() if "{" in label]
    assert by_id, answered  # the scenarios reached the operations that take an id
    if tags != ("tasks",):
        assert any(200 <= s < 300 for codes in by_id for s in codes), answered
    # tasks: whether a scenario reads back a task it created is up to schemathesis's choices, which were not
    # the same run to run (never in 30 scenarios when the whole suite ran in one process, cause not found):
    # test_a_created_task_is_found_at_its_location follows that link deterministically.


@pytest.mark.parametrize("which", ["app", "plugin"])
def test_the_document_is_valid_openapi_3_1(which: str, request: pytest.FixtureRequest) -> None:
    host: HostProcess = request.getfixturevalue("host" if which == "app" else "plugin_host")
    doc = httpx.get(f"{host.base_url}/api/openapi.json", headers={"x-functions-key": FUNCTION_KEY}, timeout=30).json()
    assert doc["openapi"] == "3.1.0"
    validate(doc)  # raises OpenAPIValidationError naming the first problem
    # The validator does reject a broken copy (one response without its required description).
    broken = copy.deepcopy(doc)
    operation = next(iter(next(iter(broken["paths"].values())).values()))
    del next(iter(operation["responses"].values()))["description"]
    with pytest.raises(OpenAPIValidationError):
        validate(broken)
    tags = {t for ops in doc["paths"].values() for op in ops.values() for t in op.get("tags", [])}
    wanted = set(CONTRACT_TAGS) | (set(PLUGIN_CONTRACT_TAGS) if which == "plugin" else set())
    assert wanted <= tags, f"contract tags the document does not have: {sorted(wanted - tags)}"


def test_the_function_key_in_the_query_is_not_a_route_parameter(plugin_host: HostProcess) -> None:
    # App routes are anonymous at the host, but a client configured before may still send the function key as
    # `?code=`, which the host passes on to the function, as Azure does: it is not taken for a parameter.
    base, key = plugin_host.base_url, {"code": FUNCTION_KEY}
    dev = {k: v for k, v in _fresh_workspace().items() if k != "x-functions-key"}
    made = httpx.post(f"{base}/api/throwaway/notes", params=key, json={"text": "keyed"}, headers=dev, timeout=30)
    assert made.status_code == 201, made.text
    url = f"{base}/api/throwaway/notes/{made.json()['note_id']}"
    got = httpx.get(url, params={**key, "upper": "true"}, headers=dev, timeout=30)
    assert got.status_code == 200, got.text
    assert got.json()["text"] == "KEYED"
    # Any other unknown query parameter is still refused, naming it.
    other = httpx.get(url, params={**key, "surprise": "1"}, headers=dev, timeout=30)
    assert other.status_code == 400
    assert [e["field"] for e in other.json()["error"]["details"]["errors"]] == ["surprise"]


def test_a_body_not_declared_json_is_a_documented_415(plugin_host: HostProcess) -> None:
    doc = httpx.get(
        f"{plugin_host.base_url}/api/openapi.json", headers={"x-functions-key": FUNCTION_KEY}, timeout=30
    ).json()
    for path in ("/api/throwaway/notes", "/api/tools/throwaway_note"):
        r = httpx.post(
            plugin_host.base_url + path,
            content=b'{"text": "plain"}',
            headers={**_fresh_workspace(), "content-type": "text/plain"},
            timeout=30,
        )
        assert r.status_code == 415, (path, r.text)
        assert r.json()["error"]["code"] == "INVALID_REQUEST"
        assert "415" in doc["paths"][path]["post"]["responses"], path


def test_a_created_task_is_found_at_its_location(app_host: HostProcess) -> None:
    """The link the task scenarios follow: 201 with a Location, and that Location answers the same task."""
    headers = _fresh_workspace()
    made = httpx.post(f"{app_host.base_url}/api/tasks", json={"title": "follow my link"}, headers=headers, timeout=30)
    assert made.status_code == 201, made.text
    location = made.headers["location"]
    assert location == f"/api/tasks/{made.json()['task']['id']}"
    got = httpx.get(f"{app_host.base_url}{location}", headers=headers, timeout=30)
    assert got.status_code == 200, got.text
    assert got.json()["task"] == made.json()["task"]
    changed = httpx.patch(f"{app_host.base_url}{location}", json={"status": "completed"}, headers=headers, timeout=30)
    assert changed.status_code == 200, changed.text
    assert changed.json()["task"]["status"] == "completed"
    gone = httpx.delete(f"{app_host.base_url}{location}", headers=headers, timeout=30)
    assert gone.status_code == 200, gone.text
    assert httpx.get(f"{app_host.base_url}{location}", headers=headers, timeout=30).status_code == 404
