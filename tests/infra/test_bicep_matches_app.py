"""The bicep deploys what this code needs, read from the code's own declarations so the two cannot drift:
every Cosmos container (partition key, indexing, TTL), every app setting name (each one the app or the
host reads, the required ones present, secrets only as Key Vault references), every data-plane role, local
auth off, the Flex Consumption runtime, and host.json's names."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from shared.app import infra_spec
from shared.app.capabilities import catalogue
from shared.core.settings import Settings
from tests.infra import bicep

MAIN = bicep.parse(bicep.MAIN)
APP = bicep.module("function-app")
HOST = json.loads((bicep.ROOT / "host.json").read_text())
GENERATED = json.loads(infra_spec.INFRA_APP_PATH.read_text())

# Settings the platform (not the app's Settings class) reads, which the bicep may set.
PLATFORM_SETTINGS = re.compile(
    r"^(AzureWebJobsStorage__(accountName|credential|clientId)|APPLICATIONINSIGHTS_(CONNECTION|AUTHENTICATION)_STRING"
    r"|AZURE_CLIENT_ID|AzureFunctionsJobHost__[A-Za-z_]+|DURABLE_TASK_SCHEDULER_CONNECTION_STRING"
    r"|PYTHON_ENABLE_INIT_INDEXING|PYTHON_ENABLE_OPENTELEMETRY|WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES)$"
)


def _app_names() -> set[str]:
    names = {row["name"] for row in GENERATED["settings"]} | {
        row["alias"] for row in GENERATED["settings"] if "alias" in row
    }
    return names | {row["name"] for row in GENERATED["extraSettings"]}


def _secret_names() -> set[str]:
    return {row["name"] for row in (*GENERATED["settings"], *GENERATED["extraSettings"]) if row["secret"]}


def _host_refs() -> set[str]:
    return set(re.findall(r"%([A-Za-z0-9_]+)%", json.dumps(HOST)))


def _bicep_settings() -> dict[str, Any]:
    """Every app setting function-app.bicep can set (all branches), its Key Vault references included."""
    settings = bicep.body(bicep.resources(APP, "Microsoft.Web/sites/config")["settings"])
    return bicep.object_entries(APP, settings["properties"])


BICEP_SETTINGS = _bicep_settings()


# ---- containers --------------------------------------------------------------------------------------


def test_generated_app_json_is_current() -> None:
    assert infra_spec.stale_reason(catalogue()) is None, "run `make manifest` and commit infra/generated/app.json"


def test_every_declared_container_is_deployed_as_declared() -> None:
    cat = catalogue()
    deployed = {c["name"]: c["resource"] for c in GENERATED["containers"]}
    assert set(deployed) == set(cat.containers)
    for name, spec in cat.containers.items():
        resource = deployed[name]
        assert resource["id"] == name
        assert resource["partitionKey"]["paths"] == [spec.partition_key]
        assert resource["indexingPolicy"] == spec.indexing_policy()
        assert resource.get("defaultTtl") == spec.default_ttl


def test_cosmos_module_creates_each_generated_container_unchanged() -> None:
    cosmos_call = bicep.module_params(MAIN["modules"]["cosmos"])
    assert cosmos_call["containers"] == {
        "operator": {"type": "property_accessor", "operands": {"operand_1": "app", "operand_2": "containers"}}
    }
    assert cosmos_call["databaseName"] == {
        "operator": {"type": "property_accessor", "operands": {"operand_1": "app", "operand_2": "cosmosDatabase"}}
    }
    assert "loadJsonContent('generated/app.json')" in bicep.MAIN.read_text()
    cosmos = bicep.module("cosmos")
    containers = cosmos["resources"]["sqlContainers"]
    assert containers["config"]["loop_type"]["detail"]["array_name"] == "containers"
    assert bicep.body(containers)["properties"] == {
        "resource": {"operator": {"type": "property_accessor", "operands": {"operand_1": "c", "operand_2": "resource"}}}
    }
    assert GENERATED["cosmosDatabase"] == Settings.model_fields["cosmos_database"].default


# ---- app settings ------------------------------------------------------------------------------------


def test_every_setting_the_bicep_sets_is_read_by_the_app_or_the_platform() -> None:
    known = _app_names() | _host_refs()
    unknown = sorted(name for name in BICEP_SETTINGS if name not in known and not PLATFORM_SETTINGS.match(name))
    assert not unknown, f"the bicep sets settings nothing reads (typo or removed setting?): {unknown}"


@pytest.mark.parametrize("path", bicep.PARAM_FILES, ids=lambda p: p.name)
def test_parameter_files_set_only_known_non_secret_settings(path) -> None:
    extra = bicep.param_file(path).get("appSettings", {}).get("value", {})
    secret = _secret_names()
    assert not (set(extra) - _app_names()), f"{path.name}: unknown settings {sorted(set(extra) - _app_names())}"
    assert not (set(extra) & secret), f"{path.name}: secrets belong in the secure parameters, not appSettings"
    assert not (set(extra) & set(bicep.object_entries(APP, "owned"))), (
        f"{path.name} overrides a setting the deployment owns"
    )


def test_the_settings_azure_needs_are_set() -> None:
    required = {
        "AzureWebJobsStorage__accountName",
        "AzureWebJobsStorage__credential",
        "AzureWebJobsStorage__clientId",
        "AZURE_CLIENT_ID",
        "APPLICATIONINSIGHTS_CONNECTION_STRING",
        "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
        "FIREBREAK_ENVIRONMENT",
        "FIREBREAK_COSMOS_ENDPOINT",
        "FIREBREAK_COSMOS_DATABASE",
        "FIREBREAK_BLOB_ACCOUNT_URL",
        "FIREBREAK_BLOB_CONTAINER",
        "FIREBREAK_TRUST_APPSERVICE_AUTH",
        "FIREBREAK_DEV_MODE",
        *_host_refs(),
    }
    assert required <= set(BICEP_SETTINGS), sorted(required - set(BICEP_SETTINGS))
    owned = bicep.object_entries(APP, "identitySettings")
    assert owned["FIREBREAK_ENVIRONMENT"] == "azure"
    assert owned["FIREBREAK_DEV_MODE"] == "false"
    assert owned["AzureWebJobsStorage__credential"] == "managedidentity"


def test_settings_the_deployment_owns_come_after_the_callers() -> None:
    """`appSettings` (the caller's object) cannot override identity, endpoints or the security switches."""
    union = bicep.body(bicep.resources(APP, "Microsoft.Web/sites/config")["settings"])["properties"]["function"]
    arguments = list(union["parameters"].values())
    assert arguments[-1] == "owned"
    assert arguments.index("appSettings") < arguments.index("owned")


def test_no_key_or_connection_string_is_an_app_setting() -> None:
    """Identity everywhere: no account key, Cosmos key or storage connection string, and every secret the
    app reads arrives as a Key Vault reference."""
    for forbidden in ("FIREBREAK_COSMOS_KEY", "COSMOS_KEY", "FIREBREAK_BLOB_CONNECTION_STRING", "AzureWebJobsStorage"):
        assert forbidden not in BICEP_SETTINGS
    for name, value in BICEP_SETTINGS.items():
        assert not re.search(r"AccountKey=|SharedAccessSignature=|InstrumentationKey=", json.dumps(value)), name
    secrets = _secret_names() - {
        "FIREBREAK_COSMOS_KEY",
        "FIREBREAK_BLOB_CONNECTION_STRING",
    }
    references = bicep.object_entries(APP, "secretReferences")
    assert set(references) == secrets, "each secret the app reads has a secure parameter and a Key Vault reference"
    for name, value in references.items():
        assert value.startswith("${vaultRef}"), name
        assert value.endswith(")"), name
    vault_names = {value.removeprefix("${vaultRef}").removesuffix(")") for value in references.values()}
    stored = {
        entry["name"]
        for entry in bicep.walk(bicep.variable(MAIN, "secretEntries"))
        if isinstance(entry, dict) and "name" in entry
    }
    assert vault_names == stored, "every reference names a secret the vault module stores"
    for entry in bicep.walk(bicep.variable(MAIN, "secretEntries")):
        if isinstance(entry, dict) and "value" in entry:
            assert "secure" in {d["type"] for d in MAIN["parameters"][entry["value"]]["decorators"]}, entry


def test_secret_values_never_reach_an_output() -> None:
    secure = {name for name, p in MAIN["parameters"].items() if "secure" in {d["type"] for d in p["decorators"]}}
    assert {
        "runSecretsKey",
        "neubirdPassword",
        "llmApiKey",
        "githubToken",
        "s3AccessKeyId",
        "s3SecretAccessKey",
        "investigationsMcpServers",
    } <= secure
    for path in bicep.bicep_files():
        for name, output in bicep.parse(path).get("outputs", {}).items():
            assert not any(bicep.mentions(output, p) for p in secure), f"{path.name} output {name} uses a secret"
    assert bicep.module("keyvault")["parameters"]["secrets"]["decorators"][-1]["type"] == "secure"


def test_app_service_headers_are_trusted_only_behind_easy_auth() -> None:
    trust = bicep.object_entries(APP, "identitySettings")["FIREBREAK_TRUST_APPSERVICE_AUTH"]
    assert trust["operator"]["operands"]["condition"] == "easyAuthOn"
    # On only with the app registration: Easy Auth without a client id would leave the headers open to forgery.
    on = bicep.variable(APP, "easyAuthOn")
    assert bicep.mentions(on, "easyAuthEnabled")
    assert bicep.mentions(on, "entraClientId")
    assert on["operator"]["type"] == "and"
    assert trust["operator"]["operands"]["true_value"] == "true"
    assert trust["operator"]["operands"]["false_value"] == "false"
    auth = bicep.resources(APP, "Microsoft.Web/sites/config")["auth"]
    assert bicep.condition(auth) == "easyAuthOn"
    assert bicep.body(auth)["name"] == "authsettingsV2"
    validation = bicep.body(auth)["properties"]["globalValidation"]
    assert validation["unauthenticatedClientAction"] == "Return401"
    assert validation["excludedPaths"] == ["/api/health"]
    entra = bicep.object_entries(APP, "entraSettings")
    assert set(entra) == {"FIREBREAK_ENTRA_TENANT_ID", "FIREBREAK_ENTRA_AUDIENCE"}
    assert entra["FIREBREAK_ENTRA_AUDIENCE"] == "entraClientId"


def test_cors_origins_also_pass_the_apps_origin_check() -> None:
    site = bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])
    assert site["properties"]["siteConfig"]["cors"]["allowedOrigins"] == "corsAllowedOrigins"
    origins = bicep.object_entries(APP, "defaults")["FIREBREAK_MCP_ALLOWED_ORIGINS"]
    assert bicep.mentions(origins, "corsAllowedOrigins")


# ---- identity and roles ------------------------------------------------------------------------------

ROLES = {
    # module: {role definition id: what it is for}
    "storage": {
        "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
        "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor (Durable)",
        "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor (Durable)",
    },
    "keyvault": {"4633458b-17de-408a-b874-0445c86b69e6": "Key Vault Secrets User"},
    "monitoring": {"3913510d-42f4-4e42-8a64-420c390055eb": "Monitoring Metrics Publisher"},
    "durable-task-scheduler": {"0ad04412-c4d5-4796-b79c-f76d14c8d402": "Durable Task Data Contributor"},
}


@pytest.mark.parametrize("name", sorted(ROLES))
def test_the_apps_identity_gets_each_data_role(name: str) -> None:
    doc = bicep.module(name)
    assignments = bicep.resources(doc, "Microsoft.Authorization/roleAssignments")
    for role_id, purpose in ROLES[name].items():
        holders = [
            a
            for a in assignments.values()
            if bicep.condition(a) is None
            and bicep.body(a)["properties"]["principalId"] == "principalId"
            and (
                bicep.mentions(a, role_id)
                or any(bicep.mentions(a, var) for var, v in doc["variables"].items() if bicep.mentions(v, role_id))
            )
        ]
        assert holders, f"{name}.bicep: no unconditional {purpose} assignment to the app's identity"
        for a in holders:
            assert bicep.body(a)["properties"]["principalType"] == "ServicePrincipal"


def test_cosmos_data_contributor_is_a_data_plane_role_for_the_identity() -> None:
    cosmos = bicep.module("cosmos")
    role = bicep.resources(cosmos, "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments")["appDataRole"]
    assert bicep.condition(role) is None
    assert bicep.body(role)["properties"]["principalId"] == "principalId"
    assert cosmos["variables"]["dataContributor"]["value"] == "00000000-0000-0000-0000-000000000002"
    assert bicep.mentions(role, "${account.id}/sqlRoleDefinitions/${dataContributor}")


def test_every_module_grants_to_the_one_user_assigned_identity() -> None:
    for name in ("monitoring", "storage", "cosmos", "keyVault", "scheduler"):
        assert bicep.module_params(MAIN["modules"][name])["principalId"] == {
            "operator": {
                "type": "property_accessor",
                "operands": {
                    "operand_1": "identity",
                    "operand_2": {
                        "operator": {
                            "type": "property_accessor",
                            "operands": {"operand_1": "outputs", "operand_2": "principalId"},
                        }
                    },
                },
            }
        }, name
    site = bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])
    assert site["identity"]["type"] == "UserAssigned"
    assert site["properties"]["keyVaultReferenceIdentity"] == "identityId"
    owned = bicep.object_entries(APP, "identitySettings")
    assert owned["AzureWebJobsStorage__clientId"] == owned["AZURE_CLIENT_ID"] == "identityClientId"


def test_local_auth_is_off_where_the_service_allows() -> None:
    storage = bicep.body(bicep.module("storage")["resources"]["account"])["properties"]
    assert storage["allowSharedKeyAccess"] is False
    assert storage["allowBlobPublicAccess"] is False
    cosmos = bicep.body(bicep.module("cosmos")["resources"]["account"])["properties"]
    assert cosmos["disableLocalAuth"] is True
    assert cosmos["disableKeyBasedMetadataWriteAccess"] is True
    insights = bicep.body(bicep.module("monitoring")["resources"]["appInsights"])["properties"]
    assert insights["DisableLocalAuth"] is True
    vault = bicep.body(bicep.module("keyvault")["resources"]["vault"])["properties"]
    assert vault["enableRbacAuthorization"] is True
    # Purge protection is a parameter (on in prod, off in dev): tests/infra/test_main_template.py.
    policies = bicep.resources(APP, "Microsoft.Web/sites/basicPublishingCredentialsPolicies")
    assert {bicep.body(p)["name"] for p in policies.values()} == {"scm", "ftp"}
    assert all(bicep.body(p)["properties"]["allow"] is False for p in policies.values())


# ---- Flex Consumption, Durable and host.json ---------------------------------------------------------


def test_flex_consumption_python_311_with_its_deployment_container() -> None:
    plan = bicep.body(bicep.resources(APP, "Microsoft.Web/serverfarms")["plan"])
    assert plan["sku"] == {"name": "FC1", "tier": "FlexConsumption"}
    config = bicep.body(bicep.resources(APP, "Microsoft.Web/sites")["site"])["properties"]["functionAppConfig"]
    assert config["runtime"] == {"name": "python", "version": "pythonVersion"}
    assert APP["parameters"]["pythonVersion"]["default"] == "3.11"
    assert config["scaleAndConcurrency"]["instanceMemoryMB"] == "instanceMemoryMB"
    assert config["scaleAndConcurrency"]["maximumInstanceCount"] == "maximumInstanceCount"
    assert config["deployment"]["storage"]["authentication"]["type"] == "UserAssignedIdentity"
    assert MAIN["parameters"]["alwaysReadyHttpInstances"]["default"] == 0, "always-ready is off by default"
    containers = bicep.module_params(MAIN["modules"]["storage"])["containerNames"]
    # The package container is in its own account (deployment-storage.bicep; tests/infra/test_network_and_logs.py).
    assert containers == ["appBlobContainerName"]
    assert MAIN["variables"]["appBlobContainerName"]["value"] == Settings.model_fields["blob_container"].default
    # Flex Consumption sets the runtime itself and refuses these.
    assert not {"FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_EXTENSION_VERSION", "WEBSITE_RUN_FROM_PACKAGE"} & set(
        BICEP_SETTINGS
    )


def test_durable_backend_switches_host_json_and_settings_together() -> None:
    durable = HOST["extensions"]["durableTask"]
    assert durable["storageProvider"]["type"] == "AzureStorage"
    assert durable["storageProvider"]["connectionName"] == "AzureWebJobsStorage"
    assert "AzureWebJobsStorage__accountName" in BICEP_SETTINGS
    scheduler = bicep.object_entries(APP, "schedulerSettings")
    override = "AzureFunctionsJobHost__extensions__durableTask__storageProvider__"
    # Each override names a real host.json path, and the connection it names is set beside it.
    for key in scheduler:
        if key.startswith("AzureFunctionsJobHost__"):
            node: Any = HOST
            for part in key.removeprefix("AzureFunctionsJobHost__").split("__")[:-1]:
                node = node[part]
    assert scheduler[f"{override}type"] == "azureManaged"
    connection = scheduler[f"{override}connectionStringName"]
    assert connection in scheduler
    assert "Authentication=ManagedIdentity" in scheduler[connection]
    assert "ClientID=${identityClientId}" in scheduler[connection]
    condition = bicep.variable(APP, "schedulerSettings")["operator"]["operands"]["condition"]
    assert condition == "useScheduler"
    assert MAIN["parameters"]["durableBackend"]["default"] == "azureStorage"
    hub = bicep.object_entries(APP, "identitySettings")["FIREBREAK_TASK_HUB"]
    assert durable["hubName"] == "%FIREBREAK_TASK_HUB%"
    assert hub == "taskHubName"
    scheduler_module = MAIN["modules"]["scheduler"]["config"]
    assert bicep.mentions(scheduler_module["condition"], "durableTaskScheduler")
    assert bicep.mentions(
        bicep.module_params(MAIN["modules"]["functionApp"])["schedulerEndpoint"], "durableTaskScheduler"
    )


def test_outputs_give_the_urls_a_user_needs() -> None:
    outputs = MAIN["outputs"]
    assert {"functionAppUrl", "mcpEndpointUrl", "cosmosEndpoint"} <= set(outputs)
    assert "/api/mcp" in json.dumps(outputs["mcpEndpointUrl"])
