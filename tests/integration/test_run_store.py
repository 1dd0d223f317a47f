"""Run records and run secrets against the local Cosmos-API server: claims, owners, expiry, tampering."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from shared.identity.models import Principal
from shared.runs.models import RunDoc
from shared.runs.secrets import SecretBox, secret_box
from shared.runs.service import RunRefused, RunService
from shared.runs.settings import RunSettings
from shared.runs.store import RunStore
from shared.tools.deps import Deps

ORCH = "perf_collect_orchestrator"
T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


async def record(
    deps: Deps, *, plan: dict | None = None, secrets: dict | None = None, workspace: str = "ws-a", user: str = "alice"
) -> str:
    """A run record as RunService.start writes it (without starting an instance)."""
    store = await RunStore.open(deps.cosmos)
    run_id = uuid.uuid4().hex
    ref = None
    if secrets:
        ref = await store.put_secrets(
            run_id,
            workspace,
            secret_box(deps.settings).seal(secrets, workspace, run_id),
            (T0 + timedelta(hours=1)).isoformat(),
            3600,
        )
    await store.create(
        RunDoc(
            id=run_id,
            kind="perf_collect",
            orchestrator=ORCH,
            workspace_id=workspace,
            user_id=user,
            created_at=T0.isoformat(),
            updated_at=T0.isoformat(),
            plan=plan or {"n": 1},
            secrets_ref=ref,
        )
    )
    return run_id


def P(workspace: str, user: str) -> Principal:
    return Principal(workspace_id=workspace, user_id=user, source="dev")


def accept(plan: dict) -> dict:
    return plan


async def test_a_record_is_claimed_once_and_only_by_its_orchestrator(deps: Deps) -> None:
    runs = RunService.from_deps(deps)
    with pytest.raises(RunRefused, match="not started by the app"):
        await runs.claim(uuid.uuid4().hex, ORCH, accept)
    run_id = await record(deps)
    with pytest.raises(RunRefused, match="belongs to"):
        await runs.claim(run_id, "diagnostics_orchestrator", accept)
    claimed = await runs.claim(run_id, ORCH, accept)
    assert claimed == {"plan": {"n": 1}, "correlation_id": None}
    with pytest.raises(RunRefused, match="already claimed"):
        await runs.claim(run_id, ORCH, accept)
    assert (await runs.running(run_id, ORCH)).state == "running"


async def test_a_plan_that_fails_revalidation_fails_the_run_and_is_not_claimed(deps: Deps) -> None:
    from shared.perf.collect.plan import validate_stored_plan

    runs = RunService.from_deps(deps)
    run_id = await record(deps, plan={"probe": {"sample_count": 10_000}})
    with pytest.raises(RunRefused, match="re-validation"):
        await runs.claim(run_id, ORCH, validate_stored_plan)
    loaded = await (await RunStore.open(deps.cosmos)).load(run_id)
    assert loaded is not None
    doc, _ = loaded
    assert doc.state == "failed"
    assert not doc.claimed
    with pytest.raises(RunRefused):
        await runs.running(run_id, ORCH)


async def test_status_and_cancel_answer_the_owner_only(deps: Deps) -> None:
    from shared.core.errors import Conflict, NotFound

    runs = RunService.from_deps(deps)
    run_id = await record(deps, secrets={"headers": {"x-api-key": "SECRET-1"}})
    owner, other_ws, other_user = P("ws-a", "alice"), P("ws-b", "alice"), P("ws-a", "bob")
    assert (await runs.status(owner, run_id)).state == "pending"
    for who in (other_ws, other_user):
        with pytest.raises(NotFound) as theirs:
            await runs.status(who, run_id)
        with pytest.raises(NotFound):
            await runs.cancel(who, run_id)
        assert theirs.value.details == {"run_id": run_id}
    cancelled = await runs.cancel(owner, run_id, "test")
    assert cancelled.state == "cancelled"
    assert cancelled.error is not None
    assert "test" in cancelled.error
    assert (await runs.cancel(owner, run_id)).state == "cancelled"  # again: same answer
    store = await RunStore.open(deps.cosmos)
    assert await store.get_secrets(store.secrets_id(run_id)) is None  # cancelling drops the secrets
    # A finish arriving after the cancel does not overwrite it.
    await runs.finish(run_id, {"x": 1})
    assert (await runs.status(owner, run_id)).state == "cancelled"

    done = await record(deps)
    await runs.claim(done, ORCH, accept)
    await runs.finish(done, {"bundle_id": "b"})
    status = await runs.status(owner, done)
    assert status.state == "completed"
    assert status.output == {"bundle_id": "b"}
    with pytest.raises(Conflict):
        await runs.cancel(owner, done)


async def test_secrets_open_for_their_run_only_and_expire(deps: Deps) -> None:
    clock = Clock()
    runs = RunService(deps.cosmos, deps.settings, clock)
    secret = {"headers": {"authorization": "Bearer SECRET-2"}}
    run_id = await record(deps, secrets=secret)
    loaded = await (await RunStore.open(deps.cosmos)).load(run_id)
    assert loaded is not None
    doc, _ = loaded
    assert await runs.open_secrets(doc) == secret

    # The sealed document copied onto another run (or another workspace) does not decrypt.
    store = await RunStore.open(deps.cosmos)
    assert doc.secrets_ref is not None
    sealed = await store.get_secrets(doc.secrets_ref)
    assert sealed is not None
    other = await record(deps)
    other_loaded = await store.load(other)
    assert other_loaded is not None
    other_doc = other_loaded[0]
    moved_ref = await store.put_secrets(
        other,
        "ws-a",
        {"alg": sealed["alg"], "nonce": sealed["nonce"], "ciphertext": sealed["ciphertext"]},
        (T0 + timedelta(hours=1)).isoformat(),
        3600,
    )
    with pytest.raises(RunRefused, match="do not decrypt"):
        await runs.open_secrets(other_doc.model_copy(update={"secrets_ref": moved_ref}))
    with pytest.raises(RunRefused):
        await runs.open_secrets(doc.model_copy(update={"workspace_id": "ws-b"}))

    # Expired: refused, and the document is removed (locally nothing else would remove it).
    clock.now = T0 + timedelta(hours=2)
    with pytest.raises(RunRefused, match="expired"):
        await runs.open_secrets(doc)
    assert await store.get_secrets(doc.secrets_ref) is None
    assert "SECRET-2" not in str(sealed)


def test_secret_box_needs_a_32_byte_key(settings) -> None:
    from shared.core.errors import NotConfigured

    for bad in (None, "", "bm90IDMyIGJ5dGVz", "***"):
        with pytest.raises(NotConfigured, match="FIREBREAK_SECRETS_KEY"):
            secret_box(settings.with_section(RunSettings(secrets_key=bad)))
    box = secret_box(settings)
    assert isinstance(box, SecretBox)
    with pytest.raises(ValueError, match="do not decrypt"):
        box.open({**box.seal({"a": 1}, "ws", "r1"), "nonce": "AAAAAAAAAAAAAAAA"}, "ws", "r1")


async def test_a_cancel_reason_is_kept_without_secrets(deps: Deps) -> None:
    runs = RunService.from_deps(deps)
    run_id = await record(deps)
    cancelled = await runs.cancel(P("ws-a", "alice"), run_id, "wrong target, used Bearer abc.def.ghi")
    assert cancelled.state == "cancelled"
    assert cancelled.error is not None
    assert "wrong target" in cancelled.error
    assert "abc.def.ghi" not in cancelled.error
