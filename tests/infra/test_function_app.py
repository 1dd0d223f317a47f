"""What Azure does with function-app.bicep and host.json (issue #30): Easy Auth restricted to known clients and
wired to the MCP Protected Resource Metadata, secrets that survive a redeploy without the secure parameters,
Microsoft's Durable-on-Flex guidance, settings the deployment owns, and the Python 3.13 and OpenTelemetry
options. Each test reads the parsed bicep (tests/infra/bicep.py) or host.json, never a copy of them."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.infra import bicep

MAIN = bicep.parse(bicep.MAIN)
APP = bicep.module("function-app")
HOST = json.loads((bicep.ROOT / "host.json").read_text())
SETTINGS_RESOURCE = bicep.body(bicep.resources(APP, "Microsoft.Web/sites/config")["settings"])
OWNED = bicep.object_entries(APP, "owned")


def _param(name: str) -> dict[str, Any]:
    param: dict[str, Any] = APP["parameters"][name]
    return param


def _decorator(param: dict[str, Any], kind: str) -> Any:
    return next((d.get("argument") for d in param["decorators"] if d["type"] == kind), None)


def _auth() -> dict[str, Any]:
    return bicep.body(bicep.resources(APP, "Microsoft.Web/sites/config")["auth"])


def _seconds(timespan: str) -> int:
    hours, minutes, seconds = (int(part) for part in timespan.split(":"))
    return hours * 3600 + minutes * 60 + seconds


# ---- Defect 2: Easy Auth admits only known clients, and names the app's scope in its PRM ---------------


def test_easy_auth_admits_only_listed_client_applications_else_the_app_itself() -> None:
    param = _param("easyAuthAllowedClientApplications")
    assert param["type"] == "array"
    assert param["default"] == []
    policy = _auth()["properties"]["identityProviders"]["azureActiveDirectory"]["validation"]
    assert policy["defaultAuthorizationPolicy"]["allowedApplications"] == "easyAuthClientApplications"
    # Empty would mean "any client in the tenant" (the documented meaning of an empty list): it falls back to
    # the app's own registration instead.
    allowed = bicep.variable(APP, "easyAuthClientApplications")
    assert bicep.mentions(bicep.variable(APP, "allowedClientApplications"), "easyAuthAllowedClientApplications")
    assert bicep.mentions(allowed, "allowedClientApplications")
    assert bicep.mentions(allowed, "entraClientId")
    assert allowed["operator"]["type"] == "conditional"


def test_easy_auth_restricts_principals_when_given() -> None:
    for name in ("easyAuthAllowedPrincipals", "easyAuthAllowedGroups"):
        assert _param(name)["type"] == "array", name
        assert _param(name)["default"] == [], name
    policy = _auth()["properties"]["identityProviders"]["azureActiveDirectory"]["validation"]
    assert policy["defaultAuthorizationPolicy"]["allowedPrincipals"] == "allowedPrincipals"
    principals = bicep.object_entries(APP, "allowedPrincipals")
    assert principals == {"identities": "easyAuthAllowedPrincipals", "groups": "easyAuthAllowedGroups"}


def test_easy_auth_serves_protected_resource_metadata_with_the_apps_scope() -> None:
    prm = bicep.variable(APP, "easyAuthSettings")
    operands = prm["operator"]["operands"]
    assert operands["condition"] == "easyAuthOn"
    assert operands["false_value"] == {}
    scopes = operands["true_value"]["WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES"]
    assert bicep.mentions(scopes, "easyAuthScopes")
    default_scope = bicep.variable(APP, "easyAuthDefaultScope")
    assert default_scope == "${entraResource}/user_impersonation"
    # The app's own default scope (FIREBREAK_ENTRA_SCOPE), so a token Easy Auth admits also passes the app.
    from shared.core.settings import Settings

    assert default_scope.endswith("/" + Settings.model_fields["entra_scope"].default)
    assert "easyAuthSettings" in json.dumps(bicep.variable(APP, "owned"))


def test_easy_auth_stays_off_by_default_with_the_reason_written_down() -> None:
    assert _param("easyAuthEnabled")["default"] is False
    text = (bicep.MODULES / "function-app.bicep").read_text()
    assert "shared/identity" in text, "say why Easy Auth is off: the app validates Entra tokens itself"


# ---- Defect 3: a redeploy without the secure parameters keeps every secret --------------------------------


def test_a_secret_reference_is_written_when_given_now_or_already_on_the_site() -> None:
    """A redeploy without the secure parameter keeps the reference an earlier deployment wrote (the vault still
    holds the secret); a secret never given gets no reference (it would stay unresolved for ever)."""
    assert bicep.variable(APP, "vaultRef") == "@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName="
    current = bicep.variable(APP, "currentSettings")
    listed = current["operator"]["operands"]["operand_1"]["function"]
    assert listed["type"] == "list"
    assert listed["parameters"]["arg_1"] == "${site.id}/config/appsettings"
    known = bicep.variable(APP, "knownSecretSettings")["function"]
    assert known["type"] == "union"
    assert list(known["parameters"].values()) == ["currentSettings", "givenSecretSettings"]
    arguments = list(bicep.variable(APP, "secretReferences")["function"]["parameters"].values())
    assert len(arguments) == len(_references())
    for argument in arguments:
        conditional = argument["operator"]["operands"]
        condition = conditional["condition"]["function"]
        (name,) = conditional["true_value"]
        assert condition["type"] == "contains"
        assert condition["parameters"] == {"container": "knownSecretSettings", "item_to_find": name}
        assert conditional["false_value"] == {}
        assert re.fullmatch(r"\$\{vaultRef\}[a-z0-9-]+\)", conditional["true_value"][name]), name


def test_main_marks_each_given_secret_by_its_setting_name() -> None:
    given = bicep.object_entries(MAIN, "givenSecretSettings")
    assert set(given) == set(_references())
    assert bicep.module_params(MAIN["modules"]["functionApp"])["givenSecretSettings"] == "givenSecretSettings"


def test_the_references_name_the_secrets_main_bicep_stores() -> None:
    vault_names = {value.removeprefix("${vaultRef}").removesuffix(")") for value in _references().values()}
    stored = {
        entry["name"]
        for entry in bicep.walk(bicep.variable(MAIN, "secretEntries"))
        if isinstance(entry, dict) and "name" in entry
    }
    assert vault_names == stored


def test_main_passes_the_vault_not_the_references() -> None:
    call = bicep.module_params(MAIN["modules"]["functionApp"])
    assert "secretSettings" not in call
    assert bicep.mentions(call["keyVaultName"], "keyVault")


def test_secret_references_are_owned_by_the_deployment() -> None:
    assert set(_references()) <= set(OWNED)


def _references() -> dict[str, str]:
    references: dict[str, str] = bicep.object_entries(APP, "secretReferences")
    return references


# ---- Defect 5: Durable Functions on Flex Consumption -------------------------------------------------------


def test_always_ready_instances_for_the_durable_group() -> None:
    param = _param("alwaysReadyDurableInstances")
    assert param["type"] == "int"
    assert param["default"] == 0
    assert _decorator(param, "min_value") == 0
    groups = [
        node
        for node in bicep.walk(bicep.variable(APP, "alwaysReady"))
        if isinstance(node, dict) and node.get("name") in ("http", "durable")
    ]
    assert {g["name"]: g["instanceCount"] for g in groups} == {
        "http": "alwaysReadyHttpInstances",
        "durable": "alwaysReadyDurableInstances",
    }
    site = bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])
    assert site["properties"]["functionAppConfig"]["scaleAndConcurrency"]["alwaysReady"] == "alwaysReady"


def test_durable_queue_polling_is_at_most_ten_seconds() -> None:
    provider = HOST["extensions"]["durableTask"]["storageProvider"]
    assert 0 < _seconds(provider["maxQueuePollingInterval"]) <= 10


def test_the_scheduler_overrides_both_connection_properties() -> None:
    """The Durable scale extension reads storageProvider.connectionName before connectionStringName, so the
    host.json connectionName (AzureWebJobsStorage) must be overridden too, to the same scheduler setting."""
    scheduler = bicep.object_entries(APP, "schedulerSettings")
    prefix = "AzureFunctionsJobHost__extensions__durableTask__storageProvider__"
    by_name = scheduler[f"{prefix}connectionName"]
    by_string = scheduler[f"{prefix}connectionStringName"]
    assert by_name == by_string == "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"
    assert by_name in scheduler


def test_the_extension_bundle_carries_the_durable_task_scheduler_provider() -> None:
    """The azureManaged provider (Microsoft.Azure.WebJobs.Extensions.DurableTask.AzureManaged) is in the
    non-preview bundle from 4.30.0 (Azure/azure-functions-extension-bundles, tag 4.30.0)."""
    match = re.fullmatch(r"\[(\d+)\.(\d+)\.(\d+), 5\.0\.0\)", HOST["extensionBundle"]["version"])
    assert match, HOST["extensionBundle"]["version"]
    assert tuple(int(part) for part in match.groups()) >= (4, 30, 0)


def test_http_limits_flex_ignores_are_gone() -> None:
    http = HOST["extensions"]["http"]
    assert "maxConcurrentRequests" not in http
    assert "maxOutstandingRequests" not in http


# ---- Defect 1 leftover: stdio MCP servers stay off on Azure -------------------------------------------------


def test_stdio_mcp_servers_are_off_and_owned_by_the_deployment() -> None:
    from shared.investigations.mcp_servers import ALLOW_STDIO_SETTING

    assert OWNED[ALLOW_STDIO_SETTING] == "false"
    arguments = list(SETTINGS_RESOURCE["properties"]["function"]["parameters"].values())
    assert arguments.index("appSettings") < arguments.index("owned")


# ---- Options: Python 3.13, OpenTelemetry on the host -----------------------------------------------------------


def test_python_version_is_a_parameter_of_311_or_313() -> None:
    param = _param("pythonVersion")
    assert _decorator(param, "allowed") == ["3.11", "3.13"]
    assert param["default"] == "3.11"
    site = bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])
    assert site["properties"]["functionAppConfig"]["runtime"] == {"name": "python", "version": "pythonVersion"}
    # Still needed on 3.11 for the HTTP streams extension; harmless on 3.13.
    assert OWNED["PYTHON_ENABLE_INIT_INDEXING"] == "1"


def test_opentelemetry_on_the_host_is_an_opt_in_setting() -> None:
    param = _param("openTelemetryEnabled")
    assert param["type"] == "bool"
    assert param["default"] is False
    otel = bicep.variable(APP, "openTelemetrySettings")["operator"]["operands"]
    assert otel["condition"] == "openTelemetryEnabled"
    assert otel["false_value"] == {}
    assert otel["true_value"] == {
        "AzureFunctionsJobHost__telemetryMode": "OpenTelemetry",
        "PYTHON_ENABLE_OPENTELEMETRY": "true",
    }
    assert "openTelemetrySettings" in json.dumps(bicep.variable(APP, "owned"))
    # host.json keeps the default (Application Insights) mode: the override is the switch.
    assert "telemetryMode" not in HOST
    # The host exports with the identity in either mode (APPLICATIONINSIGHTS_AUTHENTICATION_STRING).
    assert OWNED["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"] == "ClientId=${identityClientId};Authorization=AAD"
