"""An App Service Key Vault reference that has not resolved arrives as its literal text: settings treat it as unset.

App Service documents that an unresolved reference is passed to the app as the reference string itself
(learn.microsoft.com/azure/app-service/app-service-key-vault-references, "Troubleshoot"): on the first start,
before the identity's role assignment has propagated, every secret setting reads `@Microsoft.KeyVault(...)`.
"""

from __future__ import annotations

import logging

import pytest

from shared.app.infra_spec import SECRET_SETTINGS
from shared.app.wiring import load_settings
from shared.core.keyvault_references import is_unresolved_reference, unresolved_message
from shared.investigations.settings import InvestigationSettings
from shared.neubird.settings import NeubirdSettings
from shared.runs.settings import RunSettings

REF = "@Microsoft.KeyVault(SecretUri=https://kv-fb.vault.azure.net/secrets/{name}/)"


def _ref(name: str) -> str:
    return REF.format(name=name.lower().replace("_", "-"))


@pytest.mark.parametrize(
    "value",
    [
        "@Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/s/)",
        "@microsoft.keyvault(VaultName=v;SecretName=s)",
        "  @Microsoft.KeyVault ( VaultName=v;SecretName=s)",
        "@ Microsoft.KeyVault(VaultName=v;SecretName=s)",
    ],
)
def test_references_are_recognised_whatever_the_case_and_spaces(value: str) -> None:
    assert is_unresolved_reference(value)


@pytest.mark.parametrize("value", ["", "secret", "https://v.vault.azure.net/secrets/s", "x@Microsoft.KeyVault("])
def test_other_values_are_not_references(value: str) -> None:
    assert not is_unresolved_reference(value)


def test_unresolved_secret_and_plain_settings_load_as_unset_and_are_named(caplog: pytest.LogCaptureFixture) -> None:
    env = {name: _ref(name) for name in SECRET_SETTINGS}
    # Non-secret settings with validators that reject the reference text (a URL, a JSON list, a number).
    env |= {
        "FIREBREAK_PUBLIC_BASE_URL": _ref("base"),
        "FIREBREAK_ENTRA_TRUSTED_ISSUERS": _ref("issuers"),
        "FIREBREAK_RUN_RECORD_TTL_DAYS": _ref("ttl"),
        "NEUBIRD_BASE_URL": _ref("neubird"),
        "FIREBREAK_ENVIRONMENT": "local",
    }
    with caplog.at_level(logging.WARNING, logger="firebreak.settings"):
        s = load_settings(env)
    assert s.section(RunSettings).secrets_key is None
    assert s.section(RunSettings).run_record_ttl_days == 30
    assert s.section(NeubirdSettings).password is None
    assert s.section(NeubirdSettings).base_url is None
    assert s.llm.api_key is None
    assert s.cosmos_key is None
    assert s.public_base_url is None
    assert s.entra_trusted_issuers == []
    assert s.section(InvestigationSettings).mcp_servers == InvestigationSettings().mcp_servers
    assert s.environment == "local"
    assert set(s.unresolved_references) == set(env) - {"FIREBREAK_ENVIRONMENT"}
    # One warning per setting, naming it, never the reference text.
    warned = [r.getMessage() for r in caplog.records if r.name == "firebreak.settings"]
    assert len(warned) == len(s.unresolved_references)
    assert all("vault.azure.net" not in m for m in warned)
    assert any(m.startswith("FIREBREAK_SECRETS_KEY: Key Vault reference not resolved") for m in warned)


def test_the_message_names_the_setting_and_what_to_check() -> None:
    message = unresolved_message("FIREBREAK_SECRETS_KEY")
    assert message.startswith("FIREBREAK_SECRETS_KEY: Key Vault reference not resolved")
    assert "Key Vault Secrets User" in message
    assert "secret name" in message


def test_settings_without_references_name_none() -> None:
    assert load_settings({"FIREBREAK_SECRETS_KEY": "A" * 43 + "="}).unresolved_references == ()
