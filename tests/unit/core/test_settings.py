"""Settings come from the environment when asked, with platform aliases and safe defaults."""

from __future__ import annotations

from shared.core.request_checks import allowed_hosts_and_origins
from shared.core.settings import Settings


def test_defaults_are_safe() -> None:
    s = Settings.from_env({})
    assert s.dev_mode is False
    assert s.environment == "azure"
    assert s.create_resources is False
    assert not s.llm_configured
    assert not s.neubird_configured


def test_prefixed_and_platform_names() -> None:
    s = Settings.from_env({
        "FIREBREAK_DEV_MODE": "true", "COSMOS_ENDPOINT": "https://c", "AzureWebJobsStorage": "UseDevelopmentStorage=true",
        "FIREBREAK_MCP_ALLOWED_HOSTS": "a.example, b.example:443", "AZURE_OPENAI_ENDPOINT": "https://oai", "AZURE_OPENAI_DEPLOYMENT": "gpt",
    })
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
