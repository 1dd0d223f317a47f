"""Findings of the outside review of the issue #30 deployment (what ARM, Entra and Flex Consumption do with it).

Sources the checks stand on:
- Any user-assigned identity attached to a site can be requested by the app's code from the managed identity
  endpoint (learn.microsoft.com/azure/app-service/overview-managed-identity, "REST endpoint reference"): the
  deployment identity is separate from the SDKs' identity, not out of the code's reach. Versioning and logs
  make a planted package visible and reversible.
- Identifier URIs need a unique tenant identifier where the app-management policy asks for one
  (learn.microsoft.com/entra/identity-platform/identifier-uri-restrictions: api://<tenantId>/<string>), and a
  scope resolves against the registration's identifierUris (Azure-Samples/remote-mcp-functions-python,
  infra/app/api.bicep wires `authIdentifierUri` into the PRM scope and allowedAudiences).
- Flex Consumption ignores site.vnetRouteAllEnabled ("Flex Consumption plan deprecations" in
  learn.microsoft.com/azure/azure-functions/functions-app-settings).
- Subnets created with newer Microsoft.Network API versions are private by default
  (learn.microsoft.com/azure/virtual-network/ip-services/default-outbound-access).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.infra import bicep

MAIN = bicep.parse(bicep.MAIN)
SUBSCRIPTION = bicep.parse(bicep.INFRA / "main.subscription.bicep")
APP = bicep.module("function-app")
OWNED = bicep.object_entries(APP, "owned")
DEPLOY_DOC = (bicep.ROOT / "docs" / "deploy.md").read_text()
INFRA_README = (bicep.INFRA / "README.md").read_text()
AZD_FILES = (bicep.AZD_PARAMS, bicep.INFRA / "main.subscription.parameters.json")


def _dotted(node: Any) -> Any:
    if isinstance(node, dict) and node.get("operator", {}).get("type") == "property_accessor":
        operands = node["operator"]["operands"]
        return f"{_dotted(operands['operand_1'])}.{_dotted(operands['operand_2'])}"
    return node


def _passed_to_app() -> dict[str, Any]:
    return bicep.module_params(MAIN["modules"]["functionApp"])


def _auth_validation() -> dict[str, Any]:
    auth = bicep.body(bicep.resources(APP, "Microsoft.Web/sites/config")["auth"])
    validation: dict[str, Any] = auth["properties"]["identityProviders"]["azureActiveDirectory"]["validation"]
    return validation


def _site() -> dict[str, Any]:
    return bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])


# ---- 1: the deployment identity is reachable from app code: say so, and make a planted package visible -------


def test_the_package_account_keeps_versions_to_find_and_roll_back_a_planted_package() -> None:
    doc = bicep.module("deployment-storage")
    (service,) = bicep.resources(doc, "Microsoft.Storage/storageAccounts/blobServices").values()
    properties = bicep.body(service)["properties"]
    assert properties["isVersioningEnabled"] is True
    assert properties["deleteRetentionPolicy"]["enabled"] is True


def test_the_package_writes_stay_logged() -> None:
    doc = bicep.module("diagnostics")
    setting = bicep.body(bicep.resources(doc, "Microsoft.Insights/diagnosticSettings")["deploymentBlobLogs"])
    assert setting["scope"] == "deploymentBlob"
    assert setting["properties"]["logs"] == "storageLogs"
    assert {"category": "StorageWrite", "enabled": True} in bicep.variable(doc, "storageLogs")
    prose = " ".join(DEPLOY_DOC.split())
    assert 'StorageBlobLogs | where AccountName == "<deploymentStorageAccountName>"' in prose, "the query to run"


def test_owned_settings_name_only_the_apps_identity() -> None:
    assert OWNED["AZURE_CLIENT_ID"] == "identityClientId"
    assert OWNED["AzureWebJobsStorage__clientId"] == "identityClientId"
    for name, value in OWNED.items():
        assert not any(isinstance(v, str) and "deploymentIdentity" in v for v in bicep.walk(value)), name


@pytest.mark.parametrize(
    "text",
    [
        (bicep.MODULES / "deployment-storage.bicep").read_text(),
        (bicep.MODULES / "function-app.bicep").read_text(),
        DEPLOY_DOC,
        INFRA_README,
    ],
    ids=["deployment-storage.bicep", "function-app.bicep", "deploy.md", "infra/README.md"],
)
def test_the_docs_say_the_deployment_identity_is_reachable_from_app_code(text: str) -> None:
    prose = re.sub(r"\n\s*//", " ", text)  # bicep comment lines joined
    assert "not unreachable from code running in the app" in " ".join(prose.split())


def test_the_deployment_account_output_does_not_promise_isolation() -> None:
    description = next(
        d["argument"]
        for d in MAIN["outputs"]["deploymentStorageAccountName"]["decorators"]
        if d["type"] == "description"
    )
    assert "only the deployment identity and the operator can write" not in description
    assert "managed identity endpoint" in description


# ---- 2 + 3: the registration's identifier URI is what clients, Easy Auth and the app name -------------------


def test_the_identifier_uri_carries_the_tenant_id() -> None:
    doc = bicep.module("entra-app")
    (registration,) = bicep.resources(doc, "Microsoft.Graph/applications").values()
    assert bicep.body(registration)["identifierUris"] == ["api://${tenant().tenantId}/${appUniqueName}"]


def test_the_created_identifier_uri_reaches_the_app() -> None:
    param = APP["parameters"]["entraIdentifierUri"]
    assert param["type"] == "string"
    assert param["default"] == ""
    passed = _passed_to_app()["entraIdentifierUri"]
    assert bicep.mentions(passed, "createEntraApp")
    assert any(_dotted(v) == "entraApp.outputs.identifierUri" for v in bicep.walk(passed))


def test_the_app_owns_its_resource_and_public_url_when_entra_is_configured() -> None:
    resource = bicep.variable(APP, "entraResource")
    assert bicep.mentions(resource, "entraIdentifierUri")
    assert bicep.mentions(resource, "api://${entraClientId}")
    # A registration whose identifier URI is the MCP URL (docs/sign-in.md) names it in appSettings: that stays.
    resource_settings = bicep.variable(APP, "entraResourceSettings")
    assert resource_settings["operator"]["operands"]["false_value"] == {}
    assert resource_settings["operator"]["operands"]["true_value"] == {"FIREBREAK_ENTRA_RESOURCE": "entraResource"}
    assert bicep.mentions(bicep.variable(APP, "ownsEntraResource"), "FIREBREAK_ENTRA_RESOURCE")
    # Only for the registration the deployment creates: a hand-made one keeps <base>/api/mcp (docs/sign-in.md).
    assert bicep.mentions(bicep.variable(APP, "ownsEntraResource"), "entraIdentifierUri")
    assert not bicep.mentions(bicep.variable(APP, "ownsEntraResource"), "entraClientId")
    assert "entraResourceSettings" in bicep.walk(bicep.variable(APP, "owned"))
    # A custom domain is legitimate: the deployment sets the base URL only when the caller did not.
    base_url = bicep.variable(APP, "publicBaseUrlSettings")
    assert base_url["operator"]["operands"]["false_value"] == {}
    assert bicep.mentions(bicep.variable(APP, "ownsPublicBaseUrl"), "FIREBREAK_PUBLIC_BASE_URL")
    assert bicep.mentions(bicep.variable(APP, "ownsPublicBaseUrl"), "entraClientId")
    assert "https://${site.properties.defaultHostName}" in bicep.walk(base_url)
    assert "publicBaseUrlSettings" in bicep.walk(bicep.variable(APP, "owned"))


def test_easy_auth_names_the_identifier_uri() -> None:
    assert bicep.variable(APP, "easyAuthDefaultScope") == "${entraResource}/user_impersonation"
    assert _auth_validation()["allowedAudiences"] == ["entraClientId", "entraResource"]


# ---- 4 + 5: networking as Flex Consumption does it ------------------------------------------------------------


def test_no_vnet_route_all_on_flex() -> None:
    assert "vnetRouteAllEnabled" not in _site()["properties"]
    assert "vnetRouteAllEnabled" not in _site()["properties"]["siteConfig"]


def test_the_app_subnet_keeps_default_outbound_access() -> None:
    doc = bicep.module("network")
    (vnet,) = bicep.resources(doc, "Microsoft.Network/virtualNetworks").values()
    app_subnet = next(s for s in bicep.body(vnet)["properties"]["subnets"] if s["name"] == "app")
    assert app_subnet["properties"]["defaultOutboundAccess"] is True
    assert "NAT gateway" in " ".join(DEPLOY_DOC.split())


# ---- 6: azd maps the options, purge protection off for dev ----------------------------------------------------

AZD_MAPPED = {
    "keyVaultPurgeProtection": "FIREBREAK_KEYVAULT_PURGE_PROTECTION",
    "vnetEnabled": "FIREBREAK_VNET_ENABLED",
    "createEntraApp": "FIREBREAK_CREATE_ENTRA_APP",
    "entraClientId": "FIREBREAK_ENTRA_CLIENT_ID",
    "pythonVersion": "FIREBREAK_PYTHON_VERSION",
    "alwaysReadyDurableInstances": "FIREBREAK_ALWAYS_READY_DURABLE_INSTANCES",
}


def _as_azd_string(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("path", AZD_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("name", sorted(AZD_MAPPED))
def test_azd_maps_the_option_with_the_templates_default(path, name: str) -> None:
    mapped = bicep.param_file(path)[name]["value"]
    match = re.fullmatch(r"\$\{(\w+)=(.*)\}", mapped)
    assert match, mapped
    assert match.group(1) == AZD_MAPPED[name]
    # Dev through azd: purge protection off, so `azd down --purge` + `azd up` work; prod passes prod.parameters.json.
    expected = "false" if name == "keyVaultPurgeProtection" else _as_azd_string(MAIN["parameters"][name]["default"])
    assert match.group(2) == expected


# ---- 7: one client allow-list for Easy Auth and the app ------------------------------------------------------


def test_one_client_allow_list_for_both_layers() -> None:
    assert _passed_to_app()["entraPreAuthorizedClientIds"] == "entraPreAuthorizedClientIds"
    assert APP["parameters"]["entraPreAuthorizedClientIds"]["default"] == []
    clients = bicep.variable(APP, "allowedClientApplications")
    assert clients["function"]["type"] == "union"
    assert bicep.mentions(clients, "easyAuthAllowedClientApplications")
    assert bicep.mentions(clients, "entraPreAuthorizedClientIds")
    easy_auth = bicep.variable(APP, "easyAuthClientApplications")
    assert bicep.mentions(easy_auth, "allowedClientApplications")
    assert bicep.mentions(easy_auth, "entraClientId")
    assert _auth_validation()["defaultAuthorizationPolicy"]["allowedApplications"] == "easyAuthClientApplications"
    settings = bicep.variable(APP, "clientAllowListSettings")
    operands = settings["operator"]["operands"]
    assert operands["false_value"] == {}
    assert bicep.mentions(operands["true_value"]["FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS"], "allowedClientApplications")
    owns = bicep.variable(APP, "ownsClientAllowList")
    assert bicep.mentions(owns, "entraClientId")
    assert bicep.mentions(owns, "allowedClientApplications")
    assert "FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS" in OWNED


# ---- 10, 12, 13: docs, Easy Auth's principals, regions --------------------------------------------------------


def test_the_docs_name_the_zone_and_what_if_limits() -> None:
    text = " ".join(DEPLOY_DOC.split())
    assert "ServiceUnavailable" in text
    assert "cannot change on an existing" in text
    assert "what-if" in text
    assert "unevaluated" in text


def test_no_function_key_with_entra_tokens() -> None:
    assert "(and the function key)" not in DEPLOY_DOC


def test_easy_auth_names_principals_only_when_given() -> None:
    principals = _auth_validation()["defaultAuthorizationPolicy"]["allowedPrincipals"]
    assert principals == "allowedPrincipals"
    entries = bicep.variable(APP, "allowedPrincipals")
    assert entries["function"]["type"] == "union"
    for argument in entries["function"]["parameters"].values():
        assert argument["operator"]["type"] == "conditional"
        assert argument["operator"]["operands"]["true_value"] == {}


@pytest.mark.parametrize("doc", [MAIN, SUBSCRIPTION], ids=["main", "main.subscription"])
def test_no_canary_region_is_offered(doc: dict[str, Any]) -> None:
    allowed = next(d["argument"] for d in doc["parameters"]["location"]["decorators"] if d["type"] == "allowed")
    assert not any(region.endswith("euap") for region in allowed)
