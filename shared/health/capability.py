"""Health: is the app working? health.check, whoami, readiness and the diagnostics orchestration."""

from __future__ import annotations

from pathlib import Path

from shared.health.checks import BLOB, COSMOS, LLM, PROBES_CONTAINER
from shared.health.diagnostics import DIAGNOSTICS
from shared.health.routes import routes
from shared.health.settings import HealthSettings
from shared.health.tools import toolset
from shared.tools.capability import Capability

CAPABILITY = Capability(
    name="health",
    summary="Is the app working: health.check, whoami, the anonymous readiness probe and POST /api/diagnostics.",
    toolset=toolset,
    routes=routes,
    settings=HealthSettings,
    containers=(PROBES_CONTAINER,),
    orchestrations=(DIAGNOSTICS,),
    checks=(COSMOS, BLOB, LLM),
    readme=Path(__file__).with_name("README.md"),
)
