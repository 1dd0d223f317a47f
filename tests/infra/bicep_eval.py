"""A tiny evaluator for the bicep expressions that build resource names (the bicep CLI and ARM are not here).

It knows only what the naming variables use: string interpolation, toLower, replace, take, empty, length,
the conditional and `!`, and uniqueString/subscription()/resourceGroup() through stand-ins. uniqueString's
stand-in has the real function's shape (13 characters of lower case letters and digits, deterministic), which is
all a length or character check depends on; its exact value is ARM's. Anything else raises, so a new function
in a name fails the test instead of being evaluated wrongly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from tests.infra import bicep

# uniqueString: "a deterministic hash string ... 13 characters long" (bicep string functions). Base 32 of the
# stand-in's digest: lower case letters and digits, as ARM's.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
SUBSCRIPTION_ID = "/subscriptions/00000000-0000-0000-0000-000000000000"
RESOURCE_GROUP_ID = f"{SUBSCRIPTION_ID}/resourceGroups/rg-firebreak"


def unique_string(*parts: str) -> str:
    digest = int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:9], "big")
    return "".join(_ALPHABET[(digest >> (5 * i)) & 31] for i in range(13))


class Evaluator:
    """Evaluates expressions of one parsed template against given parameter values (defaults fill the rest)."""

    def __init__(self, doc: dict[str, Any], params: Mapping[str, Any]) -> None:
        self._doc = doc
        self._params = dict(params)
        self._functions: dict[str, Callable[[list[Any]], Any]] = {
            "to_lower": lambda a: str(a[0]).lower(),
            "replace": lambda a: str(a[0]).replace(a[1], a[2]),
            "take": lambda a: a[0][: a[1]],
            "empty": lambda a: len(a[0]) == 0,
            "length": lambda a: len(a[0]),
            "unique_string": lambda a: unique_string(*a),
            "subscription": lambda a: {"id": SUBSCRIPTION_ID},
            "resource_group": lambda a: {"id": RESOURCE_GROUP_ID, "location": "westeurope"},
        }

    def variable(self, name: str) -> Any:
        return self.evaluate(bicep.variable(self._doc, name))

    def evaluate(self, node: Any) -> Any:
        if isinstance(node, str):
            return self._name_or_text(node)
        if isinstance(node, dict) and "function" in node:
            function = node["function"]
            if function["type"] not in self._functions:
                raise NotImplementedError(f"function {function['type']} is not in this evaluator")
            arguments = [self.evaluate(v) for v in function["parameters"].values() if v is not None]
            return self._functions[function["type"]](arguments)
        if isinstance(node, dict) and "operator" in node:
            return self._operator(node["operator"])
        if isinstance(node, dict):
            return {key: self.evaluate(value) for key, value in node.items()}
        if isinstance(node, list):
            return [self.evaluate(value) for value in node]
        return node

    def _name_or_text(self, text: str) -> Any:
        if text in self._params:
            return self._params[text]
        if text in self._doc.get("parameters", {}):
            return self.evaluate(self._doc["parameters"][text]["default"])
        if text in self._doc.get("variables", {}):
            return self.variable(text)
        return self._interpolate(text) if "${" in text else text

    def _operator(self, operator: dict[str, Any]) -> Any:
        operands = operator["operands"]
        kind = operator["type"]
        if kind == "conditional":
            chosen = operands["true_value"] if self.evaluate(operands["condition"]) else operands["false_value"]
            return self.evaluate(chosen)
        if kind == "not":
            return not self.evaluate(operands["bool_value"])
        if kind == "property_accessor":
            return self.evaluate(operands["operand_1"])[operands["operand_2"]]
        raise NotImplementedError(f"operator {kind} is not in this evaluator")

    def _interpolate(self, text: str) -> str:
        """'a${expr}b': each ${...} (braces and quotes inside balanced) is parsed as bicep and evaluated."""
        out: list[str] = []
        i = 0
        while (start := text.find("${", i)) >= 0:
            out.append(text[i:start])
            end = _closing_brace(text, start + 2)
            inner = text[start + 2 : end]
            parsed = bicep.parse_text(f"var x = {inner}\n")["variables"]["x"]["value"]
            out.append(str(self.evaluate(parsed)))
            i = end + 1
        out.append(text[i:])
        return "".join(out)


def _closing_brace(text: str, i: int) -> int:
    depth, quoted = 0, False
    for j in range(i, len(text)):
        char = text[j]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "{":
            depth += 1
        elif not quoted and char == "}":
            if depth == 0:
                return j
            depth -= 1
    raise ValueError(f"unbalanced interpolation in {text!r}")
