"""`GET /api/tasks` filters for the phone's list screen, on the local host and the Cosmos emulator: words (`q`),
status, category, priority, a due range in the user's zone (`due_from`/`due_to`, dates or timestamps, `tz` or
the stored zone), each alone and together, and hostile values refused naming the field.

The tasks are due at instants chosen so that the local day differs from the UTC day in Pacific/Auckland
(UTC+13 in December): 2026-12-01T23:30Z is 2 December there.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from devhost.processes import HostProcess

AUCKLAND = "Pacific/Auckland"


def _req(host: HostProcess, method: str, path: str, headers: dict[str, str], body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{host.base_url}{path}", json=body, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def seeded(host: HostProcess) -> tuple[dict[str, str], dict[str, str]]:
    """A fresh user (stored zone UTC) with three tasks: title -> id."""
    me = {"x-dev-workspace": f"ws-taskfilters-{uuid.uuid4().hex[:8]}", "x-dev-user": "pat"}
    tasks = {
        # 2026-12-01 23:30 UTC = 2026-12-02 12:30 in Auckland
        "Buy milk": {"category": "Groceries", "priority": "low", "due_date": "2026-12-01T23:30:00Z"},
        # a date alone in the stored zone (UTC): due by 2026-12-02 23:59:59 UTC = 2026-12-03 in Auckland
        "Dentist appointment": {"category": "Health", "priority": "high", "due_date": "2026-12-02"},
        "Write report": {"description": "Quarterly MILK numbers", "category": "Work", "priority": "medium"},
    }
    ids: dict[str, str] = {}
    for title, fields in tasks.items():
        made = _req(host, "POST", "/api/tasks", me, {"title": title, **fields})
        assert made.status_code == 201, made.text
        ids[title] = made.json()["task"]["id"]
    done = _req(host, "PATCH", f"/api/tasks/{ids['Write report']}", me, {"status": "completed"})
    assert done.status_code == 200, done.text
    return me, ids


def _titles(host: HostProcess, me: dict[str, str], **query: str) -> list[str]:
    r = _req(host, "GET", f"/api/tasks?{urlencode(query)}", me)
    assert r.status_code == 200, r.text
    return [t["title"] for t in r.json()["tasks"]]


def test_q_matches_title_and_description_ignoring_case(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    assert sorted(_titles(host, me, q="milk")) == ["Buy milk", "Write report"]
    assert sorted(_titles(host, me, q="MILK")) == ["Buy milk", "Write report"]
    assert _titles(host, me, q="dentist") == ["Dentist appointment"]
    assert _titles(host, me, q="nothing like this") == []


def test_status_category_and_priority_filter(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    assert _titles(host, me, status="completed") == ["Write report"]
    assert sorted(_titles(host, me, status="pending")) == ["Buy milk", "Dentist appointment"]
    assert _titles(host, me, category="health") == ["Dentist appointment"]
    assert _titles(host, me, priority="low") == ["Buy milk"]


def test_due_dates_are_whole_days_in_the_given_zone(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    # In UTC, milk is due on the 1st and the dentist on the 2nd; in Auckland on the 2nd and the 3rd.
    assert _titles(host, me, due_from="2026-12-01", due_to="2026-12-01") == ["Buy milk"]
    assert _titles(host, me, due_from="2026-12-02", due_to="2026-12-02") == ["Dentist appointment"]
    assert _titles(host, me, due_from="2026-12-02", due_to="2026-12-02", tz=AUCKLAND) == ["Buy milk"]
    assert _titles(host, me, due_from="2026-12-03", due_to="2026-12-03", tz=AUCKLAND) == ["Dentist appointment"]


def test_a_due_range_is_earliest_first_and_names_its_window(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    r = _req(host, "GET", f"/api/tasks?{urlencode({'due_from': '2026-12-02', 'tz': AUCKLAND})}", me)
    assert r.status_code == 200, r.text
    assert [t["title"] for t in r.json()["tasks"]] == ["Buy milk", "Dentist appointment"]
    # Auckland's 2 December starts at 11:00 UTC on the 1st; the end is open.
    assert r.json()["window"]["start"] == "2026-12-01T11:00:00.000000Z"
    assert r.json()["tz"] == AUCKLAND


def test_timestamps_bound_the_range_and_a_task_without_due_date_is_left_out(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    assert _titles(host, me, due_from="2026-12-01T23:00:00Z", due_to="2026-12-01T23:59:00Z") == ["Buy milk"]
    # A naive timestamp is read in tz: 10:00-13:00 on 2 December in Auckland holds 23:30 UTC on the 1st.
    assert _titles(host, me, due_from="2026-12-02T10:00:00", due_to="2026-12-02T13:00:00", tz=AUCKLAND) == ["Buy milk"]
    assert "Write report" not in _titles(host, me, due_to="2030-01-01", status="all")


def test_the_stored_zone_is_used_without_tz(host: HostProcess) -> None:
    me = {"x-dev-workspace": f"ws-taskfilters-{uuid.uuid4().hex[:8]}", "x-dev-user": "quinn"}
    assert _req(host, "POST", "/api/tools/set_task_preferences", me, {"tz": AUCKLAND}).status_code == 200
    made = _req(host, "POST", "/api/tasks", me, {"title": "Late call", "due_date": "2026-12-01T23:30:00Z"})
    assert made.status_code == 201, made.text
    assert _titles(host, me, due_from="2026-12-02", due_to="2026-12-02") == ["Late call"]
    assert _titles(host, me, due_from="2026-12-01", due_to="2026-12-01") == []
    assert _titles(host, me, due_from="2026-12-01", due_to="2026-12-01", tz="UTC") == ["Late call"]


def test_filters_combine(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    assert _titles(host, me, q="milk", status="pending", due_to="2026-12-31") == ["Buy milk"]
    assert _titles(host, me, q="milk", priority="high") == []
    assert _titles(host, me, category="groceries", due_from="2026-12-02", tz=AUCKLAND) == ["Buy milk"]
    assert _titles(host, me, category="groceries", due_from="2026-12-02") == []


def test_paging_continues_the_same_filters(host: HostProcess, seeded: Any) -> None:
    me, _ = seeded
    first = _req(host, "GET", f"/api/tasks?{urlencode({'q': 'milk', 'limit': '1'})}", me).json()
    assert first["count"] == 1
    assert first["continuation"]
    rest = _req(host, "GET", f"/api/tasks?{urlencode({'q': 'milk', 'continuation': first['continuation']})}", me)
    assert [t["title"] for t in first["tasks"] + rest.json()["tasks"]] == ["Write report", "Buy milk"]
    # A continuation is the filters' own: another filter set refuses it.
    other = _req(host, "GET", f"/api/tasks?{urlencode({'q': 'report', 'continuation': first['continuation']})}", me)
    assert other.status_code == 400, other.text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"q": "x" * 201}, "q"),
        ({"q": "milk\x00"}, "q"),
        ({"q": "y" * 4_000}, "q"),
        ({"due_from": "next blursday"}, "due_from"),
        ({"due_to": "2026-13-45"}, "due_to"),
        ({"due_from": "2026-12-05", "due_to": "2026-12-01"}, "due_to"),
        ({"due_from": "9" * 41}, "due_from"),
        ({"status": "done"}, "status"),
        ({"priority": "urgent"}, "priority"),
        ({"tz": "Mars/Olympus_Mons"}, "tz"),
        ({"tz": "../../etc/passwd", "due_from": "2026-12-01"}, "tz"),
    ],
)
def test_hostile_values_are_a_400_naming_the_field(
    host: HostProcess, seeded: Any, query: dict[str, str], field: str
) -> None:
    me, _ = seeded
    r = _req(host, "GET", f"/api/tasks?{urlencode(query)}", me)
    assert r.status_code == 400, r.text[:300]
    err = r.json()["error"]
    assert err["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in err["details"]["errors"]] == [field]
