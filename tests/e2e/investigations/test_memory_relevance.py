"""Debug memory's fix is attached to an investigation's report only when it fits the evidence (issue #26, item 6).

Scenario 02: a CrashLoopBackOff caused by an init container whose command is the typo `wge`. Debug memory holds
an earlier crash loop that was an OOM kill; it matches the alert's words (a crashing pod in `default`), so
debug memory recommends its fix. The report keeps it in `debug_memory` with the reason it was not attached, and
offers neither the fix nor record_outcome. With an incident about the same typo in memory, that fix is attached.
Everything real: an offline host, the scenario's MCP server on 127.0.0.1, debug memory through the tools API.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from tests.support import scenarios
from tests.support.investigations import investigate
from tests.support.scenario_mcp_server import serve_scenario

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32"}
SCENARIO = scenarios.load(scenarios.FIXTURES / "02_crashloop_backoff.json")
ENV = {"runtime": "kubernetes", "namespace": "default", "source": "kubernetes_api_server"}

OOM_INCIDENT = {
    "title": "Crashing pod api-gateway in namespace default: CrashLoopBackOff after OOMKilled",
    "error_signature": "Last State: Terminated, Reason: OOMKilled",
    "summary": "The gateway's container ran out of memory under load and was killed by the kernel.",
    "steps": ["Raise the container's memory limit from 256Mi to 512Mi in the deployment", "Roll out the deployment"],
    "worked": True,
    "tags": ["kubernetes", "memory"],
    "env": ENV,
}
TYPO_INCIDENT = {
    "title": "Crashing pod in namespace default: init container command wge not found",
    "error_signature": 'exec: "wge": executable file not found in $PATH',
    "summary": "The init container's command was misspelt (wge), so the container could not start.",
    "steps": ["Fix the typo in the init container's command: wget instead of wge", "Re-create the pod"],
    "worked": True,
    "tags": ["kubernetes", "typo"],
    "env": ENV,
}


@pytest.fixture(scope="module")
def host(start_host) -> Iterator[HostProcess]:
    with serve_scenario(SCENARIO) as mcp:
        yield start_host(
            {**LOCAL, "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}])}
        )


def tool(host: HostProcess, name: str, args: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    r = httpx.post(f"{host.base_url}/api/tools/{name}", json=args, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def workspace() -> dict[str, str]:
    return {"x-dev-workspace": f"ws-memfit-{uuid.uuid4().hex[:8]}"}


def test_an_unrelated_oom_fix_is_recommended_but_not_attached_to_a_typo(host: HostProcess) -> None:
    mine = workspace()
    oom = tool(host, "add_incident", OOM_INCIDENT, mine)
    body = investigate(host, SCENARIO["alert"], mine)
    assert body["status"] == "completed", body
    report = body["report"]
    # The investigation found the typo ...
    assert "wge" in report["root_cause"]
    assert scenarios.score(report["analysis"], SCENARIO) == pytest.approx(1.0)
    # ... debug memory recommended the OOM fix from the alert's words ...
    memory = report["debug_memory"]
    assert memory["solution_id"] == oom["solution_id"]
    # ... and the report does not attach it, saying why.
    assert memory["attached"] is False
    assert memory["attach_reason"].startswith("not attached")
    assert "evidence" in memory["attach_reason"]
    assert "**Debug memory:**" not in report["analysis"]
    assert oom["solution_id"] not in report["analysis"]
    assert "512Mi" not in report["analysis"]
    assert [a["tool"] for a in report["next_actions"]] == ["add_incident"]
    assert "record_outcome" not in json.dumps(report["next_actions"])
    assert len(report["analysis"]) <= 2000


def test_a_fix_for_the_same_typo_is_attached(host: HostProcess) -> None:
    mine = workspace()
    typo = tool(host, "add_incident", TYPO_INCIDENT, mine)
    body = investigate(host, SCENARIO["alert"], mine)
    assert body["status"] == "completed", body
    report = body["report"]
    memory = report["debug_memory"]
    assert memory["solution_id"] == typo["solution_id"]
    assert memory["attached"] is True
    assert memory["attach_reason"].startswith("it shares what this investigation found")
    assert f"**Debug memory:** {typo['solution_id']}" in report["analysis"]
    assert "attached because" in report["analysis"]
    assert len(report["analysis"]) <= 2000
    outcome, incident = report["next_actions"]
    assert outcome["tool"] == "record_outcome"
    assert outcome["arguments"]["solution_id"] == typo["solution_id"]
    assert outcome["arguments"]["lookup_id"] == memory["lookup_id"]
    assert incident["tool"] == "add_incident"


def test_with_both_incidents_in_memory_the_report_never_attaches_the_oom_fix(host: HostProcess) -> None:
    mine = workspace()
    oom = tool(host, "add_incident", OOM_INCIDENT, mine)
    typo = tool(host, "add_incident", TYPO_INCIDENT, mine)
    body = investigate(host, SCENARIO["alert"], mine)
    assert body["status"] == "completed", body
    memory = body["report"]["debug_memory"]
    assert memory["solution_id"] in (oom["solution_id"], typo["solution_id"])
    # Whichever debug memory ranks first (the OOM incident, when this was written: it shares more of the alert's
    # words), the verdict follows the evidence.
    assert memory["attached"] is (memory["solution_id"] == typo["solution_id"])
    assert (oom["solution_id"] in body["report"]["analysis"]) is False


def test_the_investigations_debug_memory_says_whether_the_fix_was_attached(host: HostProcess) -> None:
    """The view shows debug memory twice: `debug_memory` (what memory recommended) and `report.debug_memory`
    (the same, judged). Once the report is written, a reader of either must not take the unrelated fix for the
    answer: MemoryHint.attached documents itself as "whether the report recommends the fix"."""
    mine = workspace()
    oom = tool(host, "add_incident", OOM_INCIDENT, mine)
    body = investigate(host, SCENARIO["alert"], mine)
    assert body["status"] == "completed", body
    assert body["report"]["debug_memory"]["attached"] is False
    assert body["debug_memory"]["solution_id"] == oom["solution_id"]
    assert body["debug_memory"].get("attached") is False, body["debug_memory"]
