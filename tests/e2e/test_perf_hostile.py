"""Over the offline host: a worker busy with the worst slow log still answers /api/health, and hostile
perf requests get clear envelope errors."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from devhost.processes import HostProcess
from tests.fixtures.hostile.corpus import crafted_log

# Not a measurement: the old regexes held the GIL for ~30 s per statement here, so health never answered
# within this; the new ones take milliseconds.
HEALTH_HANG_GUARD_SECONDS = 30


@pytest.fixture(scope="module")
def paths_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    return start_host({"FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "true"})


def test_health_answers_while_the_crafted_slow_log_is_ingested(paths_host: HostProcess, tmp_path: Path) -> None:
    log = tmp_path / "crafted-slow.log"
    crafted_log(log, 300)
    headers = {"x-dev-workspace": f"ws-hostile-{uuid.uuid4().hex[:8]}"}
    in_flight, answered_during, outcome = threading.Event(), [], {}

    def ingest() -> None:
        in_flight.set()
        try:
            outcome["response"] = httpx.post(
                f"{paths_host.base_url}/api/tools/artifacts.ingest",
                json={"artifacts": [{"path": str(log)}]},
                headers=headers,
                timeout=900,
            )
        finally:
            in_flight.clear()

    worker = threading.Thread(target=ingest)
    worker.start()
    in_flight.wait()
    while in_flight.is_set():
        health = httpx.get(f"{paths_host.base_url}/api/health", timeout=HEALTH_HANG_GUARD_SECONDS)
        if in_flight.is_set():  # answered before the ingest returned
            answered_during.append(health.status_code)
    worker.join()
    assert outcome["response"].status_code == 200, outcome["response"].text
    assert outcome["response"].json()["counts"]["queries"] == 300
    assert len(answered_during) >= 3, answered_during
    assert set(answered_during) == {200}, answered_during


def test_hostile_spx_metadata_is_a_validation_error_not_a_500(paths_host: HostProcess, tmp_path: Path) -> None:
    hostile = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
    meta = tmp_path / "hostile.json"
    meta.write_bytes((hostile / "spx-meta-count-text.json").read_bytes())
    trace = tmp_path / "hostile.txt.gz"
    import gzip

    trace.write_bytes(gzip.compress(b"[events]\n0 1 0 0\n0 0 5 5\n[functions]\nmain\n"))
    headers = {"x-dev-workspace": f"ws-hostile-{uuid.uuid4().hex[:8]}"}
    for tool in ("artifacts.validate", "artifacts.ingest"):
        r = httpx.post(
            f"{paths_host.base_url}/api/tools/{tool}",
            json={"artifacts": [{"path": str(meta)}, {"path": str(trace)}]},
            headers=headers,
            timeout=60,
        )
        if tool == "artifacts.validate":
            assert r.status_code == 200
            assert not r.json()["results"][0]["ok"]
            assert "called_function_count" in r.json()["results"][0]["errors"][0]
        else:
            assert r.status_code == 400
            assert r.json()["error"]["code"] == "VALIDATION_ERROR"
            assert "called_function_count" in r.json()["error"]["message"]


def test_oversized_hints_are_a_validation_error(paths_host: HostProcess) -> None:
    r = httpx.post(
        f"{paths_host.base_url}/api/tools/artifacts.validate",
        json={"artifacts": [{"blob": "a.log", "hints": {"x": "y" * 5000}}]},
        headers={"x-dev-workspace": "ws-hints"},
        timeout=30,
    )
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert "hints" in r.text
