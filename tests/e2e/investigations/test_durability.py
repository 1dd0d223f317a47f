"""Durability and limits of the investigation orchestration on the offline host's Durable engine (issue #12).

Replay determinism of a real run, a host restart mid-investigation, the engine's retries of a failing
activity (fault injection: DEVHOST_FAIL_ACTIVITY), cancel, the iteration / tool-call / repetition limits
with an LLM that never stops, and the size and secrecy of the orchestration history with 15 outputs of 100 KB.
Everything real: hosts in subprocesses, the scenario MCP server and the fake LLM over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from devhost.durable.determinism import nondeterminism, replay_actions
from devhost.durable.instances import Instance, InstanceStore
from devhost.index import index_functions, load_app
from devhost.processes import HostProcess
from devhost.scenario_servers import ScenarioServer, serve_scenario
from devhost.stack import ROOT
from shared.app.wiring import build_deps, load_settings
from shared.investigations.activities.payloads import FAILED_MESSAGE
from shared.investigations.models import ORCHESTRATOR
from shared.investigations.store import InvestigationStore
from tests.support import scenarios
from tests.support.fake_llm import FakeLlm, Recorded, Reply, fake_llm, plan, text

MGMT = "/runtime/webhooks/durabletask"
SYSTEM_KEY = f"sk-{uuid.uuid4().hex}"
# Secrets the investigation uses and must never write down: the MCP server's header and the LLM key.
MCP_SECRET = f"Bearer mcp-secret-{uuid.uuid4().hex}"
LLM_KEY = f"sk-llm-secret-{uuid.uuid4().hex}"
SCENARIO = scenarios.load(scenarios.FIXTURES / "01_oom_kill.json")
HISTORY_LIMIT = 256 * 1024
TERMINAL = ("completed", "failed", "cancelled")


def host_env(mcp: ScenarioServer, **extra: str) -> dict[str, str]:
    return {
        "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps(
            [{"name": "k8s", "url": mcp.url, "headers": {"Authorization": MCP_SECRET}}]
        ),
        "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
        "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32",
        "DEVHOST_SYSTEM_KEY": SYSTEM_KEY,
        **extra,
    }


class Investigations:
    """The investigations API and the Durable management API of one host, for one workspace."""

    def __init__(self, host: HostProcess, workspace: str | None = None) -> None:
        self.host = host
        self.headers = {"x-dev-workspace": workspace or f"ws-dur-{uuid.uuid4().hex[:8]}"}

    @property
    def workspace(self) -> str:
        return self.headers["x-dev-workspace"]

    def start(self, alert: dict[str, Any]) -> str:
        r = httpx.post(f"{self.host.base_url}/api/investigations", json=alert, headers=self.headers, timeout=60)
        assert r.status_code == 202, r.text
        return str(r.json()["started"][0]["investigation_id"])

    def get(self, inv: str) -> dict[str, Any]:
        r = httpx.get(f"{self.host.base_url}/api/investigations/{inv}", headers=self.headers, timeout=30)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def cancel(self, inv: str) -> httpx.Response:
        return httpx.post(f"{self.host.base_url}/api/investigations/{inv}/cancel", headers=self.headers, timeout=30)

    def wait(
        self,
        inv: str,
        until: Callable[[dict[str, Any]], bool] = lambda b: b["status"] in TERMINAL,
        timeout: float = 120,
        *,
        after_end: bool = False,
    ) -> dict[str, Any]:
        """Poll until `until(view)`; an investigation that ends first fails the wait unless `after_end`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.get(inv)
            if until(body):
                return body
            if body["status"] in TERMINAL and not after_end:
                raise AssertionError(f"{inv} ended before the condition was met: {json.dumps(body)[:3000]}")
            time.sleep(0.2)
        raise AssertionError(f"{inv}: condition not met in {timeout}s: {json.dumps(body)[:3000]}\n{self.log()}")

    def settle(self, inv: str, timeout: float = 120) -> dict[str, Any]:
        """Wait until the investigation is finished and so is its Durable instance (the run frame records the
        outcome after the investigation's last activity); the API's view then."""
        view = self.wait(inv, timeout=timeout)
        self.wait_instance(inv, lambda s: s["runtimeStatus"] not in ("Pending", "Running"), timeout=timeout)
        return view

    def instance(self, inv: str, *, history: bool = True) -> dict[str, Any]:
        """The Durable instance as the management API shows it (history with inputs and results)."""
        params = {"showHistory": "true", "showHistoryOutput": "true"} if history else {}
        r = httpx.get(
            f"{self.host.base_url}{MGMT}/instances/{inv}",
            params=params,
            headers={"x-functions-key": SYSTEM_KEY},
            timeout=30,
        )
        assert r.status_code in (200, 202), r.text
        body: dict[str, Any] = r.json()
        return body

    def wait_instance(self, inv: str, until: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.instance(inv, history=False)
            if until(body):
                return body
            time.sleep(0.1)
        raise AssertionError(f"{inv}: instance condition not met in {timeout}s: {body}\n{self.log()}")

    def log(self) -> str:
        return self.host.log()[-4000:]


def calls_of(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for it in view["iterations"] for c in it["calls"]]


def events(instance: dict[str, Any], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in instance["historyEvents"] if e["EventType"] == kind and (name is None or e.get("Name") == name)]


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


def stored_instance(app_env: dict[str, str], hub: str, inv: str) -> Instance:
    async def load() -> Instance | None:
        store = InstanceStore(app_env["AzureWebJobsStorage"], hub)
        try:
            return await store.load(inv)
        finally:
            await store.close()

    inst = run_async(load())
    assert inst is not None
    return inst


def raw_record(app_env: dict[str, str], workspace: str, inv: str) -> dict[str, Any]:
    """The investigation document as stored in the local Cosmos (not the API's view of it)."""

    async def load() -> dict[str, Any]:
        deps = build_deps(load_settings(app_env))
        try:
            store = InvestigationStore(deps.cosmos, deps.blobs)
            return (await store.get(workspace, inv)).to_doc()
        finally:
            await deps.aclose()

    doc: dict[str, Any] = run_async(load())
    return doc


_ORCHESTRATOR_HANDLE: list[Any] = []


def orchestrator_handle() -> Any:
    """The investigation orchestrator function as the app registers it (what the engine replays)."""
    if not _ORCHESTRATOR_HANDLE:
        functions = {f.name: f.user_function for f in index_functions(load_app(ROOT, module_name="durability_app"))}
        _ORCHESTRATOR_HANDLE.append(functions[ORCHESTRATOR])
    return _ORCHESTRATOR_HANDLE[0]


# ---- 1. replay --------------------------------------------------------------------------------------------


def test_a_finished_investigation_replays_to_the_same_actions(start_host, app_env) -> None:
    with serve_scenario(SCENARIO, required_headers={"Authorization": MCP_SECRET}) as mcp:
        host = start_host(host_env(mcp))
        api = Investigations(host)
        inv = api.start(SCENARIO["alert"])
        view = api.settle(inv)
        assert view["status"] == "completed", view
        inst = stored_instance(app_env, host.env["FIREBREAK_TASK_HUB"], inv)
    assert inst.status == "Completed"
    scheduled = [e["Name"] for e in inst.history if e["EventType"] == 4]
    assert scheduled.count("investigation_call") == len(calls_of(view)) > 0
    # The engine's determinism check: two replays of the history give the same actions, and every activity a
    # replay schedules is one the run scheduled (a wall clock or a random id in the orchestrator fails both).
    # The SDK's current_utc_datetime, which the time budget reads, is the history's OrchestratorStarted time.
    assert nondeterminism(orchestrator_handle(), inst) == []
    replayed = replay_actions(orchestrator_handle(), inst)
    assert [a["functionName"] for a in replayed if "functionName" in a] == scheduled  # the check saw every action


# ---- 2. host restart ---------------------------------------------------------------------------------------


def test_a_host_restart_mid_investigation_resumes_and_finishes(start_host) -> None:
    # pods_log answers at once, every other tool after 3 s: iteration 1 has calls recorded and calls in flight.
    def delay(tool: str, _args: dict[str, Any]) -> float:
        return 0.0 if tool == "pods_log" else 3.0

    with serve_scenario(SCENARIO, delay_s=delay, required_headers={"Authorization": MCP_SECRET}) as mcp:
        env = host_env(mcp, FIREBREAK_TASK_HUB=f"inv{uuid.uuid4().hex[:10]}")
        first = start_host(env)
        api = Investigations(first)
        inv = api.start(SCENARIO["alert"])
        # Iterating, with a call recorded and others still at the server: the host crashes here.
        before = api.wait(inv, lambda b: b["status"] == "running" and len(calls_of(b)) >= 1 and mcp.in_flight() >= 1)
        first.proc.kill()  # no graceful shutdown: whatever was in flight is lost mid-way
        first.proc.wait()
        calls_at_stop = len(mcp.calls)
        assert before["report"] is None

        second = start_host(env)  # the same task hub, the same settings
        api2 = Investigations(second, api.workspace)
        view = api2.settle(inv)
        instance = api2.instance(inv)
    print(
        f"restart: {len(calls_of(before))} call(s) recorded at the stop, {calls_at_stop} received by the server; "
        f"after: {len(calls_of(view))} recorded, {len(mcp.calls)} received"
    )
    assert view["status"] == "completed", view
    assert view["report"]
    assert view["report"]["analysis"]
    assert instance["runtimeStatus"] == "Completed"
    keys = [c["key"] for c in calls_of(view)]
    assert len(keys) == len(set(keys))  # no call entry twice
    # One recorded entry per call the orchestration scheduled, and the output counts them once.
    assert len(events(instance, "TaskScheduled", "investigation_call")) == len(keys)
    assert instance["output"]["tool_calls"] == len(keys)
    # The calls recorded before the stop are still there, unchanged.
    assert {c["key"]: c["args"] for c in calls_of(before)}.items() <= {
        c["key"]: c["args"] for c in calls_of(view)
    }.items()
    # The calls the crash interrupted ran again on the new host (at least once), and were recorded once.
    assert len(mcp.calls) > calls_at_stop
    assert len(mcp.calls) >= len(keys)


# ---- 3. retries -------------------------------------------------------------------------------------------


class Flaky:
    """An investigation started on a host whose DEVHOST_FAIL_ACTIVITY fails the first plan attempts."""

    def __init__(self, api: Investigations, inv: str, mcp: ScenarioServer) -> None:
        self.api, self.inv, self.mcp = api, inv, mcp


@pytest.fixture(scope="module")
def flaky(start_host) -> Iterator[dict[int, Flaky]]:
    """Two hosts, the first plan failing 2 and 3 times; both investigations run at once (the retry timers of
    the policy, 2 s, 4 s and the SDK's last 8 s, are the bulk of the time)."""
    with (
        serve_scenario(SCENARIO, required_headers={"Authorization": MCP_SECRET}) as mcp2,
        serve_scenario(SCENARIO, required_headers={"Authorization": MCP_SECRET}) as mcp3,
    ):
        runs = {}
        for failures, mcp in ((2, mcp2), (3, mcp3)):
            api = Investigations(start_host(host_env(mcp, DEVHOST_FAIL_ACTIVITY=f"investigation_plan:{failures}")))
            runs[failures] = Flaky(api, api.start(SCENARIO["alert"]), mcp)
        yield runs


def test_an_activity_failing_twice_is_retried_and_the_investigation_completes(flaky: dict[int, Flaky]) -> None:
    api, inv = flaky[2].api, flaky[2].inv
    view = api.settle(inv)
    instance = api.instance(inv)
    assert view["status"] == "completed", view
    assert view["report"]["analysis"]
    assert instance["runtimeStatus"] == "Completed"
    plans = events(instance, "TaskScheduled", "investigation_plan")
    failed = events(instance, "TaskFailed")
    # The first plan: two injected failures, each followed by a retry timer, then a third attempt that ran.
    assert len(failed) == 2
    assert all("DEVHOST_FAIL_ACTIVITY" in e["Reason"] for e in failed)
    assert len({e["TaskScheduledId"] for e in failed}) == 2  # two attempts, each its own scheduled task
    assert len(events(instance, "TimerCreated")) == len(events(instance, "TimerFired")) == 2
    assert len(plans) >= 3
    order = [e["EventType"] for e in instance["historyEvents"] if e["EventType"] in ("TaskFailed", "TimerFired")]
    assert order == ["TaskFailed", "TimerFired", "TaskFailed", "TimerFired"]
    assert len(flaky[2].mcp.calls) == len(calls_of(view)) > 0  # the calls ran once the plan went through


def test_an_activity_failing_three_times_fails_the_investigation_with_a_safe_message(flaky: dict[int, Flaky]) -> None:
    api, inv = flaky[3].api, flaky[3].inv
    view = api.settle(inv)
    instance = api.instance(inv)
    assert len(flaky[3].mcp.calls) == 0  # no plan, no call
    assert view["status"] == "failed", view
    assert view["error"] == FAILED_MESSAGE
    assert view["report"] is None
    assert instance["runtimeStatus"] == "Failed"
    assert len(events(instance, "TaskFailed")) == 3
    # The SDK waits one more retry interval after the last attempt before it gives up (DTFx's replay rule).
    assert len(events(instance, "TimerFired")) == 3
    assert len(events(instance, "TaskScheduled", "investigation_failed")) == 1  # the record was marked failed
    assert not events(instance, "TaskScheduled", "investigation_report")
    shown = json.dumps(view)
    assert "DEVHOST_FAIL_ACTIVITY" not in shown
    assert "Traceback" not in shown


# ---- 4. cancel --------------------------------------------------------------------------------------------


def test_a_cancelled_investigation_stops_and_makes_no_more_calls(start_host) -> None:
    delay = 1.0
    with serve_scenario(SCENARIO, delay_s=delay, required_headers={"Authorization": MCP_SECRET}) as mcp:
        host = start_host(host_env(mcp))
        api = Investigations(host)

        # A finished investigation cannot be cancelled.
        done = api.start(SCENARIO["alert"])
        assert api.settle(done)["status"] == "completed"
        r = api.cancel(done)
        assert r.status_code == 409, r.text

        received_before = len(mcp.calls)
        inv = api.start(SCENARIO["alert"])
        api.wait(inv, lambda b: b["status"] == "running" and len(mcp.calls) > received_before, timeout=60)
        r = api.cancel(inv)
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "cancelled"
        # The cancel settles: the instance is terminated and the calls in flight have been answered.
        api.wait_instance(inv, lambda s: s["runtimeStatus"] == "Terminated")
        deadline = time.monotonic() + 30
        while mcp.in_flight() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mcp.in_flight() == 0
        settled = len(mcp.calls)
        # Long enough for a running investigation to plan and call again (a plan, then calls of `delay` s).
        time.sleep(4 * delay)
        assert len(mcp.calls) == settled, [c.tool for c in mcp.calls[settled:]]
        view = api.get(inv)
        again = api.cancel(inv)
        instance = api.instance(inv)
    assert view["status"] == "cancelled", view
    assert view["report"] is None
    assert again.status_code == 200, again.text
    assert again.json()["status"] == "cancelled"
    assert instance["runtimeStatus"] == "Terminated"
    assert not events(instance, "TaskScheduled", "investigation_report")


# ---- 5 and 6. limits with the LLM path, history size, secrets ------------------------------------------

# Alerts carry a case marker the fake LLM reads back from the prompt: `durability-case <case> <id>`.
_CASE = re.compile(r"durability-case (\S+) (\w+)")
_FINAL_MARK = "writing the final report"
SLOW_REPORT_S = 3.0
_BIG_OUTPUT = "".join(
    f'{i:06d} level=info msg="request served" path=/api/items status=200 ms=12\n' for i in range(1400)
)
assert 98_000 < len(_BIG_OUTPUT) < 110_000


class Planner:
    """The fake LLM's brain: per case, how many new calls each plan asks for (never `done`)."""

    def __init__(self) -> None:
        self.plans: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        prompt = "\n".join(str(m.get("content") or "") for m in request.messages)
        found = _CASE.search(prompt)
        if found is None:
            return Reply(status=500, error_body={"error": {"message": "no case marker in the prompt"}})
        case, ident = found.groups()
        if _FINAL_MARK in prompt:
            return text(
                json.dumps(
                    {
                        "root_cause": "unknown: the tools did not show it",
                        "evidence": [],
                        "impact": "unknown",
                        "remediation": ["look further"],
                        "prevention": [],
                        "confidence": "low",
                        "analysis": f"No cause found for case {case}.",
                    }
                ),
                # The report of case `slow-report` takes a while: long enough to cancel the investigation then.
                delay_seconds=SLOW_REPORT_S if case == "slow-report" else 0.0,
            )
        with self.lock:
            k = self.plans[ident] = self.plans.get(ident, 0) + 1
        kind, _, count = case.partition(":")
        if kind == "slow-report":
            one = [{"tool": "pods_get", "arguments": {"name": "a-pod", "namespace": "default"}, "reason": "look"}]
            return plan(one, done=True, analysis="enough")
        if kind == "repeat":
            calls = [{"tool": "pods_get", "arguments": {"name": "same-pod", "namespace": "default"}, "reason": "again"}]
        else:
            tool = "pods_log" if kind == "big" else "pods_get"
            calls = [
                {"tool": tool, "arguments": {"name": f"pod-{k}-{j}", "namespace": "default"}, "reason": "one more"}
                for j in range(int(count))
            ]
        return plan(calls, done=False, analysis=f"iteration {k}: still looking")


def case_alert(case: str) -> dict[str, Any]:
    return {
        "title": f"durability-case {case} {uuid.uuid4().hex[:8]}",
        "description": "A test alert whose planner never says done.",
        "severity": "warning",
        "labels": {"alertname": "DurabilityCase", "namespace": "default"},
        "source": "prometheus",
    }


BIG_SCENARIO = {
    "id": "durability-big",
    "alert": {},
    # Any pods_log call answers 100 KB; pods_get of an unknown pod answers the server's not-found error.
    "tool_responses": [{"tool": "pods_log", "match": {}, "output": _BIG_OUTPUT}],
}


class LlmRig:
    def __init__(self, api: Investigations, llm: FakeLlm, mcp: ScenarioServer, hub: str) -> None:
        self.api, self.llm, self.mcp, self.hub = api, llm, mcp, hub


@pytest.fixture(scope="module")
def rig(start_host) -> Iterator[LlmRig]:
    with (
        fake_llm(responder=Planner()) as llm,
        serve_scenario(BIG_SCENARIO, required_headers={"Authorization": MCP_SECRET}) as mcp,
    ):
        host = start_host(
            host_env(
                mcp,
                FIREBREAK_LLM_ENDPOINT=llm.base_url,
                FIREBREAK_LLM_MODEL="gpt-test",
                OPENAI_API_KEY=LLM_KEY,
            )
        )
        yield LlmRig(Investigations(host), llm, mcp, host.env["FIREBREAK_TASK_HUB"])


@pytest.mark.parametrize(
    ("per_plan", "iterations", "calls", "stop"),
    [
        (3, 5, 15, "tool call limit (15)"),  # both limits reached together: 5 iterations of 3 calls
        (6, 3, 15, "tool call limit (15)"),  # 6 + 6 + 3: the last plan cut to the calls left
        (2, 5, 10, "iteration limit (5)"),
    ],
)
def test_a_never_stopping_llm_is_cut_by_the_limits(rig: LlmRig, per_plan, iterations, calls, stop) -> None:
    alert = case_alert(f"new:{per_plan}")
    inv = rig.api.start(alert)
    view = rig.api.wait(inv)
    assert view["status"] == "completed", view
    assert view["path"] == "llm", view["path_reason"]
    assert len(view["iterations"]) == iterations
    assert len(calls_of(view)) == calls
    assert view["report"]["stopped_because"] == stop
    mine = [r for r in rig.llm.requests if alert["title"] in json.dumps(r.body)]
    plans = [r for r in mine if _FINAL_MARK not in json.dumps(r.body)]
    assert len(plans) == iterations  # the model was not asked again once a limit was reached


def test_repeated_identical_calls_stop_the_loop(rig: LlmRig) -> None:
    inv = rig.api.start(case_alert("repeat"))
    view = rig.api.wait(inv)
    assert view["status"] == "completed", view
    assert view["report"]["stopped_because"].startswith("repeated calls")
    assert len(calls_of(view)) == 1
    assert len(view["iterations"]) == 1


def test_fifteen_outputs_of_100_kb_keep_the_history_small_and_no_secret_is_written(rig: LlmRig, app_env) -> None:
    inv = rig.api.start(case_alert("big:5"))
    view = rig.api.settle(inv)
    assert view["status"] == "completed", view
    calls = calls_of(view)
    assert len(calls) == 15
    assert all(c["output_bytes"] == len(_BIG_OUTPUT) and c["output_in_blob"] for c in calls)

    instance = rig.api.instance(inv)
    history_bytes = len(json.dumps(instance["historyEvents"]).encode())
    status_bytes = len(json.dumps(instance).encode())
    stored = stored_instance(app_env, rig.hub, inv)
    stored_bytes = len(stored.to_json().encode())
    print(
        f"history of 15 x {len(_BIG_OUTPUT)} B outputs: {history_bytes} B of history events "
        f"({len(instance['historyEvents'])} events), {status_bytes} B status with history, "
        f"{stored_bytes} B stored instance"
    )
    assert history_bytes < HISTORY_LIMIT
    assert stored_bytes < HISTORY_LIMIT
    # This LLM-path run (three fan-outs of five calls) replays deterministically too.
    assert nondeterminism(orchestrator_handle(), stored) == []

    # The secrets were used (the server refuses calls without its header, the model got the key) ...
    assert all(h.get("authorization") == MCP_SECRET for h in rig.mcp.requests)
    assert any(r.headers.get("authorization") == f"Bearer {LLM_KEY}" for r in rig.llm.requests)
    # ... and written nowhere: not in the history, custom status, input or output, nor in the record.
    record = raw_record(app_env, rig.api.workspace, inv)
    for where, text_ in (
        ("durable status and history", json.dumps(instance)),
        ("stored instance", stored.to_json()),
        ("record", json.dumps(record)),
        ("API view", json.dumps(view)),
    ):
        for secret in (MCP_SECRET, MCP_SECRET.removeprefix("Bearer "), LLM_KEY):
            assert secret not in text_, where


def test_a_cancel_during_the_report_is_not_overwritten_by_the_report(rig: LlmRig) -> None:
    alert = case_alert("slow-report")
    inv = rig.api.start(alert)

    def asked_for_report() -> bool:
        return any(alert["title"] in json.dumps(r.body) and _FINAL_MARK in json.dumps(r.body) for r in rig.llm.requests)

    rig.api.wait(inv, lambda _b: asked_for_report(), timeout=60)
    r = rig.api.cancel(inv)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "cancelled"
    # The report activity was already running: it ends once the model answers, and records the model's
    # tokens (plan + report: 2 x 120), but not a report nor a status over the cancel.
    view = rig.api.wait(inv, lambda b: b["token_usage"]["total"] >= 240, timeout=60, after_end=True)
    assert view["token_usage"]["total"] == 240
    assert view["status"] == "cancelled", view
    assert view["report"] is None
