"""Debug memory: incidents, the fixes tried and what worked where; ranked for the caller's environment."""

from __future__ import annotations

from pathlib import Path

from shared.memory.settings import MemorySettings
from shared.memory.store import MEMORY_CONTAINER
from shared.memory.tools import toolset
from shared.tools.capability import Capability

CAPABILITY = Capability(
    name="memory",
    summary="Debug memory: what fixed this failure before, ranked for an environment like yours; record what worked.",
    toolset=toolset,
    containers=(MEMORY_CONTAINER,),
    settings=MemorySettings,
    readme=Path(__file__).with_name("README.md"),
)
