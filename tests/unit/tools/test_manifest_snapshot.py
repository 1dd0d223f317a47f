"""The golden snapshot of the registry that indexing reads: it must match the declarations exactly."""

from __future__ import annotations

import json
import subprocess
import sys

from devhost.stack import ROOT
from shared.tools.catalog import default_registry
from shared.tools.manifest import MANIFEST_PATH, indexed_tools, render


def test_manifest_matches_the_registry() -> None:
    assert MANIFEST_PATH.read_text() == render(default_registry()), (
        "shared/tools/manifest.json is stale: run `make tools-manifest` and review the diff (it is the tools/list snapshot)"
    )


def test_indexed_tools_are_the_registered_tools() -> None:
    assert [(t["name"], t["function_name"]) for t in indexed_tools()] == [(t.name, t.function_name) for t in default_registry()]


def test_indexing_does_not_import_pydantic_or_sdks() -> None:
    probe = "import sys, function_app; function_app.app.get_functions(); print(sorted(m for m in ('pydantic', 'mcp', 'azure.cosmos', 'azure.storage.blob', 'openai', 'jwt') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_readme_tables_are_generated_from_the_registry_and_catalogue() -> None:
    from shared.tools.docs import README, render_readme

    text = README.read_text()
    assert text == render_readme(text, default_registry()), "README tables are stale: run `make tools-manifest`"
    for tool in default_registry():
        assert f"`{tool.name}`" in text
