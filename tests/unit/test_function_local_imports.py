"""Imports in shared/ sit at the top of their module, unless a reason listed here keeps one inside a function.

A function-local import hides a module's dependencies from a reader, from the import contracts' early failure
and from a type checker's view of cycles. Three reasons justify one: the module is on the indexing path (what
function_app.py imports while the worker indexes, which must stay free of pydantic, SDKs and the capability
code: tests/unit/tools/test_manifest_snapshot.py), it defers a heavy dependency most requests never need, or it
breaks a real import cycle. A new one needs an entry below with its reason; an entry nothing matches any more
fails too, so the list only ever describes the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "shared"

INDEXING = "indexing path: function_app.py imports this module while the worker indexes"
HEAVY_BLOB = "deferred heavy SDK: azure.storage.blob takes about a second to import; few requests use Blob"
IDENTITY = "deferred SDK: azure.identity only with a managed identity, never with a key or connection string"
# Files another part of issue #28 was changing while this list was written: review them next.
NOT_REVIEWED = "not reviewed yet (issue #28: the file was being changed in parallel)"

# (module, what it imports: a dotted name or a prefix of one, why it stays inside a function)
ALLOWED: tuple[tuple[str, str, str], ...] = (
    ("shared.app.manifest", "shared.app.infra_spec", INDEXING),
    ("shared.app.manifest", "shared.app.capabilities", INDEXING),
    ("shared.app.manifest", "shared.app.docs", INDEXING),
    ("shared.storage.outage", "azure.core.exceptions", INDEXING),
    ("shared.storage.outage", "azure.cosmos.exceptions", INDEXING),
    ("shared.storage.blob", "azure.storage.blob", HEAVY_BLOB),
    ("shared.storage.blob", "azure.identity.aio", IDENTITY),
    ("shared.storage.cosmos", "azure.identity.aio", IDENTITY),
    (
        "shared.core.telemetry",
        "azure.monitor.opentelemetry",
        "deferred heavy SDK: the distro (about a second), only when Application Insights is configured",
    ),
    ("shared.core.telemetry", "azure.identity", IDENTITY),
    (
        "shared.core.telemetry",
        "opentelemetry.instrumentation.logging",
        "deferred with the distro: its log handler's class, only when Application Insights is configured",
    ),
    ("shared.memory.embeddings", "wordllama", "deferred heavy dependency: the offline model, first semantic search"),
    ("shared.memory.embeddings", "openai", "deferred heavy optional dependency: only with an embeddings endpoint"),
    ("shared.chat.assistant.intents", "zoneinfo", NOT_REVIEWED),
    ("shared.chat.routes", "shared.chat.assistant", NOT_REVIEWED),
    ("shared.core.llm", "openai", NOT_REVIEWED),
    ("shared.core.llm", "azure.identity", NOT_REVIEWED),
    ("shared.core.llm", "azure.core.exceptions", NOT_REVIEWED),
    ("shared.investigations.llm", "jsonschema", NOT_REVIEWED),
    ("shared.investigations.runbooks", "aiohttp", NOT_REVIEWED),
    ("shared.investigations.runbooks", "yarl", NOT_REVIEWED),
    ("shared.investigations.service", "shared.investigations.alerts", NOT_REVIEWED),
    ("shared.perf.collect.orchestration", "shared.perf.service", NOT_REVIEWED),
    ("shared.tools.routes", "pydantic", NOT_REVIEWED),
    ("shared.tools.routes", "shared.core.errors", NOT_REVIEWED),
    ("shared.tools.routes", "shared.tools.invoke", NOT_REVIEWED),
    ("shared.tools.routes", "typing", NOT_REVIEWED),
)


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names a statement imports (`from a import b` -> a.b); relative imports are not used here."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [f"{node.module}.{alias.name}" for alias in node.names]


def _function_local_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, imported name) of each import inside a function body (a `TYPE_CHECKING` block is module level)."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.extend((child.lineno, name) for name in _imported(child))
            walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    walk(tree, False)
    return found


def _covers(entry: str, name: str) -> bool:
    return name == entry or name.startswith(entry + ".")


def _all_local_imports() -> list[tuple[str, int, str]]:
    return [
        (_module(path), line, name)
        for path in sorted(SHARED.rglob("*.py"))
        for line, name in _function_local_imports(ast.parse(path.read_text(), str(path)))
    ]


def test_the_scan_sees_a_function_local_import_and_not_a_type_checking_block() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from a.b import C\n"
        "def f():\n    import os.path\n    def g():\n        from x import y\n"
        "class K:\n    async def m(self):\n        from p import q as r\n"
    )
    assert _function_local_imports(ast.parse(source)) == [(5, "os.path"), (7, "x.y"), (10, "p.q")]


def test_every_function_local_import_in_shared_has_a_listed_reason() -> None:
    unlisted = [
        f"{module}:{line} imports {name}"
        for module, line, name in _all_local_imports()
        if not any(m == module and _covers(entry, name) for m, entry, _why in ALLOWED)
    ]
    assert unlisted == [], "move these to the module top, or list them in ALLOWED with the reason"


def test_every_allowed_entry_still_matches_an_import() -> None:
    found = _all_local_imports()
    stale = [
        (module, entry)
        for module, entry, _why in ALLOWED
        if not any(m == module and _covers(entry, name) for m, _line, name in found)
    ]
    assert stale == [], "these imports moved to the top (or went): drop their entries"
