"""Indexing turns the worker's HTTP streams on with the app's own web extension (functions/http_streams.py, issue
#30); what indexing must not import is tests/unit/tools/test_manifest_snapshot.py's list."""

from __future__ import annotations

import subprocess
import sys

from devhost.stack import ROOT


def test_indexing_turns_http_streams_on_with_the_apps_own_web_extension() -> None:
    # The worker's test: azurefunctions.extensions.base imported and one web extension module recorded.
    probe = (
        "import function_app; from azurefunctions.extensions.base import HttpV2FeatureChecker, ModuleTrackerMeta;"
        " print(HttpV2FeatureChecker.http_v2_enabled(), ModuleTrackerMeta.get_module())"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "functions.http_streams"]
