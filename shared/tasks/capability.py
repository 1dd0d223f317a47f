"""Tasks: a user's to-do list (per workspace and user), with date ranges in the user's time zone."""

from __future__ import annotations

from pathlib import Path

from shared.tasks.routes import routes
from shared.tasks.store import TASKS_CONTAINER
from shared.tasks.tools import toolset
from shared.tools.capability import Capability

CAPABILITY = Capability(
    name="tasks",
    summary="Tasks: create, list, search, summarise and (in two confirmed steps) bulk-delete a user's tasks.",
    toolset=toolset,
    routes=routes,
    containers=(TASKS_CONTAINER,),
    readme=Path(__file__).with_name("README.md"),
)
