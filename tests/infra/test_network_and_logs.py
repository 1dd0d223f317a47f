"""The deployment package apart from the app's data, the audit logs, the private network option and the
app registration option (issue #30: defects 7 and 8, the `vnetEnabled` and `createEntraApp` options).

Microsoft's documentation these checks stand on:
- Host storage with an identity needs Storage Blob Data Owner on the account ("read and write access to
  blobs and the ability to create containers"; learn.microsoft.com/azure/azure-functions/functions-reference
  #connecting-to-host-storage-with-an-identity), and Durable's Azure Storage provider creates its own
  containers, queues and tables: the app's identity keeps account-wide blob rights, so the package that
  runs on the next cold start lives in a storage account the app's identity has no role on.
- Flex Consumption's VNet integration needs a subnet delegated to Microsoft.App/environments
  (learn.microsoft.com/azure/azure-functions/flex-consumption-plan#considerations).
- With a subnet, Flex Consumption sends all outbound traffic through the VNet; `vnetRouteAllEnabled` is not used
  there ("Flex Consumption plan deprecations", learn.microsoft.com/azure/azure-functions/functions-app-settings).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra import bicep

MAIN = bicep.parse(bicep.MAIN)
APP = bicep.module("function-app")

STORAGE_LOGS = {"StorageRead", "StorageWrite", "StorageDelete"}
COSMOS_LOGS = {"DataPlaneRequests", "QueryRuntimeStatistics", "ControlPlaneRequests"}
ROLE = {
    "blobDataOwner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "blobDataContributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
}


def dotted(node: Any) -> Any:
    """`a.b.c` for a property-accessor expression (pycep nests each step), anything else unchanged."""
    if isinstance(node, dict) and node.get("operator", {}).get("type") == "property_accessor":
        operands = node["operator"]["operands"]
        return f"{dotted(operands['operand_1'])}.{dotted(operands['operand_2'])}"
    return node


def module_call(name: str) -> dict[str, Any]:
    assert name in MAIN["modules"], f"main.bicep has no module {name}"
    return MAIN["modules"][name]


def passed(name: str) -> dict[str, Any]:
    return {key: dotted(value) for key, value in bicep.module_params(module_call(name)).items()}


def site() -> dict[str, Any]:
    return bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])


def role_ids(doc: dict[str, Any], assignment: dict[str, Any]) -> set[str]:
    """Role definition ids an assignment can name, directly or through the module's variables."""
    ids = {value for value in bicep.walk(assignment) if value in ROLE.values()}
    for name, var in doc.get("variables", {}).items():
        if bicep.mentions(assignment, name):
            ids |= {value for value in bicep.walk(var) if value in ROLE.values()}
    return ids


# ---- defect 7: the deployment package is out of the app identity's reach ------------------------------


def test_the_package_container_is_not_in_the_apps_storage_account() -> None:
    assert "deploymentContainerName" not in bicep.module_params(module_call("storage"))["containerNames"]
    assert passed("deploymentStorage")["containerName"] == "deploymentContainerName"


def test_flex_reads_the_package_from_the_deployment_account_with_the_deployment_identity() -> None:
    storage = site()["properties"]["functionAppConfig"]["deployment"]["storage"]
    assert storage["value"] == "${deploymentBlobEndpoint}${deploymentContainerName}"
    assert storage["authentication"] == {
        "type": "UserAssignedIdentity",
        "userAssignedIdentityResourceId": "deploymentIdentityId",
    }
    # The platform can only use an identity assigned to the site.
    assert "'${deploymentIdentityId}'" in site()["identity"]["userAssignedIdentities"]
    params = passed("functionApp")
    assert params["deploymentIdentityId"] == "deploymentIdentity.outputs.id"
    assert params["deploymentBlobEndpoint"] == "deploymentStorage.outputs.blobEndpoint"


def test_the_deployment_identity_is_its_own_and_the_app_never_uses_it() -> None:
    assert module_call("deploymentIdentity")["detail"]["path"] == "modules/identity.bicep"
    assert passed("deploymentIdentity")["name"] != passed("identity")["name"]
    settings = bicep.object_entries(APP, "identitySettings")
    assert settings["AZURE_CLIENT_ID"] == "identityClientId"
    assert settings["AzureWebJobsStorage__clientId"] == "identityClientId"
    assert site()["properties"]["keyVaultReferenceIdentity"] == "identityId"


def test_only_the_deployment_identity_and_the_operator_hold_roles_on_the_package_container() -> None:
    params = passed("deploymentStorage")
    assert params["principalId"] == "deploymentIdentity.outputs.principalId"
    assert "identity.outputs.principalId" not in params.values(), "the app's identity gets no role here"
    doc = bicep.module("deployment-storage")
    assignments = bicep.resources(doc, "Microsoft.Authorization/roleAssignments")
    assert assignments
    for name, assignment in assignments.items():
        config = bicep.body(assignment)
        assert config["scope"] == "container", f"{name}: scoped to the package container, not the account"
        assert role_ids(doc, assignment) == {ROLE["blobDataContributor"]}, name
    holders = {bicep.body(a)["properties"]["principalId"] for a in assignments.values()}
    assert holders == {"principalId", "operatorPrincipalId"}


def test_the_deployment_account_is_locked_like_the_apps() -> None:
    account = bicep.body(bicep.module("deployment-storage")["resources"]["account"])["properties"]
    assert account["allowSharedKeyAccess"] is False
    assert account["allowBlobPublicAccess"] is False
    assert account["minimumTlsVersion"] == "TLS1_2"
    assert account["supportsHttpsTrafficOnly"] is True


# ---- defect 8: audit and data-plane logs go to the workspace -------------------------------------------


def _diagnostic_settings() -> dict[str, dict[str, Any]]:
    doc = bicep.module("diagnostics")
    return {name: bicep.body(r) for name, r in bicep.resources(doc, "Microsoft.Insights/diagnosticSettings").items()}


def _categories(setting: dict[str, Any]) -> set[str]:
    logs = setting["properties"]["logs"]
    if isinstance(logs, str):  # a variable of the module
        logs = bicep.variable(bicep.module("diagnostics"), logs)
    return {log["category"] for log in logs if log.get("enabled") is True}


def _settings_on(target: str) -> list[dict[str, Any]]:
    return [s for s in _diagnostic_settings().values() if s["scope"] == target]


def test_every_diagnostic_setting_sends_to_the_workspace() -> None:
    settings = _diagnostic_settings()
    assert settings
    for name, setting in settings.items():
        assert setting["properties"]["workspaceId"] == "workspaceId", name
    assert passed("diagnostics")["workspaceId"] == "monitoring.outputs.logAnalyticsId"


def test_key_vault_audit_events_are_logged() -> None:
    (setting,) = _settings_on("vault")
    assert "AuditEvent" in _categories(setting)


@pytest.mark.parametrize("service", ["appBlob", "appQueue", "appTable", "deploymentBlob"])
def test_storage_reads_writes_and_deletes_are_logged(service: str) -> None:
    (setting,) = _settings_on(service)
    assert _categories(setting) >= STORAGE_LOGS
    kind = {"Blob": "blobServices", "Queue": "queueServices", "Table": "tableServices"}[
        service.removeprefix("app").removeprefix("deployment")
    ]
    existing = bicep.module("diagnostics")["resources"][service]
    assert existing["type"] == f"Microsoft.Storage/storageAccounts/{kind}"
    assert existing["existing"] is True


def test_cosmos_data_plane_logs_go_to_resource_specific_tables() -> None:
    (setting,) = _settings_on("cosmos")
    assert _categories(setting) >= COSMOS_LOGS
    assert setting["properties"]["logAnalyticsDestinationType"] == "Dedicated"


def test_function_app_logs_are_sent_unless_switched_off() -> None:
    (setting,) = _settings_on("functionApp")
    assert "FunctionAppLogs" in _categories(setting)
    resource = bicep.module("diagnostics")["resources"]["functionAppLogSetting"]
    assert bicep.condition(resource) == "functionAppLogs"
    assert MAIN["parameters"]["functionAppDiagnosticsEnabled"]["default"] is True
    assert passed("diagnostics")["functionAppLogs"] == "functionAppDiagnosticsEnabled"


def test_diagnostics_covers_the_resources_main_deploys() -> None:
    params = passed("diagnostics")
    assert params["keyVaultName"] == "keyVault.outputs.name"
    assert params["storageAccountName"] == "storage.outputs.name"
    assert params["deploymentStorageAccountName"] == "deploymentStorage.outputs.name"
    assert params["cosmosAccountName"] == "cosmos.outputs.name"
    assert params["functionAppName"] == "functionApp.outputs.name"
    assert "logAnalyticsId" in bicep.module("monitoring")["outputs"]


# ---- option: vnetEnabled ---------------------------------------------------------------------------------


def test_vnet_is_an_option_off_by_default() -> None:
    assert MAIN["parameters"]["vnetEnabled"]["default"] is False
    assert bicep.condition(module_call("network")) == "vnetEnabled"


def test_the_app_subnet_is_delegated_to_container_apps_environments() -> None:
    vnet = bicep.body(bicep.module("network")["resources"]["vnet"])
    subnets = {s["name"]: s["properties"] for s in vnet["properties"]["subnets"]}
    app = subnets["app"]
    assert [d["properties"]["serviceName"] for d in app["delegations"]] == ["Microsoft.App/environments"]
    endpoints = subnets["private-endpoints"]
    assert endpoints["privateEndpointNetworkPolicies"] == "Disabled"
    assert not endpoints.get("delegations")


def test_every_store_has_a_private_endpoint_with_its_dns_zone() -> None:
    doc = bicep.module("network")
    endpoints = bicep.resources(doc, "Microsoft.Network/privateEndpoints")
    assert len(endpoints) == 1, "one looped resource over the endpoint table"
    table = bicep.variable(doc, "endpoints")
    found = {(dotted(e["target"]), e["group"]) for e in table}
    assert found == {
        ("storageAccountId", "blob"),
        ("storageAccountId", "queue"),
        ("storageAccountId", "table"),
        ("deploymentStorageAccountId", "blob"),
        ("cosmosAccountId", "Sql"),
        ("keyVaultId", "vault"),
    }
    zones = bicep.variable(doc, "zones")
    assert set(zones) == {"blob", "queue", "table", "Sql", "vault"}
    assert bicep.mentions(zones["Sql"], "privatelink.documents.azure.com")
    assert bicep.mentions(zones["vault"], "privatelink.vaultcore.azure.net")
    groups = bicep.resources(doc, "Microsoft.Network/privateEndpoints/privateDnsZoneGroups")
    assert len(groups) == 1
    links = bicep.resources(doc, "Microsoft.Network/privateDnsZones/virtualNetworkLinks")
    assert len(links) == 1
    assert bicep.body(next(iter(links.values())))["properties"]["registrationEnabled"] is False


def test_public_network_access_follows_the_switch() -> None:
    expected = {
        "operator": {
            "type": "conditional",
            "operands": {"condition": "vnetEnabled", "true_value": "Disabled", "false_value": "Enabled"},
        }
    }
    for name in ("storage", "deploymentStorage", "cosmos", "keyVault"):
        assert bicep.module_params(module_call(name))["publicNetworkAccess"] == expected, name
    for name in ("storage", "deployment-storage", "cosmos", "keyvault"):
        doc = bicep.module(name)
        resource = next(
            r for r in doc["resources"].values() if "publicNetworkAccess" in bicep.body(r).get("properties", {})
        )
        assert bicep.body(resource)["properties"]["publicNetworkAccess"] == "publicNetworkAccess", name


def test_the_app_joins_the_subnet() -> None:
    properties = site()["properties"]
    assert bicep.mentions(properties["virtualNetworkSubnetId"], "virtualNetworkSubnetId")
    subnet = bicep.module_params(module_call("functionApp"))["virtualNetworkSubnetId"]
    assert bicep.mentions(subnet, "vnetEnabled")
    assert any(dotted(v) == "network.outputs.appSubnetId" for v in bicep.walk(subnet))


# ---- option: createEntraApp -----------------------------------------------------------------------------

ENTRA_FILE = bicep.MODULES / "entra-app.bicep"


def test_the_app_registration_is_an_option_off_by_default() -> None:
    assert MAIN["parameters"]["createEntraApp"]["default"] is False
    assert bicep.condition(module_call("entraApp")) == "createEntraApp"
    assert passed("entraApp")["managedIdentityPrincipalId"] == "identity.outputs.principalId"
    # The created registration is the token audience the app (and Easy Auth) checks.
    audience = bicep.module_params(module_call("functionApp"))["entraClientId"]
    assert bicep.mentions(audience, "createEntraApp")
    assert any(dotted(v) == "entraApp.outputs.clientId" for v in bicep.walk(audience))


def test_the_graph_extension_is_declared_and_configured() -> None:
    assert ENTRA_FILE.read_text().lstrip().startswith("extension microsoftGraphV1")
    assert "microsoftGraphV1" in bicep.parse(ENTRA_FILE)["extensions"]
    config = json.loads((bicep.INFRA / "bicepconfig.json").read_text())
    assert config["extensions"]["microsoftGraphV1"].startswith(
        "br:mcr.microsoft.com/bicep/extensions/microsoftgraph/v1.0:"
    )


def test_the_registration_exposes_user_impersonation_and_preauthorises_the_given_clients() -> None:
    doc = bicep.parse(ENTRA_FILE)
    (app,) = bicep.resources(doc, "Microsoft.Graph/applications").values()
    config = bicep.body(app)
    scopes = bicep.variable(doc, "scopes")
    assert [s["value"] for s in scopes] == ["user_impersonation"]
    assert config["api"]["oauth2PermissionScopes"] == "scopes"
    assert config["api"]["requestedAccessTokenVersion"] == 2
    assert bicep.mentions(config["api"]["preAuthorizedApplications"], "preAuthorizedClientIds")
    assert "passwordCredentials" not in config, "no client secret"
    assert "keyCredentials" not in config


def test_the_managed_identity_is_the_registrations_only_credential() -> None:
    doc = bicep.parse(ENTRA_FILE)
    (credential,) = bicep.resources(doc, "Microsoft.Graph/applications/federatedIdentityCredentials").values()
    config = bicep.body(credential)
    assert config["audiences"] == ["api://AzureADTokenExchange"]
    assert config["subject"] == "managedIdentityPrincipalId"
    assert config["issuer"] == "${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0"
