"""The investigation as the planners and the report read it back: the record, the runbook, the tools, the outputs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from shared.investigations import llm, rules
from shared.investigations.activities.payloads import StoredPlan
from shared.investigations.activities.runtime import Runtime
from shared.investigations.loop import Limits
from shared.investigations.mcp_servers import ToolCatalogue
from shared.investigations.models import InvestigationRecord
from shared.investigations.tool_policy import offer
from shared.tools.capability import ActiveRun


@dataclass
class Gathered:
    record: InvestigationRecord
    runbook: str | None
    catalogue: ToolCatalogue
    outputs: dict[str, str]

    def history(self) -> list[llm.HistoryEntry]:
        return [
            llm.HistoryEntry(
                iteration=it.n,
                tool=c.tool,
                arguments=c.args,
                reason=c.reason,
                output=self.outputs.get(c.key, ""),
                is_error=c.is_error,
            )
            for it in self.record.iterations
            for c in it.calls
        ]

    def rule_state(self, limits: Limits, calls_left: int) -> rules.InvestigationState:
        calls = [
            rules.CallRecord(
                tool=h.tool,
                args=h.arguments,
                output=h.output,
                is_error=h.is_error,
                iteration=h.iteration,
                reason=h.reason,
            )
            for h in self.history()
        ]
        return rules.InvestigationState(
            alert=self.record.alert.model_dump(mode="json"),
            runbook=self.runbook,
            tools=[
                rules.ToolSpec.model_validate(
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                )
                for t in self.catalogue.tools
            ],
            calls=calls,
            budget=rules.Budget(
                max_calls=len(calls) + calls_left,
                max_iterations=limits.max_iterations,
                max_calls_per_iteration=limits.max_calls_per_iteration,
            ),
        )

    def tool_specs(self) -> list[llm.ToolSpec]:
        return [
            llm.ToolSpec.model_validate({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
            for t in self.catalogue.tools
        ]


async def gather(rt: Runtime) -> Gathered:
    record = await rt.store.get(rt.ws, rt.id)
    runbook_raw = await rt.deps.blobs.get(rt.blob("runbook.md")) if record.runbook.status == "fetched" else None
    tools_raw = await rt.deps.blobs.get(rt.blob("tools.json"))
    catalogue = await stored_catalogue(rt, tools_raw)
    calls = record.calls()
    texts = await asyncio.gather(*(rt.store.output_of(rt.ws, c) for c in calls))
    return Gathered(
        record,
        runbook_raw.decode("utf-8", "replace") if runbook_raw is not None else None,
        catalogue,
        {c.key: t for c, t in zip(calls, texts, strict=True)},
    )


async def stored_catalogue(rt: Runtime, raw: bytes | None) -> ToolCatalogue:
    """The stored tool catalogue, parsed off the event loop (it can be a few MB), within today's tool policy.

    prepare stored only the offered tools; the policy is applied again so a catalogue stored by an older
    version, or before an operator narrowed the allow-list, cannot offer or call more than the policy does now.
    """
    if not raw:
        return ToolCatalogue()
    stored = await asyncio.to_thread(ToolCatalogue.model_validate_json, raw)
    return offer(stored, rt.settings.tool_policy()).catalogue


def limits_of(run: ActiveRun) -> Limits:
    return StoredPlan.model_validate(run.plan).limits


def rule_partial(state: rules.InvestigationState) -> str:
    found = rules.findings(state)
    causes = [f for f in found if not f.symptom] or found
    if not causes:
        return f"{len(state.calls)} call(s) made; no cause found yet."
    return "So far: " + "; ".join(f.cause for f in causes[:3])
