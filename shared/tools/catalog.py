"""The capabilities whose tools the app serves: add a capability's toolset here, its tools appear everywhere."""

from __future__ import annotations

from functools import lru_cache

from shared.tools.registry import ToolRegistry


@lru_cache(maxsize=1)
def default_registry() -> ToolRegistry:
    from shared.health.tools import toolset as health
    from shared.memory.tools import toolset as memory
    from shared.perf.tools import toolset as perf
    from shared.runs.tools import toolset as runs

    return ToolRegistry([health, memory, perf, runs])
