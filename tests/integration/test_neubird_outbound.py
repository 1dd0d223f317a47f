"""NeuBird's outbound calls use the NeuBird feature's allow-list: an entry for its host and port lets the tools reach
the fake NeuBird on 127.0.0.1; the same entry for another feature (MCP, runbooks, collect.run) does not."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.identity.models import Principal
from shared.tools.invoke import ToolContext, invoke
from tests.support.fake_neubird import FakeNeubird


@pytest.fixture
def fake() -> Iterator[FakeNeubird]:
    with FakeNeubird(sessions=3, seed=7) as nb:
        yield nb


async def list_projects(app_env: dict[str, str], fake: FakeNeubird, allow: dict[str, str]) -> tuple[bool, str]:
    env = {**app_env, **fake.env(), "FIREBREAK_OUTBOUND_ALLOW_HTTP": "true", "FIREBREAK_OUTBOUND_ALLOWED_HOSTS": ""}
    deps = build_deps(load_settings({**env, **allow}))
    try:
        tool = deps.tools.get("neubird_list_projects") if deps.tools else None
        assert tool is not None
        who = Principal(workspace_id=f"ws-nbo-{uuid.uuid4().hex[:6]}", user_id="u1", source="dev")
        outcome = await invoke(tool, {}, ToolContext(principal=who, deps=deps, correlation_id=uuid.uuid4().hex))
        return outcome.output is not None, outcome.text
    finally:
        await deps.aclose()


async def test_only_the_neubird_list_opens_neubirds_port(app_env: dict[str, str], fake: FakeNeubird) -> None:
    entry = f"127.0.0.1:{urlsplit(fake.base_url).port}"
    ok, text = await list_projects(app_env, fake, {"FIREBREAK_OUTBOUND_NEUBIRD_ALLOWED_HOSTS": entry})
    assert ok, text
    assert fake.calls("POST /v1/user/login") >= 1
    for other in ("MCP", "RUNBOOKS", "COLLECT"):
        fake.reset_stats()
        ok, text = await list_projects(app_env, fake, {f"FIREBREAK_OUTBOUND_{other}_ALLOWED_HOSTS": entry})
        assert not ok, other
        assert "non-public address" in text, text
        assert fake.calls("POST /v1/user/login") == 0  # refused before any connection
