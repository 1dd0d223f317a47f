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


# The hosting plans' markers (shared/core/hosting.py, after the Functions host's EnvironmentExtensions.cs).
FLEX = {"WEBSITE_SKU": "FlexConsumption", "WEBSITE_SITE_NAME": "fb-prod"}  # Flex sets no WEBSITE_INSTANCE_ID
FLEX_PLACEHOLDER = {"CONTAINER_NAME": "fb-placeholder", "LEGION_SERVICE_HOST": "10.0.0.4"}


@pytest.mark.parametrize(
    ("env", "on_azure"),
    [
        ({"WEBSITE_INSTANCE_ID": "abc123"}, True),  # Consumption, Elastic Premium, Dedicated
        (FLEX, True),
        ({"WEBSITE_SKU": "flexconsumption"}, True),  # the host compares the SKU ignoring case
        (FLEX_PLACEHOLDER, True),
        ({"WEBSITE_POD_NAME": "fb-pod", "LEGION_SERVICE_HOST": "10.0.0.4"}, True),
        ({}, False),
        # Container runtimes name every container: a developer's or a CI runner's is not Azure.
        ({"CONTAINER_NAME": "dev-box"}, False),
        ({"WEBSITE_SKU": "Standard"}, False),
        # Not a setting: no app setting can claim (or deny) the hosting plan.
        ({"FIREBREAK_RUNNING_ON_AZURE": "true"}, False),
    ],
)
def test_running_on_azure_is_read_from_the_hosting_plans_markers(env: dict[str, str], on_azure: bool) -> None:
    assert Settings.from_env(env).running_on_azure is on_azure


def test_flex_consumption_refuses_dev_mode_and_stdio_mcp_servers() -> None:
    from shared.investigations.settings import InvestigationSettings

    with pytest.raises(SettingsError, match="FIREBREAK_DEV_MODE=true is refused on Azure"):
        Settings.from_env({**FLEX, "FIREBREAK_DEV_MODE": "true"})
    with pytest.raises(SettingsError, match="FIREBREAK_DEV_MODE"):
        Settings.from_env({**FLEX_PLACEHOLDER, "FIREBREAK_DEV_MODE": "true"})
    stdio = {
        "FIREBREAK_INVESTIGATIONS_MCP_SERVERS": '[{"name": "local", "command": "npx", "args": ["x"]}]',
        "FIREBREAK_INVESTIGATIONS_MCP_ALLOW_STDIO": "true",
    }
    with pytest.raises(SettingsError, match="FIREBREAK_INVESTIGATIONS_MCP_ALLOW_STDIO=true is refused on Azure"):
        Settings.from_env({**FLEX, **stdio}, sections=(InvestigationSettings,))
