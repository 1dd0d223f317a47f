"""Runs: Durable orchestrations recorded with their owner, shown and cancelled for that owner only."""

from __future__ import annotations

from pathlib import Path

from shared.runs.routes import routes
from shared.runs.settings import RunSettings
from shared.runs.store import RUNS_CONTAINER
from shared.runs.tools import toolset
from shared.tools.capability import Capability

CAPABILITY = Capability(
    name="runs",
    summary="Background runs (Durable orchestrations) with an owner: status and cancellation for that owner only.",
    toolset=toolset,
    routes=routes,
    settings=RunSettings,
    containers=(RUNS_CONTAINER,),
    readme=Path(__file__).with_name("README.md"),
)
