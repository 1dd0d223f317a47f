"""`python -m shared.app.api_keys_cli`: mint a key from the environment alone (as against a deployment, where
the operator's az login reaches Cosmos), use it, revoke it; a local.settings.json is ignored when told."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shared.app.wiring import build_deps, load_settings
from tests.infra.bicep import ROOT


def _cli(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shared.app.api_keys_cli", *args],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_mint_from_the_environment_only_then_revoke(app_env: dict[str, str], tmp_path: Path) -> None:
    # A local.settings.json pointing elsewhere must not be read with --no-local-settings.
    (tmp_path / "local.settings.json").write_text(json.dumps({"Values": {"FIREBREAK_COSMOS_DATABASE": "elsewhere"}}))
    minted = _cli(app_env, "--no-local-settings", "mint", "--workspace", "ws-cli", "--user", "alice", cwd=tmp_path)
    assert minted.returncode == 0, minted.stderr[-2000:]
    key = json.loads(minted.stdout)
    assert "not shown again" in minted.stderr
    assert key["key"] not in minted.stderr

    deps = build_deps(load_settings(app_env))
    try:
        principal = await deps.api_keys.verify(key["key"])
        assert principal is not None
        assert (principal.workspace_id, principal.user_id) == ("ws-cli", "alice")
        revoked = _cli(app_env, "--no-local-settings", "revoke", key["key_id"], cwd=tmp_path)
        assert revoked.returncode == 0
        assert revoked.stdout.strip() == "revoked"
        # Another process's store (this one cached the key: workers re-read it after CACHE_SECONDS).
        fresh = build_deps(load_settings(app_env))
        try:
            assert await fresh.api_keys.verify(key["key"]) is None
        finally:
            await fresh.aclose()
        unknown = _cli(app_env, "--no-local-settings", "revoke", "0000000000000000", cwd=tmp_path)
        assert unknown.returncode == 1
        assert unknown.stdout.strip() == "no such key"
    finally:
        await deps.aclose()
