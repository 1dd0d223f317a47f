"""Seven public Kubernetes MCP servers (tests/fixtures/investigations/mcp/public: their real tool lists, copied from
their sources, with EXPECTED.md written from the schemas before any code ran on them): the planner writes the
calls an expert would, in each server's own terms, and investigates the scenarios through each as well as through
kubernetes-mcp-server.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from devhost import rule_scores
from shared.investigations.rules import kubectl_command
from shared.investigations.rules.toolshape import Role, Toolbox
from tests.support import scenarios
from tests.support.server_shapes import PUBLIC, investigate_through, public_servers

REQUESTS: list[tuple[Role, dict[str, Any]]] = [
    (Role.DESCRIBE, {"api_version": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}),
    (Role.POD_LOG, {"name": "web-7c9d6f5b8-x2x9q", "namespace": "shop", "container": "app", "previous": True}),
    (Role.EVENTS, {"namespace": "shop"}),
    (Role.POD_LIST, {"namespace": "shop", "labels": "app=web"}),
]
# Where the planner's call is not EXPECTED.md's and why that is acceptable.
ACCEPTED = {
    # get_pods takes no label selector: the namespace's pods are listed and narrowed by name (as the planner does
    # for every listing tool without one); EXPECTED.md used the kubectl command tool for the selector.
    ("rohitg00__kubectl-mcp-server", Role.POD_LIST): ("get_pods", {"namespace": "shop"}),
}


def _expected() -> dict[str, list[dict[str, Any]]]:
    text = (PUBLIC / "EXPECTED.md").read_text()
    out: dict[str, list[dict[str, Any]]] = {}
    for section in re.split(r"\n## ", text)[1:]:
        file = re.search(r"`([\w.-]+)-tools\.json`", section)
        block = re.search(r"Example calls:\s*```json\n(.*?)```", section, re.DOTALL)
        if file and block:
            out[file.group(1)] = [json.loads(line) for line in block.group(1).strip().splitlines()]
    return out


def _same(call: dict[str, Any]) -> Any:
    """A call as what it asks: a kubectl command line by its parts, a kind in any spelling kubectl accepts."""
    args = dict(call["args"])
    line = args.get("command")
    if isinstance(line, str) and (parsed := kubectl_command.parse(line)) is not None:
        return call["tool"], parsed.verb, parsed.kind.lower().rstrip("s"), parsed.name, parsed.namespace, parsed.labels
    for key in ("resourceType", "resource_type", "kind", "Kind", "type", "resource"):
        if isinstance(args.get(key), str):
            args[key] = args[key].lower().rstrip("s")
    return call["tool"], json.dumps(args, sort_keys=True)


@pytest.mark.parametrize("server", sorted(public_servers()))
def test_each_request_is_the_call_an_expert_would_make_on_that_server(server: str) -> None:
    box = Toolbox(public_servers()[server])
    expected = _expected()[server]
    for (role, values), want in zip(REQUESTS, expected, strict=True):
        call = box.call(role, "why", **values)
        if call is None and role is Role.POD_LIST:  # the planner's own fallback: the listing tool, kind Pod
            call = box.call(Role.LIST, "why", api_version="v1", kind="Pod", **values)
        assert call is not None, (server, role)
        got = {"tool": call.tool, "args": call.args}
        accepted = ACCEPTED.get((server, role))
        if accepted is not None:
            assert (call.tool, call.args) == accepted
            continue
        assert _same(got) == _same(want), (server, role, got, want)
        # Read back, the call is the request it was made for.
        read = box.read(call.tool, call.args)
        assert read.name == values.get("name", ""), (server, role)
        assert read.namespace == values["namespace"], (server, role)


@cache
def _direct(stem: str, folder: str) -> float:
    path = scenarios.FIXTURES.parent / folder / f"{stem}.json"
    report, _ = rule_scores.investigate(scenarios.load(path))
    return scenarios.score(report["analysis"], scenarios.load(path)) or 0.0


def _comparable() -> list[tuple[str, str]]:
    """Scenarios played by every server's tools: those that do not restrict the tools on offer."""
    found = []
    dev = sorted((scenarios.FIXTURES.parent / "investigations_corpus" / "dev").glob("*.json"))
    for folder, files in (
        ("investigations", scenarios.scenario_files()),
        ("investigations_heldout", scenarios.scenario_files(scenarios.HELDOUT)),
        ("investigations_corpus/dev", dev),
    ):
        found += [(f.stem, folder) for f in files if scenarios.load(f).get("available_tools") is None]
    return found


@pytest.mark.parametrize("server", sorted(public_servers()))
def test_the_scenarios_are_investigated_through_each_server_nearly_as_well(server: str) -> None:
    tools = public_servers()[server]
    direct = through = 0.0
    for stem, folder in _comparable():
        scenario = scenarios.load(scenarios.FIXTURES.parent / folder / f"{stem}.json")
        report, _ = investigate_through(scenario, tools)
        through += scenarios.score(report["analysis"], scenario) or 0.0
        direct += _direct(stem, folder)
    # Same outputs, other tools: within 6% of kubernetes-mcp-server's mean (a server without a describe tool
    # reads objects as YAML/JSON; tool names of other lengths move the report's cut).
    assert through >= 0.94 * direct, (server, through / len(_comparable()), direct / len(_comparable()))
