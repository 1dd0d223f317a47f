"""The rule-based investigation path: choose MCP tool calls, read their outputs, write the report."""

from shared.investigations.rules.brief import brief
from shared.investigations.rules.evidence import findings
from shared.investigations.rules.planner import first_calls, next_calls
from shared.investigations.rules.report import report
from shared.investigations.rules.state import (
    Budget,
    CallRecord,
    Evidence,
    Finding,
    InvestigationState,
    ToolCall,
    ToolSpec,
)

__all__ = [
    "Budget",
    "CallRecord",
    "Evidence",
    "Finding",
    "InvestigationState",
    "ToolCall",
    "ToolSpec",
    "brief",
    "findings",
    "first_calls",
    "next_calls",
    "report",
]
