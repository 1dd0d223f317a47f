"""The fake NeuBird server over real HTTP (httpx): auth, shapes, list filters, the SSE stream, faults, stats."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.support.fake_neubird import (
    COMPLETED,
    IN_PROGRESS,
    IN_PROGRESS_PROMPT,
    NOT_STARTED,
    PROMPT_COMPLETED,
    PROMPT_ERROR,
    STOPPED,
    FakeNeubird,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
LIST = "POST /v1/inference/session/list"


@pytest.fixture
def nb() -> Iterator[FakeNeubird]:
    # Short investigations: 600 nominal seconds at time_scale 0.0005 = 0.3 real seconds.
    with FakeNeubird(sessions=300, seed=11, now=NOW, investigation_seconds=600, time_scale=0.0005) as server:
        yield server


@pytest.fixture
def client(nb: FakeNeubird) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=nb.base_url, timeout=10) as c:
        token = c.post("/v1/user/login", json={"email": nb.email, "password": "demo"}).json()["access_token"]
        c.headers["Authorization"] = f"Bearer {token}"
        yield c


def rows(client: httpx.Client, nb: FakeNeubird, **body: Any) -> list[dict[str, Any]]:
    r = client.post("/v1/inference/session/list", json={"project_uuid": nb.project_uuid, **body})
    assert r.status_code == 200
    assert "total" not in r.json()
    result: list[dict[str, Any]] = r.json()["sessions"]
    return result


def prompt_body(nb: FakeNeubird, session_uuid: str, text: str = "Investigate alert X") -> dict[str, Any]:
    return {
        "request": {"client_identifier": "firebreak"},
        "action": "ACTION_NEXT",
        "session_uuid": session_uuid,
        "project_uuid": nb.project_uuid,
        "messages": [{"content": {"content_type": "CONTENT_TYPE_CHAT_PROMPT", "parts": [text]}}],
    }


def sse(lines: list[str]) -> list[tuple[str, str]]:
    """(event name, data) per event; comments come back as ("comment", text)."""
    out: list[tuple[str, str]] = []
    name = "message"
    for line in lines:
        if line.startswith(":"):
            out.append(("comment", line))
        elif line.startswith("event:"):
            name = line[len("event:") :].strip()
        elif line.startswith("data:"):
            out.append((name, line[len("data:") :].strip()))
        elif not line:
            name = "message"
    return out


def stream(client: httpx.Client, body: dict[str, Any]) -> list[tuple[str, str]]:
    with client.stream("POST", "/v1/inference/session", json=body) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        assert r.headers["transfer-encoding"] == "chunked"
        return sse(list(r.iter_lines()))


def messages(events: list[tuple[str, str]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, data in events:
        if name == "comment" or data in ("[DONE]", ":keepalive"):
            continue
        payload = json.loads(data)
        out.append((name, payload.get("result", payload)))
    return out


def new_incident(client: httpx.Client, nb: FakeNeubird, alert_id: str = "/aws/alerts/checkout-5xx-4411") -> str:
    r = client.post("/v1/inference/session:create", json={"project_uuid": nb.project_uuid, "alert_id": alert_id})
    assert r.json()["response"]["error_code"] == 0
    sid: str = r.json()["session_uuid"]
    return sid


def inspect(client: httpx.Client, nb: FakeNeubird, sid: str) -> dict[str, Any]:
    r = client.post("/v1/inference/session/inspect", json={"project_uuid": nb.project_uuid, "session_uuid": sid})
    assert r.status_code == 200
    result: dict[str, Any] = r.json()
    return result


# -- auth -----------------------------------------------------------------------------------------------------


def test_login_issues_a_jwt_shaped_token_with_exp_and_guards_every_route(nb: FakeNeubird) -> None:
    with httpx.Client(base_url=nb.base_url) as c:
        r = c.post("/v1/user/login", json={"email": nb.email, "password": "demo"})
        assert r.status_code == 200
        token = r.json()["access_token"]
        _header, payload, signature = token.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        assert claims["exp"] > claims["iat"]
        assert signature
        for method, path in [("GET", "/v1/user"), ("GET", "/v1/project"), ("POST", "/v1/inference/session/list")]:
            denied = c.request(method, path, json={})
            assert (denied.status_code, denied.text) == (401, "unauthorized")
            wrong = c.request(method, path, json={}, headers={"Authorization": "Bearer " + token + "x"})
            assert wrong.status_code == 401
        assert c.get("/v1/user", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert c.get("/v1/nowhere", headers={"Authorization": f"Bearer {token}"}).status_code == 404


def test_wrong_credentials_401_or_the_200_with_error_variant(nb: FakeNeubird) -> None:
    with httpx.Client(base_url=nb.base_url) as c:
        r = c.post("/v1/user/login", json={"email": nb.email, "password": "nope"})
        assert (r.status_code, r.json()) == (401, {"error": "invalid credentials"})
        nb.configure(login_failure_status=200)
        r = c.post("/v1/user/login", json={"email": nb.email, "password": "nope"})
        assert (r.status_code, r.json()) == (200, {"error": "invalid credentials"})
    assert nb.stats()["login_failures"] == 2
    assert nb.stats()["logins"] == 0


def test_token_expires_after_n_calls_after_its_lifetime_and_on_demand(nb: FakeNeubird, client: httpx.Client) -> None:
    nb.token_policy(max_calls=2)
    with httpx.Client(base_url=nb.base_url) as c:
        token = c.post("/v1/user/login", json={"email": nb.email, "password": "demo"}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert [c.get("/v1/user", headers=auth).status_code for _ in range(3)] == [200, 200, 401]
        nb.token_policy(lifetime_seconds=0)
        token = c.post("/v1/user/login", json={"email": nb.email, "password": "demo"}).json()["access_token"]
        assert c.get("/v1/user", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert client.get("/v1/user").status_code == 200  # issued before the policy changed
    nb.expire_tokens()
    assert client.get("/v1/user").status_code == 401


# -- user, projects -------------------------------------------------------------------------------------------


def test_user_and_projects(nb: FakeNeubird, client: httpx.Client) -> None:
    user = client.get("/v1/user").json()
    assert user["specs"][0]["org_uuid"] == nb.org_uuid
    specs = client.get("/v1/project").json()["specs"]
    assert {
        "uuid",
        "name",
        "ready",
        "description",
        "create_time",
        "update_time",
        "project_state",
        "sync_state",
        "training_state",
    } <= set(specs[0])
    assert any(p["name"] == "SystemGlobalProject" for p in specs)
    not_ready = [p for p in specs if not p["ready"]]
    assert not_ready
    assert all(p["project_state"] != "PROJECT_STATE_READY" for p in not_ready)
    assert specs[0]["uuid"] == nb.project_uuid


# -- session list ---------------------------------------------------------------------------------------------


def test_list_pages_newest_first_and_no_pagination_means_everything(nb: FakeNeubird, client: httpx.Client) -> None:
    everything = rows(client, nb)
    in_project = [s for s in nb.sessions.values() if s.project_uuid == nb.project_uuid]
    assert len(everything) == len(in_project)
    times = [r["create_time"] for r in everything]
    assert times == sorted(times, reverse=True)
    page2 = rows(client, nb, pagination={"start": 20, "limit": 20})
    assert page2 == everything[20:40]
    tail = rows(client, nb, pagination={"start": len(everything) - 3, "limit": 20})
    assert len(tail) == 3
    kinds = {r["session_type"] for r in everything}
    statuses = {r["investigation_status"] for r in everything}
    assert kinds == {"SESSION_TYPE_INCIDENT", "SESSION_TYPE_CHAT"}
    assert statuses == {NOT_STARTED, IN_PROGRESS, COMPLETED}
    incidents = [r for r in everything if r["session_type"] == "SESSION_TYPE_INCIDENT"]
    assert all({"id", "title", "priority", "status", "type"} <= set(r["incident_info"]) for r in incidents)
    assert any(r["incident_info"]["id"].startswith("/subscriptions/") for r in incidents)
    assert any(r["incident_info"]["id"].startswith("/aws/alerts/") for r in incidents)
    assert any("grouped_incidents" in r["incident_info"] for r in incidents)
    assert NOW - datetime.fromisoformat(everything[-1]["create_time"]) < timedelta(days=61)


def test_list_filters(nb: FakeNeubird, client: httpx.Client) -> None:
    not_started = [{"key": "investigation_status", "value": NOT_STARTED, "operator": "=="}]
    got = rows(client, nb, filters=not_started)
    assert got
    assert all(r["investigation_status"] == NOT_STARTED for r in got)
    # the older shape: one filter inside pagination (limit 0 = no limit)
    assert rows(client, nb, pagination={"start": 0, "limit": 0, "filter": not_started[0]}) == got
    chats = rows(client, nb, filters=[{"key": "session_type", "value": "SESSION_TYPE_CHAT", "operator": "=="}])
    assert chats
    assert all(r["session_type"] == "SESSION_TYPE_CHAT" for r in chats)
    titled = rows(client, nb, filters=[{"key": "incident_info.title", "value": "CRASHLOOP", "operator": "in"}])
    assert titled
    assert all("crashloop" in r["incident_info"]["title"].lower() for r in titled)
    both = rows(client, nb, filters=[*not_started, {"key": "incident_info.title", "value": "crash", "operator": "in"}])
    assert all(
        r["investigation_status"] == NOT_STARTED and "crash" in r["incident_info"]["title"].lower() for r in both
    )
    bad = client.post(
        "/v1/inference/session/list",
        json={"project_uuid": nb.project_uuid, "filters": [{"key": "colour", "value": "x", "operator": "=="}]},
    )
    assert bad.json()["response"]["error_code"] == 400


def test_date_only_bounds_cover_whole_days(nb: FakeNeubird, client: httpx.Client) -> None:
    early = nb.add_session(
        alert_id="/aws/alerts/a-1", status="not_started", created=datetime(2026, 12, 5, 0, 0, 1, tzinfo=UTC)
    )
    late = nb.add_session(
        alert_id="/aws/alerts/a-2", status="not_started", created=datetime(2026, 12, 5, 23, 59, 58, tzinfo=UTC)
    )
    after = nb.add_session(
        alert_id="/aws/alerts/a-3", status="not_started", created=datetime(2026, 12, 6, 0, 0, 0, tzinfo=UTC)
    )
    day = [
        {"key": "create_time", "value": "2026-12-05", "operator": "gte"},
        {"key": "create_time", "value": "2026-12-05", "operator": "lte"},
    ]
    assert [r["session_uuid"] for r in rows(client, nb, filters=day)] == [late, early]
    since = rows(client, nb, filters=[{"key": "create_time", "value": "2026-12-05T12:00:00Z", "operator": "gte"}])
    assert [r["session_uuid"] for r in since] == [after, late]


def test_invented_incident_id_filter_finds_an_added_session(nb: FakeNeubird, client: httpx.Client) -> None:
    alert = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.AlertsManagement/alerts/abc"
    sid = nb.add_session(alert_id=alert, title="Disk full on vm-7", answer="The **disk** is full.<br>Clean /var.")
    found = rows(client, nb, filters=[{"key": "incident_info.id", "value": alert, "operator": "=="}])
    assert [r["session_uuid"] for r in found] == [sid]
    cycle = inspect(client, nb, sid)["prompt_cycle"][0]
    assert cycle["status"] == PROMPT_COMPLETED
    assert cycle["final_answer"].startswith("The **disk** is full.<br>Clean /var.")


def test_unknown_project_and_session_answer_the_error_envelope(nb: FakeNeubird, client: httpx.Client) -> None:
    for path in ["/v1/inference/session/list", "/v1/inference/new_session", "/v1/inference/session:create"]:
        r = client.post(path, json={"project_uuid": "nope", "alert_id": "/aws/alerts/x"})
        assert r.status_code == 200
        assert r.json()["response"]["error_code"] == 404
        assert "does not exist" in r.json()["response"]["error_message"]
    r = client.post("/v1/inference/session/inspect", json={"project_uuid": nb.project_uuid, "session_uuid": "0" * 24})
    assert r.json()["response"]["error_message"] == "Session UUID not found"
    events = messages(stream(client, prompt_body(nb, "0" * 24)))
    assert len(events) == 1
    assert "does not exist" in events[0][1]["error"]


def test_seeded_state_is_deterministic_per_seed() -> None:
    with FakeNeubird(sessions=50, seed=3, now=NOW) as a, FakeNeubird(sessions=50, seed=3, now=NOW) as b:
        assert a.project_uuid == b.project_uuid
        first = [s.row(0.0) for s in a.sessions.values()]
        second = [s.row(0.0) for s in b.sessions.values()]
        assert first == second
    with FakeNeubird(sessions=50, seed=4, now=NOW) as c:
        assert c.project_uuid != a.project_uuid


# -- investigations -------------------------------------------------------------------------------------------


def test_alert_session_investigation_stream_then_inspect_summary_and_report(
    nb: FakeNeubird, client: httpx.Client
) -> None:
    sid = new_incident(client, nb)
    assert inspect(client, nb, sid)["session_info"]["investigation_status"] == NOT_STARTED
    raw = stream(client, prompt_body(nb, sid, "Investigate alert /aws/alerts/checkout-5xx-4411"))
    events = messages(raw)
    names = {name for name, _ in events}
    assert {"message", "cot_start", "cot_delta", "cot_end"} <= names
    first = events[0][1]
    assert first["session_uuid"] == sid
    types = [p["message"]["content"]["content_type"] for _, p in events]
    for wanted in [
        "CONTENT_TYPE_PROGRESS_STATUS",
        "CONTENT_TYPE_SESSION_NAME",
        "CONTENT_TYPE_SOURCES",
        "CONTENT_TYPE_CHAIN_OF_THOUGHT",
        "CONTENT_TYPE_ERROR_MESSAGE",
        "CONTENT_TYPE_CHAT_RESPONSE",
        "CONTENT_TYPE_FOLLOW_UP_SUGGESTIONS",
    ]:
        assert wanted in types
    sources = next(p for _, p in events if p["message"]["content"]["content_type"] == "CONTENT_TYPE_SOURCES")
    assert all(isinstance(json.loads(part), dict) for part in sources["message"]["content"]["parts"])
    deltas = [
        p["message"]["metadata"]["is_delta"]
        for _, p in events
        if p["message"]["content"]["content_type"] == "CONTENT_TYPE_CHAT_RESPONSE"
    ]
    assert True in deltas
    assert "true" in deltas
    assert any(data.startswith('{"result"') for _, data in raw)
    last = events[-1][1]["message"]
    assert (last["end_turn"], last["status"]) == (True, "STATUS_DONE")
    assert last["content"]["parts"] == ["600000"]  # nominal milliseconds, whatever the time scale
    answer = "".join(
        p["message"]["content"]["parts"][0]
        for _, p in events
        if p["message"]["content"]["content_type"] == "CONTENT_TYPE_CHAT_RESPONSE"
    )

    view = inspect(client, nb, sid)
    assert view["session_info"]["investigation_status"] == COMPLETED
    cycle = view["prompt_cycle"][0]
    assert cycle["status"] == PROMPT_COMPLETED
    assert cycle["final_answer"] == answer.strip()
    assert "<br>" in cycle["final_answer"]
    assert cycle["chain_of_thoughts"]
    assert all(
        s["status"] == "CHAIN_OF_THOUGHT_STATUS_COMPLETED" and s["sources_involved"] and s["investigation"]
        for s in cycle["chain_of_thoughts"]
    )
    assert cycle["sources"]
    assert cycle["follow_up_suggestions"]
    assert cycle["request"]["messages"][0]["content"]["parts"] == ["Investigate alert /aws/alerts/checkout-5xx-4411"]

    summary = client.get(f"/v1/inference/session/summary/{sid}", params={"project_uuid": nb.project_uuid}).json()
    assert summary["session_summary"]["short_session_summary"]["question"].startswith("Investigate alert")
    assert summary["session_summary"]["time_saved"]["time_saved_minutes"] >= 0
    report = client.get(
        "/v1/inference/session_report",
        params=[("session_uuids", sid), ("session_uuids", "f" * 24), ("project_uuid", nb.project_uuid)],
    )
    assert isinstance(report.json(), list)
    assert len(report.json()) == 1
    assert {"create_time", "prompt", "session_link", "summary", "time_saved"} == set(report.json()[0])
    assert sid in report.json()[0]["session_link"]

    # a follow-up adds a second prompt cycle
    stream(client, prompt_body(nb, sid, "Which deploy changed the pool size?"))
    assert [c["status"] for c in inspect(client, nb, sid)["prompt_cycle"]] == [PROMPT_COMPLETED, PROMPT_COMPLETED]


def test_investigation_runs_on_after_the_stream_breaks(nb: FakeNeubird, client: httpx.Client) -> None:
    sid = new_incident(client, nb)
    nb.next_prompt(seconds=3600 * 24)  # a day at time_scale 0.0005 = 43 s: still running when inspected
    nb.break_stream_after(1)
    received: list[str] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream(
            "POST",
            "/v1/inference/session",
            json=prompt_body(nb, sid),
        ) as r,
    ):
        received.extend(r.iter_lines())
    assert len([line for line in received if line.startswith("data:")]) == 1
    view = inspect(client, nb, sid)
    assert view["session_info"]["investigation_status"] == IN_PROGRESS
    assert view["prompt_cycle"][0]["status"] == IN_PROGRESS_PROMPT
    assert view["prompt_cycle"][0]["final_answer"] == ""
    summary = client.get(f"/v1/inference/session/summary/{sid}", params={"project_uuid": nb.project_uuid}).json()
    assert "session_summary" not in summary

    other = new_incident(client, nb, "/aws/alerts/other-1")
    nb.break_stream_after(2)
    with (
        pytest.raises(httpx.RemoteProtocolError),
        client.stream(
            "POST",
            "/v1/inference/session",
            json=prompt_body(nb, other),
        ) as r,
    ):
        list(r.iter_lines())
    assert nb.wait_finished(other)
    assert inspect(client, nb, other)["prompt_cycle"][0]["status"] == PROMPT_COMPLETED


def test_failed_prompt_errors_in_stream_and_in_inspect(nb: FakeNeubird, client: httpx.Client) -> None:
    sid = new_incident(client, nb)
    nb.next_prompt(fail=True, session_uuid=sid)
    events = messages(stream(client, prompt_body(nb, sid)))
    assert "error" in events[-1][1]
    assert events[-1][1]["response"]["error_message"]
    view = inspect(client, nb, sid)
    assert view["prompt_cycle"][0]["status"] == PROMPT_ERROR
    assert view["session_info"]["investigation_status"] == STOPPED


def test_keepalives_done_marker_and_snapshot_mode(nb: FakeNeubird, client: httpx.Client) -> None:
    nb.configure(keepalive_seconds=0.005, done_marker=True, cot_mode="snapshot")
    sid = new_incident(client, nb)
    nb.next_prompt(seconds=2000)  # 1 real second
    raw = stream(client, prompt_body(nb, sid))
    assert ("comment", ": keepalive") in raw
    assert ("message", ":keepalive") in raw
    datas = [d for _, d in raw if d != ":keepalive" and not d.startswith(": ")]
    assert datas[-2] == "[DONE]"
    assert json.loads(datas[-1])["message"]["end_turn"] is True
    cots = [
        p for name, p in messages(raw) if p["message"]["content"]["content_type"] == "CONTENT_TYPE_CHAIN_OF_THOUGHT"
    ]
    assert {name for name, _ in messages(raw)} == {"message"}
    assert max(len(p["message"]["content"]["parts"]) for p in cots) >= 2  # every step so far, in each event


def test_seeded_completed_sessions_have_cycles_and_some_summaries(nb: FakeNeubird, client: httpx.Client) -> None:
    done = rows(client, nb, filters=[{"key": "investigation_status", "value": COMPLETED, "operator": "=="}])
    kinds = set()
    for row in done[:40]:
        cycle = inspect(client, nb, row["session_uuid"])["prompt_cycle"][0]
        assert cycle["status"] == PROMPT_COMPLETED
        assert cycle["final_answer"]
        summary = client.get(
            f"/v1/inference/session/summary/{row['session_uuid']}", params={"project_uuid": nb.project_uuid}
        ).json()
        body = summary.get("session_summary")
        kinds.add("none" if body is None else "scored" if "analysis_score" in body else "plain")
    assert kinds == {"none", "scored", "plain"}
    report = client.get("/v1/inference/incident_report").json()
    assert "response" not in report
    assert report["total_incidents"] > report["total_investigations"] > 0
    assert [p["priority"] for p in report["incident_type_reports"][0]["priority_reports"]] == ["P1", "P2", "P3", "P4"]


# -- faults and stats -----------------------------------------------------------------------------------------


def test_rate_limit_failures_and_exact_stats(nb: FakeNeubird, client: httpx.Client) -> None:
    nb.reset_stats()
    nb.rate_limit(2, retry_after_s=0)
    first = client.post("/v1/inference/session/list", json={"project_uuid": nb.project_uuid})
    assert (first.status_code, first.headers["retry-after"]) == (429, "0")
    assert client.get("/v1/user").status_code == 429
    assert client.get("/v1/user").status_code == 200
    nb.fail(2, status=503)
    failed = client.get("/v1/project")
    assert (failed.status_code, failed.headers["content-type"].split(";")[0]) == (503, "text/plain")
    assert client.get("/v1/project").status_code == 503
    assert client.get("/v1/project").status_code == 200
    stats = nb.stats()
    assert stats["routes"] == {LIST: 1, "GET /v1/user": 2, "GET /v1/project": 3}
    assert stats["total"] == 6
    assert stats["statuses"] == {429: 2, 200: 2, 503: 2}
    assert nb.calls(LIST) == 1
    nb.reset_stats()
    assert nb.stats()["total"] == 0


def test_control_routes_are_not_counted(nb: FakeNeubird, client: httpx.Client) -> None:
    nb.reset_stats()
    with httpx.Client(base_url=nb.url) as c:
        assert c.post("/_fake/rate_limit", json={"n": 1, "retry_after_s": 2}).json() == {"ok": True}
        assert client.get("/v1/user").status_code == 429
        added = c.post("/_fake/sessions", json={"alert_id": "/aws/alerts/manual-1", "status": "not_started"}).json()
        assert added["session_uuid"] in nb.sessions
        assert c.get("/_fake/stats").json()["total"] == 1
        assert c.post("/_fake/nothing", json={}).status_code == 404


def test_slow_delays_responses(nb: FakeNeubird, client: httpx.Client) -> None:
    nb.slow(5)
    with pytest.raises(httpx.ReadTimeout):
        client.get("/v1/user", timeout=0.2)
    nb.slow(0)
    assert client.get("/v1/user").status_code == 200


def test_cli_prints_the_base_url_and_env_lines() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost.fake_neubird", "--port", "0", "--sessions", "5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(5)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "http://127.0.0.1:" in head[0]
    assert "/api" in head[0]
    assert any(line.strip().startswith("NEUBIRD_BASE_URL=http://127.0.0.1:") for line in head)
    assert any(line.strip() == "NEUBIRD_EMAIL=demo@firebreak.local" for line in head)


def test_chat_session_takes_its_name_from_the_stream_and_a_planned_answer(
    nb: FakeNeubird, client: httpx.Client
) -> None:
    r = client.post(
        "/v1/inference/new_session",
        json={"project_uuid": nb.project_uuid, "organization_uuid": nb.org_uuid, "gendb_spec": {"uuid": "u-1"}},
    )
    sid = r.json()["session_uuid"]
    assert sid != "u-1"
    row = inspect(client, nb, sid)["session_info"]
    assert (row["session_type"], row["investigation_status"], row["name"]) == ("SESSION_TYPE_CHAT", NOT_STARTED, "")
    nb.next_prompt(answer="Planned **answer**.")
    events = messages(stream(client, prompt_body(nb, sid, "Why is checkout slow?")))
    named = [p for _, p in events if p["message"]["content"]["content_type"] == "CONTENT_TYPE_SESSION_NAME"]
    view = inspect(client, nb, sid)
    assert view["session_info"]["name"] == named[0]["message"]["content"]["parts"][0].strip()
    assert view["prompt_cycle"][0]["final_answer"].startswith("Planned **answer**.")


def test_delta_mode_steps_open_and_close_by_id_with_a_late_cot_end(nb: FakeNeubird, client: httpx.Client) -> None:
    sid = nb.add_session(
        alert_id="/aws/alerts/checkout-latency-1", title="HighLatencyForCustomerCheckout", status="not_started"
    )
    events = messages(stream(client, prompt_body(nb, sid)))
    order = [
        (name, json.loads(p["message"]["content"]["parts"][0])["id"])
        for name, p in events
        if name in ("cot_start", "cot_end")
    ]
    assert order.index(("cot_start", "cot-2")) < order.index(("cot_end", "cot-1"))
    assert {step for _, step in order} == {"cot-1", "cot-2", "cot-3"}
    assert sorted(order) == sorted(
        {(n, step) for n in ("cot_start", "cot_end") for step in ("cot-1", "cot-2", "cot-3")}
    )


# -- the strict dialect: offsets, refused filter keys, fields the contract does not name ----------------------


@pytest.fixture
def strict_nb() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=120, seed=11, now=NOW, strict=True, extra_fields=True) as server:
        yield server


@pytest.fixture
def strict_client(strict_nb: FakeNeubird) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=strict_nb.base_url, timeout=10) as c:
        token = c.post("/v1/user/login", json={"email": strict_nb.email, "password": "demo"}).json()["access_token"]
        c.headers["Authorization"] = f"Bearer {token}"
        yield c


def test_strict_refuses_an_undocumented_filter_key_with_http_400(
    strict_nb: FakeNeubird, strict_client: httpx.Client
) -> None:
    alert = "/aws/alerts/strict-1"
    strict_nb.add_session(alert_id=alert)
    refused = strict_client.post(
        "/v1/inference/session/list",
        json={
            "project_uuid": strict_nb.project_uuid,
            "filters": [{"key": "incident_info.id", "value": alert, "operator": "=="}],
        },
    )
    assert refused.status_code == 400
    assert "incident_info.id" in refused.json()["message"]
    # The documented keys still work.
    incidents = rows(
        strict_client, strict_nb, filters=[{"key": "session_type", "value": "SESSION_TYPE_INCIDENT", "operator": "=="}]
    )
    assert alert in {r["incident_info"]["id"] for r in incidents}


def test_strict_writes_rfc3339_times_with_offsets_and_fractions(
    strict_nb: FakeNeubird, strict_client: httpx.Client
) -> None:
    everything = rows(strict_client, strict_nb)
    texts = [r["create_time"] for r in everything]
    assert any(t.endswith("+05:30") for t in texts)
    assert any(t.endswith("-08:00") for t in texts)
    assert any(t.endswith("Z") for t in texts)
    assert any("." not in t for t in texts)  # whole seconds
    assert any(len(t.split(".")[-1].rstrip("Z")) >= 9 for t in texts if "." in t and t.endswith("Z"))  # nanoseconds
    instants = [datetime.fromisoformat(t) for t in texts]
    assert instants == sorted(instants, reverse=True)  # newest first, by time
    assert texts != sorted(texts, reverse=True)  # which the text order is not


def test_strict_date_filters_still_compare_instants(strict_nb: FakeNeubird, strict_client: httpx.Client) -> None:
    sid = strict_nb.add_session(alert_id="/aws/alerts/strict-2", created=datetime(2026, 12, 5, 23, 0, tzinfo=UTC))
    since = rows(
        strict_client, strict_nb, filters=[{"key": "create_time", "value": "2026-12-05T22:00:00Z", "operator": "gte"}]
    )
    assert [r["session_uuid"] for r in since] == [sid]


def test_extra_fields_add_what_the_contract_does_not_name(strict_nb: FakeNeubird, strict_client: httpx.Client) -> None:
    sid = strict_nb.add_session(alert_id="/aws/alerts/strict-3", status="completed")
    row = next(r for r in rows(strict_client, strict_nb) if r["session_uuid"] == sid)
    assert "x_unlisted" in row
    assert "x_unlisted" in row["incident_info"]
    cycle = inspect(strict_client, strict_nb, sid)["prompt_cycle"][0]
    assert all("x_unlisted" in s for s in cycle["sources"])
    assert "x_unlisted" in cycle["request"]
    summary = strict_client.get(
        f"/v1/inference/session/summary/{sid}", params={"project_uuid": strict_nb.project_uuid}
    ).json()
    assert "x_unlisted" in summary["session_summary"]
    assert "x_unlisted" in strict_client.get("/v1/inference/incident_report").json()


def test_strict_can_be_switched_on_a_running_server(nb: FakeNeubird, client: httpx.Client) -> None:
    by_id = [{"key": "incident_info.id", "value": "/aws/alerts/none", "operator": "=="}]
    assert (
        client.post("/v1/inference/session/list", json={"project_uuid": nb.project_uuid, "filters": by_id}).status_code
        == 200
    )
    nb.configure(strict=True)
    assert (
        client.post("/v1/inference/session/list", json={"project_uuid": nb.project_uuid, "filters": by_id}).status_code
        == 400
    )
    assert any(not r["create_time"].endswith("Z") for r in rows(client, nb))
