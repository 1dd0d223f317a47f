"""Settings that would open a deployed app are refused when settings load, naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devhost.stack import Stack
from shared.core.settings import Settings, SettingsError

ROOT = Path(__file__).resolve().parents[3]


def test_dev_mode_is_refused_on_azure() -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_DEV_MODE"):
        Settings.from_env({"FIREBREAK_DEV_MODE": "true", "WEBSITE_INSTANCE_ID": "abc123"})
    assert Settings.from_env({"FIREBREAK_DEV_MODE": "false", "WEBSITE_INSTANCE_ID": "abc123"}).dev_mode is False
    assert Settings.from_env({"FIREBREAK_DEV_MODE": "true"}).dev_mode is True  # local runs


def test_entra_audience_without_issuer_is_refused() -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_ENTRA_TENANT_ID"):
        Settings.from_env(
            {"FIREBREAK_ENTRA_AUDIENCE": "api://x", "FIREBREAK_ENTRA_JWKS_URL": "https://keys.example/keys"}
        )
    assert (
        Settings.from_env({"FIREBREAK_ENTRA_AUDIENCE": "api://x", "FIREBREAK_ENTRA_TENANT_ID": "t"}).entra_audience
        == "api://x"
    )


def test_example_settings_do_not_deploy_dev_mode_but_the_local_stack_sets_it(tmp_path: Path) -> None:
    values = json.loads((ROOT / "local.settings.example.json").read_text())["Values"]
    assert "FIREBREAK_DEV_MODE" not in values
    assert Stack.at(tmp_path, 20000, persist_cosmos=False).app_settings()["FIREBREAK_DEV_MODE"] == "true"
