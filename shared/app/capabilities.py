"""The app's capabilities. Adding a capability = its folder under shared/ + one line here."""

from __future__ import annotations

from functools import lru_cache

from shared.chat.capability import CAPABILITY as chat
from shared.health.capability import CAPABILITY as health
from shared.identity.api_keys import API_KEYS_CONTAINER
from shared.investigations.capability import CAPABILITY as investigations
from shared.memory.capability import CAPABILITY as memory
from shared.neubird.capability import CAPABILITY as neubird
from shared.perf.capability import CAPABILITY as perf
from shared.runs.capability import CAPABILITY as runs
from shared.tasks.capability import CAPABILITY as tasks
from shared.tools.capability import Capability, Catalogue

# Identity sits below the capability kit (tools import it), so its one container is declared here.
identity = Capability(
    name="identity",
    summary="Who is calling: Entra ID tokens, App Service auth, workspace API keys, dev mode.",
    containers=(API_KEYS_CONTAINER,),
)

CAPABILITIES: tuple[Capability, ...] = (
    identity,
    runs,
    health,
    memory,
    perf,
    neubird,
    investigations,
    tasks,
    chat,
)


# The functions layer's own function names (its generic routes, the runs frame's activities): no capability
# may take one. Every other route is a capability's (`routes=`, shared/tools/routes.py).
# tests/unit/app/test_catalogue.py checks this list against what function_app.py indexes.
PLATFORM_FUNCTIONS: tuple[str, ...] = (
    "health",
    "tools_document",
    "tools_by_name",
    "mcp",
    "runs_claim",
    "runs_finish",
    "openapi_document",
    "protected_resource_metadata",
    "api_docs",
)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """Every capability's parts, collected once per process (imports each capability's code)."""
    return Catalogue(CAPABILITIES, PLATFORM_FUNCTIONS)
