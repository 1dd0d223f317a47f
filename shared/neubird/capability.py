"""NeuBird: drive the NeuBird AI-SRE API. Today its settings and a reachability check for diagnostics;
the neubird_* tools, client and container come with issue #13."""

from __future__ import annotations

from pathlib import Path

from shared.neubird.settings import NeubirdSettings
from shared.tools.capability import Capability
from shared.tools.checks import Check, http_reachable
from shared.tools.deps import Deps


async def _reachable(deps: Deps) -> str:
    return await http_reachable(deps.settings.section(NeubirdSettings).base_url or "")


CAPABILITY = Capability(
    name="neubird",
    summary="NeuBird AI-SRE investigations (so far: settings and a reachability check; the tools come with issue #13).",
    settings=NeubirdSettings,
    checks=(
        Check(
            "neubird",
            "The configured NeuBird API answers HTTP (any status).",
            _reachable,
            applies=lambda s: s.section(NeubirdSettings).configured,
        ),
    ),
    readme=Path(__file__).with_name("README.md"),
)
