"""Per-caller state stays with its caller: workspace B never sees A's instance, defaults or cached investigations;
switch_instance normalises as the spec's table says and refuses hosts outside the allow-list, changing nothing."""

from __future__ import annotations

import pytest

from devhost.processes import HostProcess
from tests.e2e.neubird.conftest import call, error_of, ws
from tests.support.fake_neubird import FakeNeubird

INSPECT = "POST /v1/inference/session/inspect"

# The spec's normalisation table (rows whose host the default allow-list *.app.neubird.ai accepts).
NORMALISED = [
    ("prod", "https://prod.app.neubird.ai/api"),
    ("customerA", "https://customerA.app.neubird.ai/api"),
    ("staging", "https://staging.app.neubird.ai/api"),
    ("prod.app.neubird.ai", "https://prod.app.neubird.ai/api"),
    ("https://prod.app.neubird.ai", "https://prod.app.neubird.ai/api"),
    ("https://prod.app.neubird.ai/api", "https://prod.app.neubird.ai/api"),
]
REFUSED = [
    "http://169.254.169.254",
    "https://169.254.169.254/api",
    "169.254.169.254",
    "prod.app.neubird.ai.evil.com",
    "https://prod.app.neubird.ai.evil.com/api",
    "custom.domain.com/api",  # a row of the spec's table, but not an allowed host here
    "https://user:pw@prod.app.neubird.ai/api",
    "https://prod.app.neubird.ai@evil.com/api",
    "https://prod.app.neubird.ai:8443/api",
    "https://evil.com#.app.neubird.ai",
    "https://evil.com\\@prod.app.neubird.ai",
    "http://prod.app.neubird.ai/api",
    "http://127.0.0.1:1/api",
    "http://localhost/api",
    "file:///etc/passwd",
    "app.neubird.ai",
]


async def _instance(host: HostProcess, workspace: str) -> str:
    shown = await call(host, "neubird_configure_defaults", {}, workspace)
    return str(shown["current_defaults"]["instance"])


@pytest.mark.parametrize(("given", "expected"), NORMALISED)
async def test_switch_instance_normalises_like_the_spec(
    nb_host: HostProcess, fake: FakeNeubird, given: str, expected: str
) -> None:
    mine = ws("switch")
    out = await call(nb_host, "neubird_switch_instance", {"base_url": given}, mine)
    assert out["success"] is True
    assert out["input_provided"] == given
    assert out["normalized_url"] == out["new_url"] == expected
    assert out["previous_url"] == fake.base_url
    assert "no longer use the old instance" in out["message"]
    assert await _instance(nb_host, mine) == expected


@pytest.mark.parametrize("given", REFUSED)
async def test_switch_instance_refuses_hosts_outside_the_allow_list(
    nb_host: HostProcess, fake: FakeNeubird, given: str
) -> None:
    mine = ws("refuse")
    err = error_of(await call(nb_host, "neubird_switch_instance", {"base_url": given}, mine))
    assert err["code"] == "VALIDATION_ERROR", err
    assert err["details"].get("current_url", fake.base_url) == fake.base_url
    assert await _instance(nb_host, mine) == fake.base_url  # nothing changed
    listed = await call(nb_host, "neubird_list_sessions", {"limit": 1}, mine)
    # Still talking to the configured instance (a row other workspaces created here is counted, not shown).
    assert listed["count"] + listed["hidden_count"] == 1


async def test_workspace_b_never_sees_a_instance_or_defaults(nb_host: HostProcess, fake: FakeNeubird) -> None:
    a, b = ws("iso-a"), ws("iso-b")
    staging = fake.projects[1]["uuid"]
    set_a = await call(
        nb_host,
        "neubird_configure_defaults",
        {"default_project_uuid": staging, "default_timeframe": "last 6 hours", "enable_streaming": True},
        a,
    )
    assert set_a["current_defaults"]["project_uuid"] == staging
    shown_b = await call(nb_host, "neubird_configure_defaults", {}, b)
    assert shown_b["current_defaults"]["project_uuid"] == fake.project_uuid
    assert shown_b["current_defaults"]["timeframe"] == "last 1 hour"
    assert shown_b["current_defaults"]["streaming_enabled"] is False  # the spec's default, not A's choice
    assert (await call(nb_host, "neubird_list_sessions", {"limit": 2}, a))["project_uuid"] == staging
    assert (await call(nb_host, "neubird_list_sessions", {"limit": 2}, b))["project_uuid"] == fake.project_uuid
    # Another user of workspace A has their own state too.
    assert (await call(nb_host, "neubird_configure_defaults", {}, a, user="bob"))["current_defaults"][
        "project_uuid"
    ] == fake.project_uuid

    switched = await call(nb_host, "neubird_switch_instance", {"base_url": "prod"}, a)
    assert switched["new_url"] == "https://prod.app.neubird.ai/api"
    after_a = await call(nb_host, "neubird_configure_defaults", {}, a)
    assert after_a["current_defaults"]["instance"] == "https://prod.app.neubird.ai/api"
    assert after_a["current_defaults"]["project_uuid"] == fake.project_uuid  # A's default project was cleared
    assert await _instance(nb_host, b) == fake.base_url
    listed_b = await call(nb_host, "neubird_list_sessions", {"limit": 2}, b)
    assert listed_b["count"] + listed_b["hidden_count"] == 2

    # An allowed instance that cannot be reached (.invalid never resolves; nb_host allows *.neubird.invalid):
    # the refusal names what A can change, A's switch, not the deployment's NEUBIRD_BASE_URL.
    await call(nb_host, "neubird_switch_instance", {"base_url": "https://acme.neubird.invalid/api"}, a)
    err = error_of(await call(nb_host, "neubird_list_projects", {}, a))
    assert err["details"]["errors"][0]["field"] == "neubird_switch_instance.base_url", err
    assert "acme.neubird.invalid" in err["message"]
    assert await _instance(nb_host, b) == fake.base_url

    back = await call(nb_host, "neubird_switch_instance", {"base_url": fake.base_url}, a)
    assert back["new_url"] == fake.base_url
    listed_a = await call(nb_host, "neubird_list_sessions", {"limit": 2}, a)
    assert listed_a["count"] + listed_a["hidden_count"] == 2


async def test_a_completed_cache_entry_never_answers_for_another_workspace(
    nb_host: HostProcess, fake: FakeNeubird
) -> None:
    a, b = ws("cache-a"), ws("cache-b")
    sid = fake.add_session(title="Disk full on db-7", status="completed", answer="The WAL volume filled up.")
    first = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, a)
    assert first["prompt_cycles"][0]["final_answer"].startswith("The WAL volume")
    calls = fake.calls(INSPECT)
    again = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, a)
    assert again["prompt_cycles"] == first["prompt_cycles"]
    assert fake.calls(INSPECT) == calls  # A's second read came from A's cache
    from_b = await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, b)
    assert fake.calls(INSPECT) == calls + 1  # B asked NeuBird: A's entry did not answer
    assert from_b["prompt_cycles"] == first["prompt_cycles"]
    # B's follow-up adds a cycle; B sees it at once. A's entry is A's own (reused up to an hour by design).
    await call(
        nb_host,
        "neubird_continue_investigation",
        {"session_uuid": sid, "follow_up_prompt": "Which tables grew the most?", "wait_for_completion": True},
        b,
    )
    assert len((await call(nb_host, "neubird_inspect_session", {"session_uuid": sid}, b))["prompt_cycles"]) == 2
