"""The deployment package: what `.funcignore` leaves in is all the app needs at run
time, and `requirements.txt` installs from wheels alone on the deployed platform (Linux x86_64, CPython 3.11).

The package test copies exactly the tracked files `.funcignore` keeps into an empty folder and, in a fresh
interpreter whose only code is that folder (plus the installed packages), imports function_app (indexing),
every module of `shared` and `functions`, builds the catalogue, the OpenAPI document and the docs page. A
module or data file the app needs but the package leaves out fails it; so does any code loaded from
outside the copy (tests, devhost).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from devhost.package import copy_package, packaged_files, wheel_install_command

ROOT = Path(__file__).resolve().parents[2]

_PROBE = r"""
import importlib, json, pkgutil, sys
from pathlib import Path

here = Path.cwd().resolve()
import function_app  # indexing: the blueprints from the manifest
for package in ("shared", "functions"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)
from shared.app.capabilities import catalogue
from shared.app.openapi import build
from functions.openapi_api import _page

cat = catalogue()
doc = build(cat)
page, csp = _page()
outside = sorted(
    name
    for name, module in list(sys.modules.items())
    if getattr(module, "__file__", None)
    and not Path(module.__file__).resolve().is_relative_to(here)
    and not Path(module.__file__).resolve().is_relative_to(Path(sys.base_prefix).resolve())
    and not Path(module.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    and name.split(".")[0] in ("shared", "functions", "devhost", "tests", "benchmarks", "function_app")
)
print(json.dumps({"tools": len(cat.registry), "routes": len(cat.routes), "paths": len(doc["paths"]),
                  "page": len(page), "outside": outside}))
"""


def test_funcignore_leaves_out_the_dev_parts() -> None:
    files = packaged_files()
    assert "function_app.py" in files
    assert "host.json" in files
    assert "requirements.txt" in files
    assert "shared/app/manifest.json" in files
    assert "shared/app/api_docs.html" in files
    for left_out in ("tests/", "devhost/", "benchmarks/", "infra/", "node_modules/", ".venv", "Makefile"):
        assert not any(f.startswith(left_out) for f in files), left_out


def test_the_package_holds_everything_the_app_imports(tmp_path: Path) -> None:
    package = tmp_path / "package"
    copy_package(package)
    found = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=package,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=300,
    )
    assert found.returncode == 0, found.stderr[-3000:]
    report = json.loads(found.stdout.strip().splitlines()[-1])
    assert report["outside"] == []
    assert report["tools"] > 40
    assert report["routes"] >= 9
    assert report["paths"] > report["tools"]
    assert report["page"] > 1000


def test_requirements_install_from_wheels_on_linux_x86_64_python_311(tmp_path: Path) -> None:
    """No source build on deployment: every pinned package has a wheel for the Functions image.

    manylinux2014 (glibc 2.17) alone is not enough since numpy 2.4 ships manylinux_2_28 wheels only; the
    Functions Python 3.11 images run Debian 12 (glibc 2.36), which takes both.
    """
    report = tmp_path / "report.json"
    done = subprocess.run(
        wheel_install_command("--dry-run", "--ignore-installed", "--report", str(report)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    installs = json.loads(report.read_text())["install"]
    files = [i["download_info"]["url"].rsplit("/", 1)[-1] for i in installs]
    assert files
    assert all(f.endswith(".whl") for f in files), [f for f in files if not f.endswith(".whl")]
    assert not [f for f in files if ("-cp3" in f and "-cp311-" not in f and "abi3" not in f)]
