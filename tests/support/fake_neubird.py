"""The fake NeuBird v1 API server (devhost/fake_neubird.py) for tests: `with FakeNeubird(...) as nb:`."""

from __future__ import annotations

from devhost.fake_neubird import (
    COMPLETED,
    IN_PROGRESS,
    IN_PROGRESS_PROMPT,
    NOT_STARTED,
    PROMPT_COMPLETED,
    PROMPT_ERROR,
    STOPPED,
    FakeNeubird,
)

__all__ = [
    "COMPLETED",
    "IN_PROGRESS",
    "IN_PROGRESS_PROMPT",
    "NOT_STARTED",
    "PROMPT_COMPLETED",
    "PROMPT_ERROR",
    "STOPPED",
    "FakeNeubird",
]
