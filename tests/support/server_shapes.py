"""Public Kubernetes MCP servers' tool lists (tests/fixtures/investigations/mcp/public) played over the scenarios.

A scenario answers kubernetes-mcp-server's tools. To investigate it through another server's tools, each call the
planner makes in that server's terms is read back (`Toolbox.read`: role, kind, name, namespace, ...) and asked of
the scenario as kubernetes-mcp-server's equivalent call, so the outputs are the scenario's own: what differs is
only which tools and arguments the planner could use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devhost.scenario_data import answer
from shared.investigations import rules
from shared.investigations.rules.objects import kind_of
from shared.investigations.rules.toolshape import Reading, Role, Toolbox

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "investigations" / "mcp" / "public"


def public_servers() -> dict[str, list[rules.ToolSpec]]:
    """Each public server's read tools, by file stem."""
    return {
        f.name.removesuffix("-tools.json"): [
            rules.ToolSpec.model_validate(t) for t in json.loads(f.read_text())["tools"]
        ]
        for f in sorted(PUBLIC.glob("*-tools.json"))
    }


def _equivalent(read: Reading) -> tuple[str, dict[str, Any]] | None:
    """kubernetes-mcp-server's call for a call read back, or None when it plays no role the scenarios answer."""
    k = kind_of(read.kind.lower()) if read.kind else None
    kind, api = (k.name, k.api_version) if k else (read.kind, "v1")
    ns = {"namespace": read.namespace} if read.namespace else {}
    role = read.role
    if role is Role.LIST and kind == "Pod":
        role = Role.POD_LIST if read.namespace else Role.POD_LIST_ALL
    if role in (Role.DESCRIBE, Role.POD_GET):
        return "resources_get", {"apiVersion": api, "kind": kind or "Pod", "name": read.name, **ns}
    if role is Role.LIST:
        sel = {"labelSelector": read.labels} if read.labels else {}
        return "resources_list", {"apiVersion": api, "kind": kind, **ns, **sel}
    if role is Role.POD_LIST:
        return "pods_list_in_namespace", {**ns, **({"labelSelector": read.labels} if read.labels else {})}
    if role is Role.POD_LIST_ALL:
        return "pods_list", {"fieldSelector": read.fields} if read.fields else {}
    if role is Role.POD_LOG:
        more = {"container": read.container} if read.container else {}
        return "pods_log", {"name": read.name, **ns, **more, **({"previous": True} if read.previous else {})}
    if role is Role.EVENTS:
        return "events_list", ns
    if role is Role.NAMESPACES:
        return "namespaces_list", {}
    if role is Role.POD_TOP:
        return "pods_top", ns
    return None


def _any_listing(scenario: dict[str, Any], namespace: Any) -> Any:
    """A server that cannot filter by label lists the whole namespace: the scenario's listing of it (its own
    filtered ones are the part of it the scenario wrote down)."""
    for entry in scenario.get("tool_responses", []):
        if entry["tool"] == "pods_list_in_namespace" and entry.get("match", {}).get("namespace") == namespace:
            return answer(scenario, "pods_list_in_namespace", entry["match"])
    return None


def investigate_through(scenario: dict[str, Any], tools: list[rules.ToolSpec]) -> tuple[dict[str, Any], int]:
    """The rule path over `tools`, answered by the scenario: the report and the number of calls."""
    state = rules.InvestigationState(alert=scenario["alert"], runbook=scenario.get("runbook_markdown"), tools=tools)
    box = Toolbox(tools)
    calls = rules.first_calls(state)
    iteration = 0
    while calls:
        for call in calls:
            asked = _equivalent(box.read(call.tool, call.args))
            if asked is None:
                out, err = f"{call.tool}: no data", True
            else:
                got = answer({**scenario, "available_tools": None}, *asked)
                if asked[0] == "pods_list_in_namespace" and got.text.startswith("No resources found"):
                    got = _any_listing(scenario, asked[1].get("namespace")) or got
                if got.is_error and asked[0] == "resources_get" and asked[1].get("kind") == "Pod":
                    got = answer(
                        scenario, "pods_get", {"name": asked[1]["name"], "namespace": asked[1].get("namespace")}
                    )
                out, err = got.text, got.is_error
            state.calls.append(rules.CallRecord(tool=call.tool, args=call.args, output=out, is_error=err,
                                                iteration=iteration))  # fmt: skip
        iteration += 1
        calls = rules.next_calls(state)
    return rules.report(state), len(state.calls)
