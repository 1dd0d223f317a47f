"""The LLM is one platform dependency: `deps.llm()` creates one client per process on first use, investigation
activities and chat turns all ask through it (one kept-alive connection at the model server), no activity
closes it, and `deps.aclose()` does. Against the OpenAI-compatible test server on 127.0.0.1 and the session's
stores."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from shared.app.wiring import build_deps, load_settings
from shared.chat.models import ExchangeResult
from shared.chat.routes import SendMessageBody, routes
from shared.core.settings import Settings
from shared.identity.models import Principal
from shared.investigations.activities import payloads
from shared.investigations.activities.report import write_report
from shared.investigations.alerts import Alert
from shared.investigations.loop import Limits
from shared.investigations.models import InvestigationRecord
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, new_record_fields
from shared.tools.deps import Deps
from shared.tools.routes import RouteCall
from tests.support.fake_llm import FakeLlm, fake_llm, text
from tests.support.investigations import Run

LLM_KEY = "sk-llm-dependency-4e7a"


@pytest.fixture
def model() -> Iterator[FakeLlm]:
    # Any answer will do: an unparsable report is repaired once, then the rules' report is kept.
    with fake_llm(default=text("no JSON here")) as server:
        yield server


@pytest.fixture
async def llm_deps(app_env: dict[str, str], model: FakeLlm) -> AsyncIterator[Deps]:
    env = {
        **app_env,
        "FIREBREAK_LLM_ENDPOINT": model.base_url,
        "FIREBREAK_LLM_MODEL": "fake-model",
        "FIREBREAK_LLM_API_KEY": LLM_KEY,
    }
    deps = build_deps(load_settings(env))
    yield deps
    await deps.aclose()


async def _run_on_the_llm_path(deps: Deps) -> Run:
    """A stored investigation whose planning took the model's path, ready for its report activity."""
    alert = Alert(name="KubePodCrashLooping", title="KubePodCrashLooping", source="test", starts_at=datetime.now(UTC))
    ws, run_id = f"ws-llm-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    plan = payloads.StoredPlan(
        alert=alert,
        limits=Limits.of(deps.settings.section(InvestigationSettings)),
        started_by=payloads.StartedBy(user_id="alice", source="dev"),
    ).model_dump(mode="json")
    store = InvestigationStore(deps.cosmos, deps.blobs)
    await store.create(InvestigationRecord(**new_record_fields(ws, "alice", run_id), alert=alert, path="llm"))
    return Run(run_id, ws, "alice", plan)


async def test_two_investigation_activities_ask_through_the_one_client_and_leave_it_open(
    llm_deps: Deps, model: FakeLlm
) -> None:
    client = llm_deps.llm()
    assert client is not None
    for _ in range(2):
        await write_report(
            await _run_on_the_llm_path(llm_deps),
            payloads.ReportRequest(stop="test", iterations=0, calls=0, data_points=0),
            llm_deps,
        )
        assert llm_deps.llm() is client
        assert not client.sdk.is_closed()
    assert len(model.requests) == 4  # each report: the answer and its one repair
    # One pooled connection served both activities: no client was made (and closed) per activity.
    assert len({r.peer_port for r in model.requests}) == 1
    assert {r.headers["authorization"] for r in model.requests} == {f"Bearer {LLM_KEY}"}


async def test_two_chat_turns_ask_through_the_one_client(llm_deps: Deps, model: FakeLlm) -> None:
    route = next(r for r in routes.routes if r.name == "chat_send_message")
    principal = Principal(workspace_id=f"ws-chat-{uuid.uuid4().hex[:8]}", user_id="alice", source="dev")
    chat_id = None
    for message in ("what tasks do I have?", "and which are due today?"):
        body = SendMessageBody(chat_id=chat_id, message=message)
        answer = await route.handler(RouteCall(principal, llm_deps, "corr-llm", None, body))
        assert isinstance(answer, ExchangeResult)
        chat_id = answer.chat_id
        assert answer.mode == "llm"
    assert len(model.requests) == 2
    assert len({r.peer_port for r in model.requests}) == 1


async def test_deps_close_the_client_once_and_a_deps_without_a_model_has_none(llm_deps: Deps) -> None:
    client = llm_deps.llm()
    assert client is not None
    # A copy of the Deps (tests tune the clock this way) shares the provider, hence the client.
    assert dataclasses.replace(llm_deps, clock=lambda: datetime.now(UTC)).llm() is client
    await llm_deps.aclose()
    assert client.sdk.is_closed()
    unconfigured = dataclasses.replace(llm_deps, settings=Settings.from_env({}))
    assert unconfigured.llm() is None
