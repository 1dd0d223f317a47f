"""A real investigation on the offline host (rule path, scenario MCP server answering over 32 KB per call), then
its calls' whole outputs and the workspace's metrics through every door: the REST routes, the per-tool HTTP
functions and MCP. Other workspaces see 404 (outputs) and nothing (metrics); bad pages are 400 envelopes."""

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
from tests.support.mcp_http import mcp_client
from tests.support.scenario_mcp_server import serve_scenario

ENVELOPE_KEYS = {"code", "message", "details", "recovery_suggestions", "correlation_id"}
PADDING = "".join(f"padding line {i:05d}: nothing to see here\n" for i in range(1_200))  # ~44 KB


def inflated(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario with every tool answer past the 32 KB inline limit (its own text first)."""
    responses = [{**r, "output": r["output"] + "\n" + PADDING} for r in scenario["tool_responses"]]
    return {**scenario, "tool_responses": responses}


SCENARIO = inflated(scenarios.load(next(f for f in scenarios.scenario_files() if f.name.startswith("01_"))))
ANSWERS = {r["output"] for r in SCENARIO["tool_responses"]}


@pytest.fixture(scope="module")
def host(start_host) -> Iterator[HostProcess]:
    with serve_scenario(SCENARIO) as mcp:
        yield start_host(
            {
                "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true",
                "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1/32",
                "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": json.dumps([{"name": "k8s", "url": mcp.url}]),
            }
        )


@pytest.fixture(scope="module")
def done(host: HostProcess) -> tuple[dict[str, str], dict[str, Any]]:
    """(the owner's headers, the completed investigation's view)."""
    owner = {"x-dev-workspace": f"ws-out-{uuid.uuid4().hex[:8]}", "x-dev-user": "alice"}
    view = investigate(host, SCENARIO["alert"], owner)
    assert view["status"] == "completed", view
    return owner, view


def get(host: HostProcess, path: str, headers: dict[str, str], **params: Any) -> httpx.Response:
    return httpx.get(f"{host.base_url}{path}", params=params, headers=headers, timeout=30)


def calls_of(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for it in view["iterations"] for c in it["calls"]]


def scrub(body: dict[str, Any], *ids: str) -> str:
    body["error"]["correlation_id"] = "c"
    text = json.dumps(body)
    for i in ids:
        text = text.replace(i, "ID")
    return text


def test_every_call_names_its_id_and_its_whole_output_reads_in_pages(
    host: HostProcess, done: tuple[dict[str, str], dict[str, Any]]
) -> None:
    owner, view = done
    calls = calls_of(view)
    assert calls
    assert all(c["call_id"] == c["key"] for c in calls)
    big = [c for c in calls if c["output_in_blob"]]
    assert big, calls  # the answers are over the inline limit
    for c in big:
        assert c["output_url"] == f"/api/investigations/{view['investigation_id']}/calls/{c['call_id']}/output"
        text, pages = "", 0
        offset: int | None = 0
        while offset is not None:
            r = get(host, c["output_url"], {**owner, "x-dev-user": "bob"}, offset=offset, limit=20_000)  # a colleague
            assert r.status_code == 200, r.text
            assert r.headers["Cache-Control"] == "no-store"
            page = r.json()
            assert (page["tool"], page["args"], page["call_id"]) == (c["tool"], c["args"], c["call_id"])
            text += page["text"]
            offset, pages = page["next_offset"], pages + 1
        assert text in ANSWERS  # the whole answer, as the MCP server gave it
        assert pages == -(-len(text) // 20_000)
        assert page["total_chars"] == len(text) == c["output_bytes"]


async def test_the_route_the_tool_function_and_mcp_answer_alike(
    host: HostProcess, done: tuple[dict[str, str], dict[str, Any]]
) -> None:
    owner, view = done
    first = calls_of(view)[0]
    inv, call_id = view["investigation_id"], first["call_id"]
    async with httpx.AsyncClient(base_url=host.base_url, headers=owner, timeout=30) as http:
        routed = (await http.get(first["output_url"], params={"offset": 5, "limit": 300})).json()
        posted = await http.post(
            "/api/tools/get_investigation_tool_output",
            json={"investigation_id": inv, "call_id": call_id, "offset": 5, "limit": 300},
        )
        metrics = (await http.get("/api/investigations/metrics")).json()
    assert posted.status_code == 200, posted.text
    assert posted.json() == routed
    assert (len(routed["text"]), routed["offset"], routed["next_offset"]) == (300, 5, 305)

    async with mcp_client(host, owner) as client:
        mcp_out = await client.call_tool(
            "get_investigation_tool_output", {"investigation_id": inv, "call_id": call_id, "offset": 5, "limit": 300}
        )
        mcp_metrics = await client.call_tool("get_investigation_metrics", {})
    assert not mcp_out.is_error
    assert not mcp_metrics.is_error
    assert mcp_out.structured_content == routed
    assert mcp_metrics.structured_content["totals"] == metrics["totals"]


def test_other_workspaces_unknown_calls_and_bad_pages(
    host: HostProcess, done: tuple[dict[str, str], dict[str, Any]]
) -> None:
    owner, view = done
    inv = view["investigation_id"]
    call_id = calls_of(view)[0]["call_id"]
    intruder = {"x-dev-workspace": f"ws-intruder-{uuid.uuid4().hex[:8]}"}
    unknown = uuid.uuid4().hex
    foreign = get(host, f"/api/investigations/{inv}/calls/{call_id}/output", intruder)
    missing = get(host, f"/api/investigations/{unknown}/calls/{call_id}/output", intruder)
    assert foreign.status_code == missing.status_code == 404
    assert scrub(foreign.json(), inv) == scrub(missing.json(), unknown)
    assert PADDING[:40] not in foreign.text

    no_call = get(host, f"/api/investigations/{inv}/calls/i9-c9/output", owner)
    assert no_call.status_code == 404
    assert no_call.json()["error"]["code"] == "NOT_FOUND"
    assert no_call.json()["error"]["details"] == {"investigation_id": inv, "call_id": "i9-c9"}

    path = f"/api/investigations/{inv}/calls/{call_id}/output"
    for params, field in (
        ({"offset": "-1"}, "offset"),
        ({"offset": "ten"}, "offset"),
        ({"limit": "0"}, "limit"),
        ({"limit": "100001"}, "limit"),
        ({"offset": "4000000"}, "offset"),  # past the end of this output
        ({"page": "2"}, "page"),  # not a parameter
    ):
        r = get(host, path, owner, **params)
        assert r.status_code == 400, (params, r.text)
        error = r.json()["error"]
        assert set(error) == ENVELOPE_KEYS
        assert error["code"] == "VALIDATION_ERROR"
        assert [e["field"] for e in error["details"]["errors"]] == [field], params


def test_metrics_count_the_callers_workspace_only(
    host: HostProcess, done: tuple[dict[str, str], dict[str, Any]]
) -> None:
    owner, view = done
    r = get(host, "/api/investigations/metrics", owner)  # a literal segment: not taken for an investigation id
    assert r.status_code == 200, r.text
    m = r.json()
    calls = calls_of(view)
    assert (m["investigations_read"], m["capped"]) == (1, False)
    (alert,) = m["alerts"]
    assert alert["alert_name"] == view["alert"]["name"]
    assert (alert["investigations"], alert["completed"], alert["completion_rate"]) == (1, 1, 1.0)
    assert alert["mean_iterations"] == len(view["iterations"])
    assert alert["mean_tool_calls"] == len(calls)
    assert sum(u["calls"] for u in alert["tool_usage"].values()) == len(calls)
    assert sum(u["errors"] for u in alert["tool_usage"].values()) == sum(c["is_error"] for c in calls)
    assert alert["durations_measured"] == 1
    assert alert["mean_duration_seconds"] > 0
    assert m["totals"]["investigations"] == 1

    stranger = get(host, "/api/investigations/metrics", {"x-dev-workspace": f"ws-none-{uuid.uuid4().hex[:8]}"})
    assert (stranger.json()["totals"]["investigations"], stranger.json()["alerts"]) == (0, [])
    later = get(host, "/api/investigations/metrics", owner, since="2999-01-01T00:00:00Z").json()
    assert later["totals"]["investigations"] == 0
    named = get(host, "/api/investigations/metrics", owner, alert_name=view["alert"]["name"]).json()
    assert named["totals"] == m["totals"]
    for params, field in (({"since": "yesterday-ish"}, "since"), ({"alert": "x"}, "alert")):
        bad = get(host, "/api/investigations/metrics", owner, **params)
        assert bad.status_code == 400, bad.text
        assert bad.json()["error"]["details"]["errors"][0]["field"] == field


def test_both_routes_are_in_the_openapi_document(host: HostProcess) -> None:
    doc = httpx.get(f"{host.base_url}/api/openapi.json", timeout=30).json()
    assert "get" in doc["paths"]["/api/investigations/metrics"]
    output = doc["paths"]["/api/investigations/{investigation_id}/calls/{call_id}/output"]["get"]
    assert {p["name"] for p in output["parameters"]} >= {"investigation_id", "call_id", "offset", "limit"}
    assert "404" in output["responses"]
