"""The NeuBird tools' caches against the fake NeuBird and the real Cosmos-API server (found by benchmarks/neubird).

Each test builds its own Deps (fresh process state: no token) and caller, so no test sees another's caches.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.identity.models import Principal
from shared.neubird.connection import runtime
from shared.neubird.store import NEUBIRD_CONTAINER
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext, invoke
from tests.support.fake_neubird import FakeNeubird

LOCAL = {"FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1"}
INSPECT = "POST /v1/inference/session/inspect"


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=40, seed=5, investigation_seconds=20, time_scale=0.01, keepalive_seconds=0.2) as nb:
        yield nb


@pytest.fixture
async def nb_deps(app_env: dict[str, str], fake: FakeNeubird) -> AsyncIterator[Deps]:
    deps = build_deps(load_settings({**app_env, **fake.env(), **LOCAL}))
    yield deps
    await deps.aclose()


async def call(deps: Deps, who: Principal, name: str, args: dict[str, Any]) -> dict[str, Any]:
    tool = deps.tools.get(name) if deps.tools else None
    assert tool is not None
    outcome = await invoke(tool, args, ToolContext(principal=who, deps=deps, correlation_id=uuid.uuid4().hex))
    assert outcome.output is not None, outcome.text
    return outcome.output


def caller() -> Principal:
    return Principal(workspace_id=f"ws-nbc-{uuid.uuid4().hex[:6]}", user_id="u1", source="dev")


async def test_a_follow_up_replaces_the_cached_completed_session(nb_deps: Deps, fake: FakeNeubird) -> None:
    who = caller()
    sid = fake.add_session(alert_id="/aws/alerts/cache-1", status="completed")
    first = await call(nb_deps, who, "neubird_inspect_session", {"session_uuid": sid})
    assert len(first["prompt_cycles"]) == 1
    fake.reset_stats()
    assert (await call(nb_deps, who, "neubird_inspect_session", {"session_uuid": sid}))["prompt_cycles"] == first[
        "prompt_cycles"
    ]
    assert fake.calls(INSPECT) == 0  # completed: served from the cache

    follow = await call(
        nb_deps,
        who,
        "neubird_continue_investigation",
        {"session_uuid": sid, "follow_up_prompt": "What changed before it started?", "wait_for_completion": True},
    )
    assert follow["status"] == "completed", follow
    after = await call(nb_deps, who, "neubird_inspect_session", {"session_uuid": sid})
    assert len(after["prompt_cycles"]) == 2, after["prompt_cycles"]
    sent = fake.session_view(sid)["prompt_cycle"][-1]["request"]
    assert after["prompt_cycles"][-1]["request"] == {"messages": sent["messages"]}  # the spec's request shape


async def test_a_follow_up_not_waited_for_is_not_hidden_by_the_cache(nb_deps: Deps, fake: FakeNeubird) -> None:
    who = caller()
    sid = fake.add_session(alert_id="/aws/alerts/cache-2", status="completed")
    await call(nb_deps, who, "neubird_inspect_session", {"session_uuid": sid})  # cached as completed
    fake.next_prompt(600)  # a long one: still running when the tool answers
    started = await call(
        nb_deps, who, "neubird_continue_investigation", {"session_uuid": sid, "follow_up_prompt": "Dig deeper"}
    )
    assert started["status"] == "in_progress", started
    after = await call(nb_deps, who, "neubird_inspect_session", {"session_uuid": sid})
    assert len(after["prompt_cycles"]) == 2, after["prompt_cycles"]
    assert after["prompt_cycles"][-1]["status"] != "PROMPT_STATUS_COMPLETED"


async def test_tool_calls_share_one_connection_pool_until_deps_close(
    app_env: dict[str, str], fake: FakeNeubird
) -> None:
    deps = build_deps(load_settings({**app_env, **fake.env(), **LOCAL}))
    who = caller()
    await call(deps, who, "neubird_list_sessions", {"limit": 5})
    pools = dict(runtime(deps)._pools)
    assert list(pools) == ["NEUBIRD_BASE_URL"]
    pool = pools["NEUBIRD_BASE_URL"]
    await call(deps, who, "neubird_get_incident_report", {})
    assert runtime(deps)._pools == {"NEUBIRD_BASE_URL": pool}  # the second call reused the pool (and connection)
    assert not pool[1].is_closed
    await deps.aclose()
    assert pool[1].is_closed


async def test_configure_defaults_saves_the_fetched_project_list_once(nb_deps: Deps, fake: FakeNeubird) -> None:
    who = caller()
    container = await nb_deps.cosmos.container(NEUBIRD_CONTAINER.name)
    before = container.requests
    out = await call(nb_deps, who, "neubird_configure_defaults", {"default_project_uuid": "staging"})
    assert out["current_defaults"]["project_uuid"] == fake.projects[1]["uuid"], out
    assert container.requests - before == 2  # the state read, one write (defaults and the fetched list)
    fake.reset_stats()
    listed = await call(nb_deps, who, "neubird_list_projects", {})
    assert listed["cached"] is True
    assert fake.calls("GET /v1/project") == 0


async def test_an_unknown_project_still_caches_the_list_it_fetched(nb_deps: Deps, fake: FakeNeubird) -> None:
    who = caller()
    tool = nb_deps.tools.get("neubird_configure_defaults") if nb_deps.tools else None
    assert tool is not None
    ctx = ToolContext(principal=who, deps=nb_deps, correlation_id=uuid.uuid4().hex)
    refused = await invoke(tool, {"default_project_uuid": "no such project"}, ctx)
    assert refused.error is not None
    assert refused.error.code == "NOT_FOUND"
    fake.reset_stats()
    assert (await call(nb_deps, who, "neubird_list_projects", {}))["cached"] is True
    assert fake.calls("GET /v1/project") == 0
