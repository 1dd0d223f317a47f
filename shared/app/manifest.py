"""The catalogue's golden snapshot (`manifest.json`): what indexing reads instead of importing every capability.

The Functions host imports function_app.py on every cold start; reading tool and orchestration names
from JSON there keeps pydantic and the capability packages off that path. `make manifest` (python -m
shared.app.manifest) rewrites it and the generated README sections; `make run` and `make test` run it
first, and the test session refuses to start when the file does not match the catalogue (a stale file
would leave a listed tool without its HTTP function). The diff doubles as a review of schema changes.
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
    data: dict[str, Any] = json.loads(MANIFEST_PATH.read_text())
    return data


def indexed_tools() -> list[dict[str, str]]:
    """Name, function name and capability of each tool, for generating HTTP functions at index time."""
    return [
        {"name": t["name"], "function_name": t["function_name"], "capability": t["capability"]}
        for t in load_manifest()["tools"]
    ]


def indexed_orchestrations() -> list[dict[str, Any]]:
    """Each orchestration's name, capability and activity names, for registering Durable functions at index time."""
    return list(load_manifest()["orchestrations"])


def render(cat: Any) -> str:
    """The manifest of a Catalogue (shared.tools.capability), as written to manifest.json."""
    doc = cat.registry.document()
    for entry, tool in zip(doc["tools"], cat.registry, strict=True):
        entry["function_name"] = tool.function_name
    doc["routes"] = [
        {
            "name": r.name,
            "function_name": r.function_name,
            "capability": r.capability,
            "method": r.method,
            "path": r.path,
            "summary": r.summary,
            # The generated function takes the Durable client binding only for these.
            "runs": r.runs,
        }
        for r in cat.routes
    ]
    doc["orchestrations"] = [
        {
            "name": o.name,
            "capability": cat.capability_of_orchestration(o.name),
            "activities": sorted(o.activities),
            "description": o.description,
        }
        for o in sorted(cat.orchestrations.values(), key=lambda o: o.name)
    ]
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def stale_reason(cat: Any) -> str | None:
    """Why manifest.json (or infra/generated/app.json) does not match the catalogue, or None when both do."""
    # Indexing path (function_app.py reads this module): the catalogue's modules load only when asked.
    from shared.app import infra_spec

    if not MANIFEST_PATH.exists():
        return f"{MANIFEST_PATH} is missing"
    if MANIFEST_PATH.read_text() != render(cat):
        return f"{MANIFEST_PATH} does not match the capabilities' declarations"
    return infra_spec.stale_reason(cat)


def main() -> int:
    # Indexing path, as above: `make manifest` needs the catalogue, indexing never does.
    from shared.app import infra_spec
    from shared.app.capabilities import catalogue
    from shared.app.docs import doc_files, render_readme

    cat = catalogue()
    MANIFEST_PATH.write_text(render(cat))
    infra_spec.write(cat)
    for path in doc_files():
        path.write_text(render_readme(path.read_text(), cat))
    print(
        f"wrote {MANIFEST_PATH.name}, infra/generated/app.json and the generated sections of README.md and docs/"
        f" ({len(cat.registry)} tools, {len(cat.orchestrations)} orchestrations)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
