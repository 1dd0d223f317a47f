"""What indexing (`import function_app` + `get_functions()`) may import: the worker does it on every cold start,
so the app's HTTP-streams types must not bring fastapi (its OpenAPI models alone build ~100 ms of pydantic
classes) or pydantic; they load on the first request that needs them (issue #30)."""

from __future__ import annotations

import json
import subprocess
import sys

from devhost.stack import ROOT


def _imported_at_indexing(modules: tuple[str, ...]) -> list[str]:
    probe = (
        "import json, sys, function_app; function_app.app.get_functions();"
        f" print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_indexing_imports_neither_fastapi_nor_pydantic() -> None:
    assert _imported_at_indexing(("fastapi", "pydantic", "uvicorn")) == []


def test_indexing_turns_http_streams_on_with_the_apps_own_web_extension() -> None:
    # The worker's test: azurefunctions.extensions.base imported and one web extension module recorded.
    probe = (
        "import function_app; from azurefunctions.extensions.base import HttpV2FeatureChecker, ModuleTrackerMeta;"
        " print(HttpV2FeatureChecker.http_v2_enabled(), ModuleTrackerMeta.get_module())"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "functions.http_streams"]
