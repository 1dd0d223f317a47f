"""checkov on infra/: every failed check is in the reviewed skip list (infra/checkov-skips.json, one reason
each), every skip still matches a finding, and every file was parsed. checkov runs from its own venv
(.venv-infra, `make infra-venv`): it pins packaging<24, which pytest 9 cannot share.

A canary template with known misconfigurations is scanned in the same run, so a checkov that silently
checks nothing (a parser that skips files, a framework that is not loaded) fails the test too.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.infra import bicep

CHECKOV = bicep.ROOT / ".venv-infra" / "bin" / "checkov"
SKIPS = json.loads((bicep.INFRA / "checkov-skips.json").read_text())["skips"]

CANARY = """// Known-bad: TLS 1.0 and plain HTTP allowed.
resource bad 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: 'canary'
  location: 'westeurope'
  kind: 'StorageV2'
  sku: { name: 'Standard_LRS' }
  properties: {
    allowBlobPublicAccess: true
    allowSharedKeyAccess: true
    minimumTlsVersion: 'TLS1_0'
    supportsHttpsTrafficOnly: false
  }
}
"""


def _scan(workdir: Path) -> dict[str, Any]:
    if not CHECKOV.exists():
        raise AssertionError(f"{CHECKOV} is missing: run `make infra-venv` (make test does)")
    scan = workdir / "scan"
    # checkov's pycep (0.5, pinned with it) cannot read the `extension` keyword of the Microsoft Graph template, and
    # checkov has no check for Graph resources; tests/infra/test_network_and_logs.py reads it with the newer pycep.
    shutil.copytree(bicep.INFRA, scan / "infra", ignore=shutil.ignore_patterns("entra-app.bicep"))
    (scan / "canary").mkdir()
    (scan / "canary" / "bad.bicep").write_text(CANARY)
    done = subprocess.run(
        [str(CHECKOV), "-d", str(scan), "--framework", "bicep", "-o", "json", "--soft-fail", "--skip-download"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=workdir,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    report = report[0] if isinstance(report, list) else report
    assert report["check_type"] == "bicep"
    return dict(report)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _scan(tmp_path_factory.mktemp("checkov"))


def _failed(report: dict[str, Any], folder: str) -> list[dict[str, Any]]:
    return [c for c in report["results"]["failed_checks"] if c["file_path"].startswith(f"/{folder}/")]


def _skipped_by(finding: dict[str, Any]) -> dict[str, str] | None:
    return next(
        (
            s
            for s in SKIPS
            if s["check"] == finding["check_id"] and fnmatch.fnmatchcase(finding["resource"], s["resource"])
        ),
        None,
    )


def test_every_file_was_parsed_and_checked(report: dict[str, Any]) -> None:
    assert report["summary"]["parsing_errors"] == 0, "checkov could not parse a template (LOG_LEVEL=DEBUG shows which)"
    results = report["results"]
    checked = {c["file_path"] for c in (*results["passed_checks"], *results["failed_checks"])}
    # (checkov has no check for the identity, monitoring and scheduler resources.)
    for name in ("function-app", "storage", "cosmos", "keyvault"):
        assert f"/infra/modules/{name}.bicep" in checked, f"checkov checked nothing in {name}.bicep"


def test_the_canary_fails_as_it_should(report: dict[str, Any]) -> None:
    found = {c["check_id"] for c in _failed(report, "canary")}
    # Minimum TLS and HTTPS-only (the ids checkov gives these storage checks).
    assert {"CKV_AZURE_44", "CKV_AZURE_3"} <= found, found


def test_no_failed_check_outside_the_reviewed_skips(report: dict[str, Any]) -> None:
    unreviewed = [
        f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}"
        for c in _failed(report, "infra")
        if _skipped_by(c) is None
    ]
    assert not unreviewed, "fix these or add them to infra/checkov-skips.json with a reason:\n" + "\n".join(unreviewed)


def test_every_skip_is_still_needed_and_has_a_reason(report: dict[str, Any]) -> None:
    used = {id(_skipped_by(c)) for c in _failed(report, "infra")}
    stale = [f"{s['check']} {s['resource']}" for s in SKIPS if id(s) not in used]
    assert not stale, f"skips that match no finding (remove them): {stale}"
    for skip in SKIPS:
        assert skip["reason"].strip(), skip
        assert "\n" not in skip["reason"], skip


def test_the_security_baseline_passes(report: dict[str, Any]) -> None:
    """The checks that carry the issue's promises are run and pass (not skipped, not absent)."""
    passed = {(c["check_id"], c["resource"]) for c in report["results"]["passed_checks"]}
    expected = {
        ("CKV_AZURE_34", "Microsoft.Storage/storageAccounts/blobServices/containers.containers"),  # private blobs
        ("CKV_AZURE_44", "Microsoft.Storage/storageAccounts.account"),  # TLS 1.2
        ("CKV_AZURE_3", "Microsoft.Storage/storageAccounts.account"),  # HTTPS only
        ("CKV_AZURE_140", "Microsoft.DocumentDB/databaseAccounts.account"),  # Cosmos local auth off
        ("CKV_AZURE_132", "Microsoft.DocumentDB/databaseAccounts.account"),  # no key-based metadata writes
        ("CKV_AZURE_70", "Microsoft.Web/sites.site"),  # HTTPS only
        ("CKV_AZURE_145", "Microsoft.Web/sites.site"),  # TLS 1.2
        ("CKV_AZURE_71", "Microsoft.Web/sites.site"),  # managed identity
        ("CKV_AZURE_78", "Microsoft.Web/sites.site"),  # no FTP
        # Key Vault purge protection is a parameter (on in prod): test_main_template.py checks it, not checkov.
    }
    assert expected <= passed, sorted(expected - passed)
