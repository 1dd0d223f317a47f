"""What every investigation activity needs: its run, the settings, the store, the outbound guards, the model."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from shared.core.outbound import OutboundGuard
from shared.investigations import llm
from shared.investigations.settings import InvestigationSettings
from shared.investigations.store import InvestigationStore, workspace_segment
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps


@dataclass
class Runtime:
    deps: Deps
    settings: InvestigationSettings
    store: InvestigationStore
    # One guard per feature: an MCP server's allow-list entry must not open its host to runbook URLs.
    runbook_guard: OutboundGuard
    mcp_guard: OutboundGuard
    run: ActiveRun

    @property
    def ws(self) -> str:
        return self.run.workspace_id

    @property
    def id(self) -> str:
        return self.run.run_id

    def blob(self, name: str) -> str:
        # Quoted like the store's output blobs: a workspace id is one segment, never a path.
        return f"{workspace_segment(self.ws)}/investigations/{self.id}/{name}"


def runtime(run: ActiveRun, deps: Deps) -> Runtime:
    section = deps.settings.section(InvestigationSettings)
    store = InvestigationStore(deps.cosmos, deps.blobs, inline_output_bytes=section.inline_output_bytes)
    guards = OutboundGuard(deps.settings, "runbooks"), OutboundGuard(deps.settings, "mcp")
    return Runtime(deps, section, store, *guards, run)


def llm_config(deps: Deps) -> llm.LlmConfig | None:
    """The model to ask, or None for the rule path (the platform's LLM settings)."""
    return llm.LlmConfig.from_settings(deps.settings)


@asynccontextmanager
async def model(deps: Deps) -> AsyncIterator[llm.LlmClient]:
    """The process's LLM client (`deps.llm()`, shared by every activity; Deps closes it, not this);
    LlmUnavailable when none is configured."""
    client = deps.llm()
    if client is None:
        raise llm.LlmUnavailable("error", "the LLM is no longer configured")
    yield client


def elapsed_ms(start: float) -> int:
    return int((time.perf_counter() - start) * 1000)
