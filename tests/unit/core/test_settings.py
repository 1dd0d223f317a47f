"""Settings come from the environment when asked, with platform aliases and safe defaults."""

from __future__ import annotations

import pytest

from shared.app.wiring import load_settings
from shared.core.request_checks import allowed_hosts_and_origins
from shared.core.settings import Settings, SettingsError
from shared.health.settings import HealthSettings
from shared.neubird.settings import NeubirdSettings
from shared.runs.settings import RunSettings


def test_defaults_are_safe() -> None:
    s = Settings.from_env({})
    assert s.dev_mode is False
    assert s.environment == "azure"
    assert s.create_resources is False
    assert not s.llm_configured
    assert not s.section(NeubirdSettings).configured


def test_prefixed_and_platform_names() -> None:
    s = Settings.from_env(
        {
            "FIREBREAK_DEV_MODE": "true",
            "COSMOS_ENDPOINT": "https://c",
            "AzureWebJobsStorage": "UseDevelopmentStorage=true",
            "FIREBREAK_MCP_ALLOWED_HOSTS": "a.example, b.example:443",
            "AZURE_OPENAI_ENDPOINT": "https://oai",
            "AZURE_OPENAI_DEPLOYMENT": "gpt",
        }
    )
    assert s.dev_mode
    assert s.cosmos_endpoint == "https://c"
    assert s.blob_connection_string == "UseDevelopmentStorage=true"
    assert s.mcp_allowed_hosts == ["a.example", "b.example:443"]
    assert s.llm_configured


def test_allow_list_has_loopback_only_locally_and_the_app_host_on_azure() -> None:
    azure = Settings.from_env({"FIREBREAK_MCP_ALLOWED_HOSTS": "api.example"})
    hosts, origins = allowed_hosts_and_origins(azure, "fb.azurewebsites.net")
    assert "127.0.0.1:*" not in hosts
    assert "api.example" in hosts
    assert "fb.azurewebsites.net" in hosts
    assert "https://fb.azurewebsites.net" in origins
    local_hosts, _ = allowed_hosts_and_origins(Settings.from_env({"FIREBREAK_ENVIRONMENT": "local"}), None)
    assert "127.0.0.1:*" in local_hosts
    assert "localhost:*" in local_hosts


def test_capability_sections_read_their_own_prefixed_and_alias_names() -> None:
    s = load_settings(
        {
            "FIREBREAK_HEALTH_CACHE_SECONDS": "0",
            "NEUBIRD_BASE_URL": "https://prod.app.neubird.ai/api",
            "NEUBIRD_EMAIL": "sre@example.com",
            "FIREBREAK_RUN_RECORD_TTL_DAYS": "7",
            "FIREBREAK_SECRETS_KEY": "k",
        }
    )
    assert s.section(HealthSettings).cache_seconds == 0
    assert s.section(NeubirdSettings).base_url == "https://prod.app.neubird.ai/api"
    # An account needs the URL, the email and the password: two of three is not configured.
    assert not s.section(NeubirdSettings).configured
    assert s.section(NeubirdSettings).email == "sre@example.com"
    assert s.section(RunSettings).run_record_ttl_days == 7
    assert s.section(RunSettings).secrets_key == "k"
    # The FIREBREAK_ name wins over the alias.
    both = load_settings(
        {
            "FIREBREAK_NEUBIRD_BASE_URL": "https://a.app.neubird.ai/api",
            "NEUBIRD_BASE_URL": "https://b.app.neubird.ai/api",
        }
    )
    assert both.section(NeubirdSettings).base_url == "https://a.app.neubird.ai/api"


def test_a_bad_section_value_is_refused_when_settings_are_read() -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_HEALTH_CACHE_SECONDS"):
        load_settings({"FIREBREAK_HEALTH_CACHE_SECONDS": "-1"})
    with pytest.raises(SettingsError, match="FIREBREAK_PERF_KEEP_LAST_N"):
        load_settings({"FIREBREAK_PERF_KEEP_LAST_N": "0"})
    with pytest.raises(SettingsError, match="FIREBREAK_MAX_REQUEST_BYTES"):
        Settings.from_env({"FIREBREAK_MAX_REQUEST_BYTES": "lots"})


def test_a_section_nobody_collected_has_its_defaults_and_with_section_replaces_one() -> None:
    bare = Settings.from_env({})
    assert bare.section(HealthSettings) == HealthSettings()
    tuned = load_settings({}).with_section(HealthSettings(cache_seconds=3))
    assert tuned.section(HealthSettings).cache_seconds == 3
    assert len([x for x in tuned.sections if isinstance(x, HealthSettings)]) == 1
