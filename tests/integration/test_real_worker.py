"""function_app.py loaded in the real Python language worker (PyPI azure-functions-runtime on Python 3.13, in
.venv-worker built by `make worker-venv`): the worker accepts every function, and what it indexes (names,
routes, methods, auth levels, bindings) is exactly what the offline host serves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devhost.host import build_host
from devhost.http_server import aiohttp_path
from devhost.index import index_functions, load_app, read_host_json, route_prefix
from devhost.real_worker import index_in_real_worker

ROOT = Path(__file__).resolve().parents[2]
REJECTS = ROOT / "tests" / "fixtures" / "worker_rejects"


@pytest.fixture(scope="module")
def worker() -> dict:
    return index_in_real_worker(ROOT)


@pytest.fixture(scope="module")
def offline():
    """The offline host as `python -m devhost` builds it (routes mounted, nothing started or connected)."""
    mp = pytest.MonkeyPatch()
    for key, value in {
        "AzureWebJobsStorage": "UseDevelopmentStorage=true",
        "FIREBREAK_TASK_HUB": "workerindex",
    }.items():
        mp.setenv(key, value)
    try:
        yield build_host(ROOT, "http://127.0.0.1:7071")
    finally:
        mp.undo()


def test_the_worker_accepts_every_function(worker: dict) -> None:
    assert worker["status"] == "Success", worker["exception"]
    assert worker["worker"]["package"] == "azure-functions-runtime"
    assert worker["worker"]["python"] >= "3.13"
    for fn in worker["functions"]:
        assert fn["entry_point"] == fn["name"], fn
        assert fn["script_file"] == "function_app.py", fn
        assert fn["properties"] == {"worker_indexed": "True"}, fn
        assert set(fn["bindings"]) == {b["name"] for b in fn["raw_bindings"]}, fn


def test_the_worker_serves_http_streams(worker: dict) -> None:
    # The app imports its web extension (functions/http_streams.py, via functions/http.py): the worker indexes every
    # HTTP function with its Request/Response types and starts its internal HTTP server for them.
    assert worker["capabilities"]["HttpUri"].startswith("http://127.0.0.1:"), worker["capabilities"]
    assert worker["capabilities"]["RequiresRouteParameters"] == "true"


def test_one_request_answers_through_the_workers_http_streams() -> None:
    # One invocation as the host makes it under HTTP streams: the InvocationRequest to the worker and the
    # request to its internal server; the answer is the app's edge's own (status, headers, body).
    report = index_in_real_worker(ROOT, env={"FIREBREAK_MCP_ALLOWED_HOSTS": "127.0.0.1"}, call="openapi_document")
    call = report["call"]
    assert call["invocation"] == "Success", call
    assert call["status"] == 200, call
    assert call["headers"]["Content-Type"].startswith("application/json"), call["headers"]
    assert "X-Correlation-ID" in call["headers"]
    assert json.loads(call["body"])["openapi"].startswith("3.1"), call["body"][:200]


def test_indexed_functions_equal_the_offline_index(worker: dict) -> None:
    ours = {f.name: [dict(b) for b in f.bindings] for f in index_functions(load_app(ROOT))}
    theirs = {f["name"]: f["raw_bindings"] for f in worker["functions"]}
    assert sorted(theirs) == sorted(ours)
    for name, bindings in theirs.items():
        assert bindings == ours[name], name  # routes, methods, auth levels, every binding's settings


def test_the_offline_host_serves_exactly_the_workers_http_functions(worker: dict, offline) -> None:
    prefix = route_prefix(read_host_json(ROOT))
    expected = set()
    for fn in worker["functions"]:
        trigger = next(b for b in fn["raw_bindings"] if b["type"].endswith("Trigger"))
        if trigger["type"] != "httpTrigger":
            continue
        for method in trigger["methods"]:
            expected.add((method.upper(), aiohttp_path(prefix, trigger["route"]), fn["name"]))
    assert set(offline.routes) == expected
    served = {f.name: f.trigger for f in offline.functions}
    for fn in worker["functions"]:
        trigger = next(b for b in fn["raw_bindings"] if b["type"].endswith("Trigger"))
        assert served[fn["name"]] == trigger  # same trigger type; for HTTP the same authLevel the host enforces


def test_the_workers_validation_runs_and_can_refuse() -> None:
    # A negative control: the same probe on an app with a parameter no binding fills is refused by the worker.
    report = index_in_real_worker(REJECTS)
    assert report["status"] == "Failure", report
    assert "not_a_binding" in report["exception"], report
