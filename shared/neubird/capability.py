"""NeuBird: the twelve neubird_* tools that drive NeuBird's AI-SRE API (investigations, sessions, reports)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from shared.neubird.connection import not_configured
from shared.neubird.orchestration import WAIT
from shared.neubird.ownership import SESSIONS_CONTAINER
from shared.neubird.settings import NeubirdSettings
from shared.neubird.store import NEUBIRD_CONTAINER
from shared.neubird.tools import toolset
from shared.tools.capability import Capability
from shared.tools.checks import Check, http_reachable
from shared.tools.deps import Deps


async def _reachable(deps: Deps) -> str:
    return await http_reachable(deps.settings.section(NeubirdSettings).base_url or "")


async def _setup(deps: Deps) -> str:
    settings = deps.settings.section(NeubirdSettings)
    if not settings.configured:
        return f"not configured: {not_configured(settings).message} The neubird_* tools answer NOT_CONFIGURED."
    host = urlsplit(settings.base_url or "").netloc
    return f"configured for {host}; neubird_switch_instance may use {', '.join(settings.host_patterns())}"


async def _state_read(deps: Deps) -> str:
    await (await deps.cosmos.container(NEUBIRD_CONTAINER.name)).read("probe", "probe")
    return "the neubird container answers"


CAPABILITY = Capability(
    name="neubird",
    summary="NeuBird AI-SRE: investigate alerts, custom investigations with natural-language timeframes, status, "
    "follow-ups, sessions, summaries and reports, through the twelve neubird_* tools.",
    toolset=toolset,
    settings=NeubirdSettings,
    containers=(NEUBIRD_CONTAINER, SESSIONS_CONTAINER),
    orchestrations=(WAIT,),
    checks=(
        Check("neubird_setup", "Whether NeuBird is configured, and for which instance.", _setup, setup=True),
        Check(
            "neubird_state",
            "The NeuBird callers' state (Cosmos neubird) answers a read.",
            _state_read,
            readiness=True,
        ),
        Check(
            "neubird",
            "The configured NeuBird API answers HTTP (any status).",
            _reachable,
            applies=lambda s: s.section(NeubirdSettings).configured,
        ),
    ),
    readme=Path(__file__).with_name("README.md"),
)
