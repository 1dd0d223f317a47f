"""Alert investigations: a Durable orchestration that investigates an alert like an SRE and writes the report."""

from __future__ import annotations

from pathlib import Path

from shared.investigations.orchestration import INVESTIGATE
from shared.investigations.routes import routes
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import INVESTIGATIONS_CONTAINER
from shared.investigations.tools import toolset
from shared.tools.capability import Capability
from shared.tools.checks import Check
from shared.tools.deps import Deps


async def _records_read(deps: Deps) -> str:
    # A point read of an id that never exists: the workspace-partitioned container answers.
    await (await deps.cosmos.container(INVESTIGATIONS_CONTAINER.name)).read("probe", "probe")
    return "the investigations container answers"


async def _mcp_configured(deps: Deps) -> str:
    mcp = deps.settings.section(InvestigationSettings).mcp(running_on_azure=deps.settings.running_on_azure)
    path = "LLM" if deps.settings.llm_configured else "rule-based"
    return f"{len(mcp.servers)} MCP server(s) configured; the {path} path plans the calls"


CAPABILITY = Capability(
    name="investigations",
    summary="Alert investigations: runbook, MCP tools, debug memory and up to 5 iterations of tool calls chosen by "
    "an LLM or by rules, ending in a report with the cause, quoted evidence and the fix.",
    toolset=toolset,
    routes=routes,
    settings=InvestigationSettings,
    containers=(INVESTIGATIONS_CONTAINER,),
    orchestrations=(INVESTIGATE,),
    checks=(
        Check(
            "investigations_records",
            "The investigation records (Cosmos investigations) answer a read.",
            _records_read,
            readiness=True,
        ),
        Check("investigations_setup", "Which MCP servers and which planning path investigations use.", _mcp_configured),
    ),
    readme=Path(__file__).with_name("README.md"),
)
