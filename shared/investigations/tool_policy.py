"""Which MCP tools an investigation may offer its planner: those their server marks read-only, or an operator allows.

The planner (model or rules) reads text an outsider controls: the alert, the runbook, pods' logs. A model
steered by it can ask for any tool it is shown, so the control is what it is shown. A tool is offered when its
server annotates it `readOnlyHint: true` (and not also `destructiveHint: true`), or when an operator names it in
FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS. A tool without annotations is withheld: the MCP specification's default
for `readOnlyHint` is false (2025-06-18 and 2025-11-25 schemas, `ToolAnnotations`), so a server that says nothing
has not said the tool only looks. The catalogue that is stored (and that `call_tool` checks every call against)
holds the offered tools only.

The annotations are the configured server's word: the spec tells clients not to decide on annotations from
servers they do not trust, and an operator who configures a server trusts it to describe its tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from shared.core.settings import SettingsError
from shared.investigations.mcp_servers import CatalogueTool, ToolCatalogue

ALLOWED_TOOLS_SETTING = "FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS"
ALLOW_WRITE_TOOLS_SETTING = "FIREBREAK_INVESTIGATIONS_MCP_ALLOW_WRITE_TOOLS"

# An entry is `tool` (on any server) or `server/tool`; both parts may use the glob characters * ? [ ].
# Server names cannot hold '/', so the first '/' always ends the server part (`*/a/b` is tool `a/b` anywhere).
_SERVER_PART = r"[A-Za-z0-9_*?\[\]!-]{1,64}"
_TOOL_CHAR = r"[A-Za-z0-9_.\-:*?\[\]!]"
_TOOL_PART = rf"{_TOOL_CHAR}(?:[A-Za-z0-9_.\-/:*?\[\]!]{{0,158}}{_TOOL_CHAR})?"
_ENTRY = re.compile(rf"(?:{_SERVER_PART}/)?{_TOOL_PART}")

WithheldReason = Literal["no_read_only_hint", "not_read_only", "read_only_but_destructive"]

REASONS: dict[WithheldReason, str] = {
    "no_read_only_hint": "their server gives no readOnlyHint (the MCP default is false)",
    "not_read_only": "their server marks them not read-only (readOnlyHint false)",
    "read_only_but_destructive": "their server marks them both read-only and destructive (destructiveHint true)",
}


def parse_allowed_tools(value: str) -> tuple[str, ...]:
    """The entries of FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS (comma-separated); SettingsError names a bad one."""
    entries: list[str] = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if not _ENTRY.fullmatch(entry):
            raise SettingsError(
                f"{ALLOWED_TOOLS_SETTING}: {entry[:80]!r} is not a tool name, `server/tool`, or a glob of either "
                "(letters, digits, _ . - : / and the glob characters * ? [ ])"
            )
        entries.append(entry)
    return tuple(entries)


@dataclass(frozen=True)
class ToolPolicy:
    """What the operator allows past the read-only rule.

    `allowed`: ALLOWED_TOOLS entries (fnmatch globs, case-sensitive, on the tool's own name and its server's).
    `allow_all`: FIREBREAK_INVESTIGATIONS_MCP_ALLOW_WRITE_TOOLS, the older switch that offers every tool.
    """

    allowed: tuple[str, ...] = ()
    allow_all: bool = False

    def allows(self, tool: CatalogueTool) -> bool:
        """An operator named this tool (its server's name and its own, not the catalogue's prefixed one)."""
        for entry in self.allowed:
            server, _, name = entry.partition("/") if "/" in entry else ("*", "", entry)
            if fnmatchcase(tool.server, server) and fnmatchcase(tool.remote_name, name):
                return True
        return False


def read_only(tool: CatalogueTool) -> WithheldReason | None:
    """None when the server marks the tool read-only; otherwise why it does not count as read-only.

    A tool marked read-only and destructive at once is withheld: the spec says destructiveHint means something
    only when readOnlyHint is false, but a server that says both is not sure what the tool does, and the safe
    reading of a contradiction is the one that does not let a steered model call it.
    """
    if tool.read_only is None:
        return "no_read_only_hint"
    if tool.read_only is False:
        return "not_read_only"
    if tool.destructive is True:
        return "read_only_but_destructive"
    return None


@dataclass(frozen=True)
class Offer:
    """The catalogue to store and plan with, and what the record says about the tools left out or let in."""

    catalogue: ToolCatalogue
    withheld: dict[str, WithheldReason]
    # Offered only because an operator allowed them (by name, or every tool with ALLOW_WRITE_TOOLS).
    allowed: list[str]


def offer(catalogue: ToolCatalogue, policy: ToolPolicy) -> Offer:
    """Split the listed tools into those the planner may see and those withheld (with the reason)."""
    kept: list[CatalogueTool] = []
    withheld: dict[str, WithheldReason] = {}
    allowed: list[str] = []
    for tool in catalogue.tools:
        why = read_only(tool)
        if why is None:
            kept.append(tool)
        elif policy.allow_all or policy.allows(tool):
            kept.append(tool)
            allowed.append(tool.name)
        else:
            withheld[tool.name] = why
    if not withheld:
        return Offer(catalogue, {}, allowed)
    return Offer(catalogue.model_copy(update={"tools": kept}), withheld, allowed)


def withheld_notes(withheld: dict[str, str]) -> list[str]:
    """One report note per reason, naming the tools (the record keeps every name and its reason)."""
    notes: list[str] = []
    for reason, text in REASONS.items():
        names = [name for name, why in withheld.items() if why == reason]
        if names:
            shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            notes.append(
                f"tools withheld from the investigation because {text}: {shown}; "
                f"an operator can allow one by name ({ALLOWED_TOOLS_SETTING})"
            )
    legacy = [name for name, why in withheld.items() if why not in REASONS]
    if legacy:  # a record written before the reasons were kept
        notes.append(f"tools marked not read-only were withheld from the investigation: {', '.join(legacy[:10])}")
    return notes
