"""project_uuid is optional and auto-detected for status, inspect, summaries and follow-ups (the spec): a session
is found in whichever project holds it, the caller's default first, and remembered per caller. A new
investigation without a project follows a documented rule, or says which projects there are."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.tools.deps import Deps
from tests.integration.neubird_harness import LOCAL, answer, caller
from tests.support.fake_neubird import FakeNeubird

INSPECT = "POST /v1/inference/session/inspect"
PROMPT = "Why did checkout latency double after the deploy?"


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=30, seed=29, investigation_seconds=20, time_scale=0.01, strict=True) as nb:
        yield nb


def staging(fake: FakeNeubird) -> str:
    uuid: str = fake.projects[1]["uuid"]
    assert fake.projects[1]["name"] == "Staging"
    return uuid


def _env(fake: FakeNeubird, *, default: bool) -> dict[str, str]:
    return {k: v for k, v in fake.env().items() if default or k != "NEUBIRD_DEFAULT_PROJECT_UUID"}


@pytest.fixture
async def no_default(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    """Two ready projects (Production, Staging) and no default anywhere."""
    built = build_deps(load_settings({**app_env, **_env(fake, default=False), **LOCAL}))
    yield built
    await built.aclose()


@pytest.fixture
async def default_production(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    """The deployment's default is Production."""
    built = build_deps(load_settings({**app_env, **_env(fake, default=True), **LOCAL}))
    yield built
    await built.aclose()


@pytest.fixture(params=["no_default", "default_production"])
async def either(request: pytest.FixtureRequest, app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    """Both of the above, one per test run."""
    built = build_deps(load_settings({**app_env, **_env(fake, default=request.param != "no_default"), **LOCAL}))
    yield built
    await built.aclose()


def _reads(session_uuid: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("neubird_get_investigation_status", {"session_uuid": session_uuid}),
        ("neubird_inspect_session", {"session_uuid": session_uuid}),
        ("neubird_get_session_summary", {"session_uuid": session_uuid}),
    ]


async def test_a_session_of_another_project_is_found_without_project_uuid(either: Deps, fake: FakeNeubird) -> None:
    deps = either
    sid = fake.add_session(alert_id="/aws/alerts/staging-disk-1", status="completed", project_uuid=staging(fake))
    who = caller()
    status = await answer(deps, who, "neubird_get_investigation_status", {"session_uuid": sid})
    assert status["status"] == "completed", status
    assert status["project_uuid"] == staging(fake)
    inspected = await answer(deps, who, "neubird_inspect_session", {"session_uuid": sid})
    assert inspected["project_uuid"] == staging(fake), inspected
    assert inspected["prompt_cycles"]
    summary = await answer(deps, who, "neubird_get_session_summary", {"session_uuid": sid})
    assert summary["session_uuid"] == sid, summary
    follow = await answer(
        deps,
        who,
        "neubird_continue_investigation",
        {"session_uuid": sid, "follow_up_prompt": "Which deploy changed the disk size?", "wait_for_completion": True},
    )
    assert follow["status"] == "completed", follow
    assert follow["project_uuid"] == staging(fake)
    assert len(fake.session_view(sid)["prompt_cycle"]) == 2  # the follow-up went to the session, in Staging


async def test_the_project_found_is_remembered_per_caller(default_production: Deps, fake: FakeNeubird) -> None:
    sid = fake.add_session(alert_id="/aws/alerts/staging-cpu-1", status="in_progress", project_uuid=staging(fake))
    alice, bob = caller("alice"), caller("bob")
    await answer(default_production, alice, "neubird_get_investigation_status", {"session_uuid": sid})
    fake.reset_stats()
    again = await answer(default_production, alice, "neubird_get_investigation_status", {"session_uuid": sid})
    assert again["project_uuid"] == staging(fake)
    assert fake.calls(INSPECT) == 1  # straight to Staging: no second look in Production
    fake.reset_stats()
    await answer(default_production, bob, "neubird_get_investigation_status", {"session_uuid": sid})
    assert fake.calls(INSPECT) == 2  # another caller does not share alice's memory: Production, then Staging


async def test_an_unknown_session_is_not_found_after_looking_everywhere(no_default: Deps, fake: FakeNeubird) -> None:
    for name, args in _reads("0123456789abcdef01234567"):
        out = await answer(no_default, caller(), name, args)
        assert out["error"]["code"] == "NOT_FOUND", (name, out)
        assert out["error"]["details"]["type"] == "investigation"
    fake.reset_stats()
    out = await answer(
        no_default, caller(), "neubird_continue_investigation", {"session_uuid": "0" * 24, "follow_up_prompt": "more"}
    )
    assert out["error"]["code"] == "NOT_FOUND", out
    assert fake.calls("POST /v1/inference/session") == 0  # no prompt is sent to a session nobody found


async def test_a_new_investigation_without_a_default_lists_the_projects(no_default: Deps, fake: FakeNeubird) -> None:
    out = await answer(no_default, caller(), "neubird_create_investigation", {"prompt": PROMPT})
    err = out["error"]
    assert err["code"] == "VALIDATION_ERROR", out
    listed = err["details"]["projects"]
    assert {"name": "Production", "uuid": fake.project_uuid} in listed
    assert {"name": "Staging", "uuid": staging(fake)} in listed
    assert all(set(p) == {"name", "uuid"} for p in listed)
    assert "Staging" in err["message"]
    assert fake.calls("POST /v1/inference/new_session") == 0


async def test_a_new_investigation_uses_the_default_and_remembers_its_project(
    default_production: Deps, fake: FakeNeubird
) -> None:
    who = caller()
    created = await answer(default_production, who, "neubird_create_investigation", {"prompt": PROMPT})
    assert created["project_uuid"] == fake.project_uuid, created
    fake.reset_stats()
    await answer(default_production, who, "neubird_get_investigation_status", {"session_uuid": created["session_uuid"]})
    assert fake.calls(INSPECT) == 1
