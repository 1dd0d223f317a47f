"""The infra/ bicep as data: every file parsed with pycep-parser (the bicep CLI cannot be installed here).

pycep renders a file as JSON: `parameters`, `variables`, `resources`, `modules`, `outputs`, each by symbolic
name. A bare identifier and a string literal both come out as a str, so the checks compare against names
they know, and expressions (functions, operators) come out as dicts that `walk` can search.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from pycep import BicepParser

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
MAIN = INFRA / "main.bicep"
MODULES = INFRA / "modules"
PARAM_FILES = sorted((INFRA / "params").glob("*.parameters.json"))
AZD_PARAMS = INFRA / "main.parameters.json"


def bicep_files() -> list[Path]:
    return sorted(INFRA.rglob("*.bicep"))


@cache
def _parser() -> BicepParser:
    return BicepParser(cache=False)


def parse_text(text: str) -> dict[str, Any]:
    return dict(_parser().parse(text=text))


@cache
def parse(path: Path) -> dict[str, Any]:
    return parse_text(path.read_text())


def module(name: str) -> dict[str, Any]:
    return parse(MODULES / f"{name}.bicep")


def resources(doc: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """Resources of one type (e.g. 'Microsoft.Web/sites') by symbolic name."""
    return {name: r for name, r in doc.get("resources", {}).items() if r["type"] == kind}


def body(resource: dict[str, Any]) -> dict[str, Any]:
    """A resource's declared body, whether plain, conditional or a loop (pycep nests those one level)."""
    config: dict[str, Any] = resource["config"]
    return config["config"] if "loop_type" in config or "condition" in config else config


def condition(resource: dict[str, Any]) -> Any:
    return resource["config"].get("condition")


def walk(node: Any) -> Iterator[Any]:
    """Every value in an expression tree, depth first (dict keys are not yielded)."""
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def mentions(node: Any, name: str) -> bool:
    return any(value == name for value in walk(node))


def variable(doc: dict[str, Any], name: str) -> Any:
    return doc["variables"][name]["value"]


def object_entries(doc: dict[str, Any], node: Any) -> dict[str, Any]:
    """The entries an object expression can hold: object literals, both sides of a conditional, every argument
    of union(), and variables of `doc` followed by name. A parameter (an object the caller passes) adds none."""
    if isinstance(node, str):
        return object_entries(doc, variable(doc, node)) if node in doc.get("variables", {}) else {}
    if not isinstance(node, dict):
        return {}
    if "operator" in node:
        operator = node["operator"]
        if operator["type"] != "conditional":
            return {}
        operands = operator["operands"]
        return {**object_entries(doc, operands["false_value"]), **object_entries(doc, operands["true_value"])}
    if "function" in node:
        function = node["function"]
        if function["type"] != "union":
            return {}
        entries: dict[str, Any] = {}
        for argument in function["parameters"].values():
            entries.update(object_entries(doc, argument))
        return entries
    return dict(node)


def module_params(mod: dict[str, Any]) -> dict[str, Any]:
    """The params a module call passes (a conditional module nests its body one level)."""
    config = mod["config"]
    params: dict[str, Any] = config["params"] if "params" in config else config["config"]["params"]
    return params


def param_file(path: Path) -> dict[str, Any]:
    parameters: dict[str, Any] = json.loads(path.read_text())["parameters"]
    return parameters
