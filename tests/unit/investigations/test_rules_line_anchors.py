"""No rule regex that runs over a whole tool output lets `^` be followed by `\\s`.

With MULTILINE, `^\\s*` (or `^\\s+`) at every line start also consumes the line breaks after it: on a run of blank
lines each start rescans the whole run, and a tool output of 256 KiB of newlines kept the rules busy for 40 s
(tests/fixtures/hostile/outside_content.py, `rules-blank-lines`). Indentation is `[ \\t]`; a pattern matched one
line at a time (no MULTILINE) cannot cross a line break and is not concerned.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

RULES = Path(__file__).resolve().parents[3] / "shared" / "investigations" / "rules"
_RE_CALLS = {"compile", "search", "match", "findall", "finditer", "sub", "subn", "split", "fullmatch"}
_LEADING_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")
_LINE_START_THEN_SPACE = re.compile(r"\^\\s")


def _multiline(call: ast.Call, pattern: str) -> bool:
    inline = _LEADING_FLAGS.match(pattern)
    if inline and "m" in inline.group(1):
        return True
    flags = [*call.args[1:], *(k.value for k in call.keywords)]
    return any(isinstance(n, ast.Attribute) and n.attr in ("MULTILINE", "M") for f in flags for n in ast.walk(f))


def _offenders() -> list[str]:
    found = []
    for path in sorted(RULES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            module = node.func.value
            if not (node.func.attr in _RE_CALLS and isinstance(module, ast.Name) and module.id == "re"):
                continue
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            if _multiline(node, first.value) and _LINE_START_THEN_SPACE.search(first.value):
                found.append(f"{path.relative_to(RULES)}:{node.lineno}: {first.value[:60]}")
    return found


def test_the_scan_sees_multiline_patterns() -> None:
    # The guard is only worth something if it reads the rules' patterns: some are multiline and anchored.
    seen = 0
    for path in sorted(RULES.rglob("*.py")):
        seen += len(re.findall(r"\(\?i?m\)\^", path.read_text()))
    assert seen >= 5


def test_no_multiline_rule_pattern_lets_a_line_start_eat_line_breaks() -> None:
    assert _offenders() == []
