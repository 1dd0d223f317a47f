"""The alert-investigation scenarios (tests/fixtures/investigations, copied from ../shared/fixtures), served and
scored as their README says.

One place for: loading scenario files (`[0-9][0-9]_*.json`), the tool list to expose, answering a tool call
from a scenario (first matching `tool_responses` entry, else the real server's not-found wording), and the
keyword score of a report. The scenario MCP server, the rule-path harness and the CLI tests all use it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devhost.stack import ROOT

# A copy of ../shared/fixtures/investigations (Apache-2.0, see its README and licence file): CI clones the repo alone.
FIXTURES = ROOT / "tests" / "fixtures" / "investigations"
TOOLS_FILE = FIXTURES / "mcp" / "kubernetes-mcp-server-tools.json"


def scenario_files(directory: Path = FIXTURES) -> list[Path]:
    """The scenario files of a directory (the glob the fixtures' README prescribes)."""
    return sorted(directory.glob("[0-9][0-9]_*.json"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def all_tools() -> list[dict[str, Any]]:
    """kubernetes-mcp-server's read-only tools: name, description, inputSchema (as the fixture lists them)."""
    tools: list[dict[str, Any]] = json.loads(TOOLS_FILE.read_text())["tools"]
    return tools


def tools_for(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a scenario exposes: `available_tools` exactly when present (may be empty), else the full list.

    Names in `available_tools` that are not kubernetes-mcp-server tools (prometheus_*, tempo_*) are listed
    with a permissive schema, so a harness can offer them as a second server.
    """
    tools = all_tools()
    names = scenario.get("available_tools")
    if names is None:
        return tools
    by_name = {t["name"]: t for t in tools}
    return [
        by_name.get(n, {"name": n, "description": f"{n} (scenario data)", "inputSchema": {"type": "object"}})
        for n in names
    ]


@dataclass(frozen=True)
class Answer:
    text: str
    is_error: bool


_LIST_TOOLS = {"pods_list_in_namespace", "resources_list", "pods_list", "namespaces_list"}


def answer(scenario: dict[str, Any], tool: str, args: dict[str, Any]) -> Answer:
    """What the scenario's server answers to `tool(args)`: README rules 1-4."""
    if tool not in {t["name"] for t in tools_for(scenario)}:
        return Answer(f"tool {tool!r} not found", True)
    for entry in scenario.get("tool_responses", []):
        if entry["tool"] == tool and all(k in args and args[k] == v for k, v in entry.get("match", {}).items()):
            return Answer(entry["output"], bool(entry.get("is_error", False)))
    name, ns = args.get("name", ""), args.get("namespace", "")
    if tool == "pods_get":
        return Answer(f'failed to get pod {name} in namespace {ns}: pods "{name}" not found', True)
    if tool == "pods_log":
        return Answer(f'failed to get pod {name} log in namespace {ns}: pods "{name}" not found', True)
    if tool == "resources_get":
        kind = str(args.get("kind", "resource")).lower()
        plural = kind if kind.endswith("s") else kind + "s"
        group = str(args.get("apiVersion", "v1")).split("/")[0] if "/" in str(args.get("apiVersion", "")) else ""
        return Answer(f'failed to get resource: {plural}{"." + group if group else ""} "{name}" not found', True)
    if tool in _LIST_TOOLS:
        return Answer(f"No resources found in {ns or 'default'} namespace.", False)
    if tool == "events_list":
        return Answer("# No events found", False)
    if tool in ("pods_top", "nodes_top"):
        return Answer(f"failed to get {tool.split('_')[0]} top: metrics API is not available", True)
    return Answer(f"{tool}: no data", True)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def score(report: str, scenario: dict[str, Any]) -> float | None:
    """Credited keyword groups / all groups (the README's rule), or None when the scenario has none."""
    groups = scenario.get("expected_keywords") or []
    if not groups:
        return None
    text = _norm(report)
    return sum(any(_norm(alt) in text for alt in group) for group in groups) / len(groups)
