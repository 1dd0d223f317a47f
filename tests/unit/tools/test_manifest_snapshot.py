"""The golden snapshot of the registry that indexing reads: it must match the declarations exactly."""

from __future__ import annotations

import json
import subprocess
import sys

from devhost.stack import ROOT
from shared.app.capabilities import catalogue
from shared.app.manifest import MANIFEST_PATH, indexed_orchestrations, indexed_tools, render


def test_manifest_matches_the_catalogue() -> None:
    assert MANIFEST_PATH.read_text() == render(catalogue()), (
        "shared/app/manifest.json is stale: run `make manifest` and review the diff (it is the tools/list snapshot)"
    )


def test_indexed_orchestrations_are_the_declared_ones() -> None:
    declared = {o.name: sorted(o.activities) for o in catalogue().orchestrations.values()}
    assert {o["name"]: o["activities"] for o in indexed_orchestrations()} == declared


def test_indexed_tools_are_the_registered_tools() -> None:
    assert [(t["name"], t["function_name"]) for t in indexed_tools()] == [
        (t.name, t.function_name) for t in catalogue().registry
    ]


def test_indexing_does_not_import_the_sdks() -> None:
    # HTTP streams are on at indexing through functions/http_streams.py, on Starlette alone: fastapi (which
    # brought pydantic, issue #29) and uvicorn (the worker imports it when it starts its server) stay out
    # (issue #30), and so does telemetry's SDK when it is not configured (azure.durable_functions itself
    # imports the opentelemetry API).
    heavy: tuple[str, ...] = (
        "mcp",
        "azure.cosmos",
        "azure.storage.blob",
        "openai",
        "jwt",
        "pydantic",
        "fastapi",
        "uvicorn",
        "opentelemetry.sdk",
        "azure.monitor",
    )
    probe = (
        "import sys, function_app; function_app.app.get_functions();"
        f" print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_readme_tables_are_generated_from_the_registry_and_catalogue() -> None:
    from shared.app.docs import doc_files, render_readme

    texts = {path.name: path.read_text() for path in doc_files()}
    for name, text in texts.items():
        assert text == render_readme(text, catalogue()), f"{name}'s generated sections are stale: run `make manifest`"
    # Every block is somewhere, once: the tools, containers, settings and capabilities.
    for block in ("tools", "containers", "settings", "capabilities"):
        assert sum(t.count(f"<!-- {block}:begin -->") for t in texts.values()) == 1, block
    for tool in catalogue().registry:
        assert f"`{tool.name}`" in texts["tools.md"]


def test_capability_readmes_sit_below_their_heading() -> None:
    from shared.app.docs import below_level

    text = "intro\n\n## Rely on\n\n```sh\n# a comment, not a heading\n```\n\n#### Deeper\n"
    moved = below_level(text, 3)
    assert "#### Rely on" in moved
    assert "# a comment, not a heading" in moved
    assert "###### Deeper" in moved
