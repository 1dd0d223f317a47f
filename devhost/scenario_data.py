"""Alert-investigation scenario files (schema: tests/fixtures/investigations/README.md) as data: loading one,
the tools it exposes, what its servers answer to a call, the runbook path, and the keyword score of a report.

Light on purpose (no MCP SDK, no web server): the scenario command checks its files with these before it
starts anything. The servers that serve scenarios are devhost/scenario_servers.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from devhost.stack import ROOT

# kubernetes-mcp-server's read-only tools, from the fixtures (a copy of ../shared/fixtures/investigations).
TOOLS_FILE = ROOT / "tests" / "fixtures" / "investigations" / "mcp" / "kubernetes-mcp-server-tools.json"
SCENARIO_GLOB = "[0-9][0-9]_*.json"

Toolset = Literal["kubernetes", "extras"]
EXTRA_PREFIXES = ("prometheus_", "tempo_")

# The annotations the real servers send with these tools (the fixture's tool list was stripped of them). An
# investigation offers only tools annotated readOnlyHint: true, so a double without them would offer nothing.
# kubernetes-mcp-server at the fixture's commit (55749981, pkg/toolsets/core/*.go) declares each core read tool
# with Title, ReadOnlyHint true, DestructiveHint false, OpenWorldHint true (pods_top and nodes_top also
# IdempotentHint true); go-sdk v1.7.0 (pkg/mcp/tools_gosdk.go's conversion) always sends readOnlyHint and
# idempotentHint, and copies the title to the tool's own `title`.
_K8S_TITLES = {
    "events_list": "Events: List",
    "namespaces_list": "Namespaces: List",
    "nodes_log": "Node: Log",
    "nodes_stats_summary": "Node: Stats Summary",
    "nodes_top": "Nodes: Top",
    "pods_list": "Pods: List",
    "pods_list_in_namespace": "Pods: List in Namespace",
    "pods_get": "Pods: Get",
    "pods_top": "Pods: Top",
    "pods_log": "Pods: Log",
    "resources_list": "Resources: List",
    "resources_get": "Resources: Get",
}
_K8S_IDEMPOTENT = {"nodes_top", "pods_top"}
# The prometheus_* / tempo_* data stands for a Prometheus and a Tempo MCP server. grafana/mcp-grafana's Prometheus
# tools (tools/prometheus.go) and Tempo's own MCP server (modules/frontend/mcp.go, newReadOnlyTool) both declare
# their query tools readOnlyHint true, destructiveHint false, openWorldHint false (mcp-grafana's also idempotent).
_EXTRA_ANNOTATIONS = {
    "prometheus_": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    "tempo_": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
}


def annotations_for(name: str) -> dict[str, Any] | None:
    """The `annotations` object the real server sends with tool `name` (wire names), or None when unknown."""
    if name in _K8S_TITLES:
        return {
            "title": _K8S_TITLES[name],
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": name in _K8S_IDEMPOTENT,
            "openWorldHint": True,
        }
    prefix = next((p for p in _EXTRA_ANNOTATIONS if name.startswith(p)), None)
    return dict(_EXTRA_ANNOTATIONS[prefix]) if prefix else None


# ---- loading, tools, answers, score -----------------------------------------------------------


def scenario_files(directory: Path) -> list[Path]:
    """The scenario files of a directory (the glob the fixtures' README prescribes)."""
    return sorted(directory.glob(SCENARIO_GLOB))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


_tools_cache: list[dict[str, Any]] | None = None


def all_tools() -> list[dict[str, Any]]:
    """kubernetes-mcp-server's read-only tools: name, description, inputSchema (as the fixture lists them)."""
    global _tools_cache
    if _tools_cache is None:
        _tools_cache = json.loads(TOOLS_FILE.read_text())["tools"]
    return [dict(t) for t in _tools_cache]


def tools_for(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a scenario exposes: `available_tools` exactly when present (may be empty), else the full list.

    A scenario may declare another server's tools in `tools` (MCP tool definitions: name, description,
    inputSchema); those definitions win over kubernetes-mcp-server's, so a server with other names and argument
    shapes is played as it is. Other names in `available_tools` that are not kubernetes-mcp-server tools
    (prometheus_*, tempo_*) are listed with a permissive schema, so a harness can offer them as a second server.
    """
    own = [t for t in scenario.get("tools") or [] if isinstance(t, dict) and t.get("name")]
    by_name = {t["name"]: t for t in all_tools()} | {t["name"]: t for t in own}
    names = scenario.get("available_tools")
    if names is None:
        return own or list(by_name.values())
    return [by_name.get(n) or _extra_tool(n) for n in names]


def _prop(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


# The prometheus_* / tempo_* tools as HolmesGPT's Prometheus and Tempo toolsets describe them (their data came
# from those), so a planner that reads schemas knows what each one takes.
_EXTRA_TOOLS: dict[str, dict[str, Any]] = {
    "prometheus_execute_range_query": {
        "description": "Execute a PromQL range query against Prometheus and return the time series.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": _prop("The PromQL query"),
                "start": _prop("Start time (RFC 3339)"),
                "end": _prop("End time (RFC 3339)"),
                "step": _prop("Query resolution step"),
            },
            "required": ["query"],
        },
    },
    "prometheus_execute_query": {
        "description": "Execute an instant PromQL query against Prometheus.",
        "inputSchema": {"type": "object", "properties": {"query": _prop("The PromQL query")}, "required": ["query"]},
    },
    "prometheus_list_available_metrics": {
        "description": "List the metric names Prometheus has, optionally filtered by name.",
        "inputSchema": {"type": "object", "properties": {"name_filter": _prop("Only metrics whose name matches")}},
    },
    "prometheus_list_rules": {
        "description": "List Prometheus alerting and recording rules.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    "tempo_fetch_traces": {
        "description": "Fetch recent traces from Grafana Tempo (trace ids with their durations).",
        "inputSchema": {"type": "object", "properties": {"min_duration": _prop("Only traces longer than this")}},
    },
    "tempo_fetch_trace_by_id": {
        "description": "Fetch one trace from Grafana Tempo by its trace id, with its spans.",
        "inputSchema": {
            "type": "object",
            "properties": {"trace_id": _prop("The trace id")},
            "required": ["trace_id"],
        },
    },
}


def _extra_tool(name: str) -> dict[str, Any]:
    known = _EXTRA_TOOLS.get(name)
    if known is not None:
        return {"name": name, **known}
    return {"name": name, "description": f"{name} (scenario data)", "inputSchema": {"type": "object"}}


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


def extra_tool_names(scenario: dict[str, Any]) -> list[str]:
    """The scenario's prometheus_* / tempo_* tools, in file order (what a second server would offer)."""
    names: list[str] = []
    for entry in scenario.get("tool_responses", []):
        if entry["tool"].startswith(EXTRA_PREFIXES) and entry["tool"] not in names:
            names.append(entry["tool"])
    return names


def served_scenario(scenario: dict[str, Any], toolset: Toolset = "kubernetes") -> dict[str, Any]:
    """The scenario as the server answers it: unchanged for kubernetes, its extra tools only for `extras`."""
    if toolset == "kubernetes":
        return scenario
    return {**scenario, "available_tools": extra_tool_names(scenario)}


def split_scenario(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario for the kubernetes server when an `extras` server runs beside it: an `available_tools`
    that names prometheus_* / tempo_* tools loses them (the extras server offers them), so no tool is
    offered twice; otherwise unchanged."""
    names = scenario.get("available_tools")
    if names is None:
        return scenario
    return {**scenario, "available_tools": [n for n in names if not n.startswith(EXTRA_PREFIXES)]}


def runbook_path(scenario: dict[str, Any]) -> str | None:
    """The path of the alert's runbook_url, or None when the alert has none."""
    url = (scenario.get("alert", {}).get("annotations") or {}).get("runbook_url")
    return (urlsplit(url).path or "/") if url else None
