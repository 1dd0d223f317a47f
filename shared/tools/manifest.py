"""The registry's golden snapshot (`manifest.json`): what indexing reads instead of importing every tool.

The Functions host imports function_app.py on every cold start; reading tool names from JSON there
keeps pydantic and the capability packages off that path. A unit test fails when the file no longer
matches the registry; `make tools-manifest` (python -m shared.tools.manifest) rewrites it, and the
diff doubles as a review of schema changes.
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

MANIFEST_PATH = Path(__file__).with_name("manifest.json")


@lru_cache(maxsize=1)
def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST_PATH.read_text())


def indexed_tools() -> list[dict[str, str]]:
    """Name, function name and capability of each tool, for generating HTTP functions at index time."""
    return [{"name": t["name"], "function_name": t["function_name"], "capability": t["capability"]} for t in load_manifest()["tools"]]


def render(registry: Any) -> str:
    doc = registry.document()
    for entry, tool in zip(doc["tools"], registry):
        entry["function_name"] = tool.function_name
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main() -> int:
    from shared.tools.catalog import default_registry
    from shared.tools.docs import README, render_readme

    MANIFEST_PATH.write_text(render(default_registry()))
    README.write_text(render_readme(README.read_text(), default_registry()))
    print(f"wrote {MANIFEST_PATH} and the README tables ({len(default_registry())} tools)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
