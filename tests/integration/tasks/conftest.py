"""A task service over the session's Cosmos, with a clock the test sets."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from shared.identity.models import Principal
from shared.tasks.service import TaskService
from shared.tasks.store import TaskStore
from shared.tools.deps import Deps


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 23, 12, 0, tzinfo=UTC))
    step: timedelta = timedelta(0)

    def __call__(self) -> datetime:
        current = self.now
        self.now += self.step
        return current


def principal(workspace: str | None = None, user: str = "alice") -> Principal:
    return Principal(workspace_id=workspace or f"ws-{uuid.uuid4().hex[:8]}", user_id=user, source="dev")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(deps: Deps, clock: Clock) -> TaskService:
    return TaskService(TaskStore(deps.cosmos), clock)
