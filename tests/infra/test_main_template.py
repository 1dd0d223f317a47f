"""main.bicep's parameters, names and wiring against what Azure documents (issue #30, defects 4 and 9):
the Flex instance floor, resource names within each type's limits for any environment name azd accepts, purge
protection as a choice, azd's principal type, zone choices that agree, the Flex region list, the subscription
template, and the preprovision check of the deployer's rights (run against a fake `az` on PATH).

Names are evaluated, not matched: tests/infra/bicep_eval.py evaluates the naming expressions (take, toLower,
replace, empty and interpolation exactly; uniqueString through a stand-in of the same length and alphabet).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from tests.infra import bicep
from tests.infra.bicep_eval import Evaluator

MAIN = bicep.parse(bicep.MAIN)
SUBSCRIPTION_TEMPLATE = bicep.INFRA / "main.subscription.bicep"
SUBSCRIPTION_PARAMS = bicep.INFRA / "main.subscription.parameters.json"
AZURE_YAML = bicep.ROOT / "azure.yaml"
RIGHTS_CHECK = bicep.INFRA / "hooks" / "check_deploy_rights.py"
PROD = bicep.INFRA / "params" / "prod.parameters.json"
DEV = bicep.INFRA / "params" / "dev.parameters.json"


def _decorator(spec: dict[str, Any], kind: str) -> Any:
    return next((d.get("argument") for d in spec["decorators"] if d["type"] == kind), None)


def _value(path: Path, name: str) -> Any:
    return bicep.param_file(path)[name]["value"]


# ---- Defect 4: the Flex Consumption instance floor ---------------------------------------------------------


def test_maximum_instance_count_cannot_go_below_the_flex_floor() -> None:
    """The lowest maximum scale Flex accepts is 40 (learn.microsoft.com/azure/azure-functions/event-driven-scaling,
    "Flex Consumption plan"; MicrosoftDocs/azure-docs#128255 corrected the plan page from 1 to 40)."""
    assert _decorator(MAIN["parameters"]["maximumInstanceCount"], "min_value") == 40


@pytest.mark.parametrize("path", bicep.PARAM_FILES, ids=lambda p: p.name)
def test_parameter_files_respect_numeric_bounds(path: Path) -> None:
    for name, entry in bicep.param_file(path).items():
        spec = MAIN["parameters"][name]
        if spec["type"] != "int":
            continue
        low, high = _decorator(spec, "min_value"), _decorator(spec, "max_value")
        if low is not None:
            assert entry["value"] >= low, f"{path.name}: {name}={entry['value']} < {low}"
        if high is not None:
            assert entry["value"] <= high, f"{path.name}: {name}={entry['value']} > {high}"


# ---- Defect 4: resource names within each type's documented limits -----------------------------------------

# learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules (length, characters). Every
# name is also lower case: one sanitised form of environmentName feeds them all.
NAME_RULES: dict[str, tuple[int, int, str]] = {
    "storage": (3, 24, r"[a-z0-9]+"),
    "cosmos": (3, 44, r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"),
    "keyVault": (3, 24, r"[a-z](?!.*--)[a-z0-9-]*[a-z0-9]"),
    "functionApp": (2, 60, r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"),
    "plan": (1, 60, r"[a-z0-9-]+"),
    "identity": (3, 128, r"[a-z0-9][a-z0-9_-]*"),
    "logAnalytics": (4, 63, r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"),
    "appInsights": (1, 260, r"[^%&\\?/]*[^%&\\?/ .]"),
    "scheduler": (3, 64, r"[a-z]([a-z0-9-]*[a-z0-9])?"),
    "deploymentIdentity": (3, 128, r"[a-z0-9][a-z0-9_-]*"),
    "deploymentStorage": (3, 24, r"[a-z0-9]+"),
    "vnet": (2, 64, r"[a-z0-9]([a-z0-9._-]*[a-z0-9_])?"),
}
# What azd accepts as an environment name (letters, digits, - _ . ( )) at the template's 16-character limit.
HOSTILE_NAMES = [
    "dev",
    "Prod_EU.West-042",
    "0123456789abcdef",
    "UPPER-CASE-ENV16",
    "a.b_c(d)e-f_g.h_",
    "--",
    "__",
    "x-",
]


def _names(environment_name: str) -> dict[str, str]:
    names: dict[str, str] = Evaluator(MAIN, {"environmentName": environment_name}).variable("names")
    return names


def test_every_resource_name_has_a_rule() -> None:
    assert set(_names("dev")) == set(NAME_RULES)


@pytest.mark.parametrize("environment_name", HOSTILE_NAMES)
@pytest.mark.parametrize("resource", sorted(NAME_RULES))
def test_each_name_meets_its_limits(environment_name: str, resource: str) -> None:
    name = _names(environment_name)[resource]
    low, high, pattern = NAME_RULES[resource]
    assert low <= len(name) <= high, f"{resource} {name!r} is {len(name)} characters"
    assert re.fullmatch(pattern, name), f"{resource} {name!r} does not match {pattern}"


def test_names_of_a_plain_environment_keep_their_shape() -> None:
    """A deployed environment keeps its resources: for a short lower-case name nothing is cut or renamed."""
    token = Evaluator(MAIN, {"environmentName": "prod"}).variable("token")
    names = _names("prod")
    assert names["cosmos"] == f"cosmos-firebreak-prod-{token}"
    assert names["functionApp"] == f"func-firebreak-prod-{token}"
    assert names["keyVault"] == f"kv-{token}-prod"
    assert names["storage"] == f"stfb{token}prod"[:24]


def test_names_stay_distinct_per_environment_after_sanitising() -> None:
    """'Prod' and 'prod' sanitise alike; the token (from the name as given) keeps their resources apart."""
    assert _names("Prod")["cosmos"] != _names("prod")["cosmos"]


# ---- Defect 4: purge protection a choice, azd's principal type, the deployer's rights ------------------------


def test_purge_protection_is_a_parameter_of_the_vault() -> None:
    vault = bicep.module("keyvault")
    resource = next(iter(bicep.resources(vault, "Microsoft.KeyVault/vaults").values()))
    properties = bicep.body(resource)["properties"]
    # The service takes only true or no value (false is refused): a conditional between the two.
    chosen = properties["enablePurgeProtection"]["operator"]["operands"]
    assert chosen == {"condition": "purgeProtection", "true_value": True, "false_value": None}
    assert properties["enableSoftDelete"] is True


def test_main_passes_purge_protection_and_prod_keeps_it() -> None:
    params = bicep.module_params(MAIN["modules"]["keyVault"])
    assert params["purgeProtection"] == "keyVaultPurgeProtection"
    assert MAIN["parameters"]["keyVaultPurgeProtection"]["default"] is True
    assert _value(PROD, "keyVaultPurgeProtection") is True
    assert _value(DEV, "keyVaultPurgeProtection") is False


def test_azd_maps_the_signed_in_principal_type_with_a_default() -> None:
    """azd sets AZURE_PRINCIPAL_TYPE ('User' or 'ServicePrincipal'); a service principal given as 'User' is
    refused by the role assignments."""
    for path in (bicep.AZD_PARAMS, SUBSCRIPTION_PARAMS):
        assert bicep.param_file(path)["operatorPrincipalType"]["value"] == "${AZURE_PRINCIPAL_TYPE=User}"


def test_every_operator_grant_uses_the_principal_type() -> None:
    for name, mod in MAIN["modules"].items():
        params = bicep.module_params(mod)
        if "operatorPrincipalId" in params and "operatorPrincipalType" in bicep.parse(
            bicep.INFRA / mod["detail"]["path"]
        ).get("parameters", {}):
            assert params.get("operatorPrincipalType") == "operatorPrincipalType", name


def _fake_az(tmp_path: Path, responses: dict[str, tuple[int, str]]) -> dict[str, str]:
    """A real `az` executable on PATH answering `az rest --url <url>` (or any other command, by its arguments) from
    canned (exit code, output) by the first key found in the URL (or the arguments); it logs each call so a test can
    see what was asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "responses.json").write_text(json.dumps(responses))
    script = bin_dir / "az"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        f"root = pathlib.Path({str(tmp_path)!r})\n"
        "with (root / 'calls.log').open('a') as log:\n"
        "    log.write(' '.join(sys.argv[1:]) + '\\n')\n"
        "url = sys.argv[sys.argv.index('--url') + 1] if '--url' in sys.argv else ' '.join(sys.argv[1:])\n"
        "for key, (code, out) in json.loads((root / 'responses.json').read_text()).items():\n"
        "    if key in url:\n"
        "        (sys.stdout if code == 0 else sys.stderr).write(out)\n"
        "        sys.exit(code)\n"
        "sys.stderr.write('ERROR: Please run az login to setup account.')\n"
        "sys.exit(1)\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


AZD_PRINCIPAL = "11111111-1111-1111-1111-111111111111"
OTHER_PRINCIPAL = "22222222-2222-2222-2222-222222222222"


def _token(oid: str) -> tuple[int, str]:
    """`az account get-access-token --query accessToken -o tsv`: a JWT whose payload carries `oid` (unsigned: the
    hook only reads the claim, as azd does for AZURE_PRINCIPAL_ID)."""

    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return 0, f"{part({'alg': 'none'})}.{part({'oid': oid, 'tid': 't'})}.sig\n"


def _check(
    tmp_path: Path, responses: dict[str, tuple[int, str]], *, az_as: str | None = AZD_PRINCIPAL, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the hook with azd's environment; `az_as` is the object id `az` is signed in as (None: not signed in)."""
    signed_in = {"account get-access-token": _token(az_as)} if az_as else {}
    environment = {
        **os.environ,
        **_fake_az(tmp_path, {**signed_in, **responses}),
        "AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000001",
        "AZURE_PRINCIPAL_ID": AZD_PRINCIPAL,
        **env,
    }
    environment.pop("FIREBREAK_SKIP_RIGHTS_CHECK", None)
    if not environment["AZURE_PRINCIPAL_ID"]:
        environment.pop("AZURE_PRINCIPAL_ID")
    return subprocess.run(
        [sys.executable, str(RIGHTS_CHECK)], capture_output=True, text=True, env=environment, timeout=60, check=False
    )


def _permissions(*entries: Permission) -> tuple[int, str]:
    value = [{"actions": a, "notActions": n, "dataActions": [], "notDataActions": []} for a, n in entries]
    return 0, json.dumps({"value": value})


# The built-in roles' permissions (actions, notActions), as the permissions API returns them.
Permission = tuple[list[str], list[str]]
CONTRIBUTOR: Permission = (["*"], ["Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write"])
OWNER: Permission = (["*"], [])
USER_ACCESS_ADMINISTRATOR: Permission = (["*/read", "Microsoft.Authorization/*", "Microsoft.Support/*"], [])
RBAC_ADMINISTRATOR: Permission = (["Microsoft.Authorization/roleAssignments/write", "*/read"], [])


@pytest.mark.parametrize(
    ("entries", "allowed"),
    [
        ([CONTRIBUTOR], False),
        ([OWNER], True),
        ([CONTRIBUTOR, USER_ACCESS_ADMINISTRATOR], True),
        ([CONTRIBUTOR, RBAC_ADMINISTRATOR], True),
        ([(["*/read"], [])], False),
    ],
    ids=["contributor", "owner", "contributor+uaa", "contributor+rbac-admin", "reader"],
)
def test_rights_check_reads_the_resource_groups_permissions(tmp_path: Path, entries, allowed: bool) -> None:
    done = _check(tmp_path, {"/permissions": _permissions(*entries)}, AZURE_RESOURCE_GROUP="rg-firebreak-dev")
    assert (done.returncode == 0) is allowed, done.stdout + done.stderr
    calls = (tmp_path / "calls.log").read_text()
    assert "/resourceGroups/rg-firebreak-dev/providers/Microsoft.Authorization/permissions" in calls
    if not allowed:
        assert "Microsoft.Authorization/roleAssignments/write" in done.stderr
        assert "Role Based Access Control Administrator" in done.stderr


def _assignments(*items: tuple[str, str]) -> tuple[int, str]:
    value = [
        {"properties": {"scope": scope, "roleDefinitionId": f"/providers/Microsoft.Authorization/roleDefinitions/{r}"}}
        for scope, r in items
    ]
    return 0, json.dumps({"value": value})


SUB = "/subscriptions/00000000-0000-0000-0000-000000000001"
OWNER_ROLE = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
CONTRIBUTOR_ROLE = "b24988ac-6180-42a0-ab88-20f7382dd24c"


@pytest.mark.parametrize(
    ("items", "allowed"),
    [
        ([(SUB, CONTRIBUTOR_ROLE)], False),
        ([(SUB, CONTRIBUTOR_ROLE), (SUB, OWNER_ROLE)], True),
        ([("/providers/Microsoft.Management/managementGroups/corp", OWNER_ROLE)], True),
        ([(f"{SUB}/resourceGroups/other", OWNER_ROLE)], False),
    ],
    ids=["contributor", "owner", "owner-on-management-group", "owner-on-another-group"],
)
def test_rights_check_without_the_group_reads_subscription_assignments(tmp_path: Path, items, allowed) -> None:
    """The subscription template creates the group, so before the first deployment there is none to ask."""
    missing = (3, "ERROR: (ResourceGroupNotFound) Resource group 'rg-new' could not be found.")
    done = _check(
        tmp_path, {"/permissions": missing, "/roleAssignments": _assignments(*items)}, AZURE_RESOURCE_GROUP="rg-new"
    )
    assert (done.returncode == 0) is allowed, done.stdout + done.stderr
    assert "assignedTo('11111111-1111-1111-1111-111111111111')" in (tmp_path / "calls.log").read_text()


def test_rights_check_that_cannot_ask_says_so_and_lets_arm_decide(tmp_path: Path) -> None:
    done = _check(tmp_path, {}, AZURE_RESOURCE_GROUP="rg-firebreak-dev")
    assert done.returncode == 0
    assert "could not check" in done.stderr


def test_rights_check_as_the_account_azd_deploys_as_runs_the_check(tmp_path: Path) -> None:
    done = _check(tmp_path, {"/permissions": _permissions(CONTRIBUTOR)}, AZURE_RESOURCE_GROUP="rg-firebreak-dev")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "account get-access-token" in (tmp_path / "calls.log").read_text()


def test_rights_check_skips_when_az_is_signed_in_as_another_account(tmp_path: Path) -> None:
    """azd deploys with its own login (`azd auth login`): az's rights would be another account's."""
    done = _check(
        tmp_path,
        {"/permissions": _permissions(CONTRIBUTOR)},
        az_as=OTHER_PRINCIPAL,
        AZURE_RESOURCE_GROUP="rg-firebreak-dev",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"az is signed in as {OTHER_PRINCIPAL}, azd deploys as {AZD_PRINCIPAL}: rights check skipped "
        "(sign az in as the same account to run it)"
    ) in done.stdout + done.stderr
    assert "rest" not in (tmp_path / "calls.log").read_text()  # nothing asked about the other account


def test_rights_check_falls_back_to_the_graph_when_the_token_has_no_oid(tmp_path: Path) -> None:
    done = _check(
        tmp_path,
        {"/permissions": _permissions(CONTRIBUTOR), "ad signed-in-user show": (0, f"{OTHER_PRINCIPAL}\n")},
        az_as=None,
        AZURE_RESOURCE_GROUP="rg-firebreak-dev",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"az is signed in as {OTHER_PRINCIPAL}" in done.stdout + done.stderr


@pytest.mark.parametrize("group", ["rg-firebreak-dev", "rg-new"])
def test_rights_check_without_azds_principal_checks_azs_account_and_says_so(tmp_path: Path, group: str) -> None:
    missing = (3, "ERROR: (ResourceGroupNotFound) Resource group 'rg-new' could not be found.")
    responses = {
        "/permissions": _permissions(OWNER) if group == "rg-firebreak-dev" else missing,
        "/roleAssignments": _assignments((SUB, OWNER_ROLE)),
    }
    done = _check(tmp_path, responses, az_as=OTHER_PRINCIPAL, AZURE_PRINCIPAL_ID="", AZURE_RESOURCE_GROUP=group)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"AZURE_PRINCIPAL_ID is not set: checking az's account ({OTHER_PRINCIPAL})" in done.stdout
    assert "may create role assignments" in done.stdout


def test_rights_refusal_names_the_subscription_rights_of_a_subscription_deployment(tmp_path: Path) -> None:
    done = _check(tmp_path, {"/permissions": _permissions(CONTRIBUTOR)}, AZURE_RESOURCE_GROUP="rg-firebreak-dev")
    assert done.returncode == 1
    assert "Microsoft.Resources/deployments/write" in done.stderr
    assert "Microsoft.Resources/subscriptions/resourceGroups/write" in done.stderr
    assert "Contributor on the subscription" in done.stderr


def test_azd_runs_the_rights_check_before_provisioning() -> None:
    hooks = yaml.safe_load(AZURE_YAML.read_text())["hooks"]["preprovision"]
    for shell in ("posix", "windows"):
        assert "infra/hooks/check_deploy_rights.py" in hooks[shell]["run"]
        assert hooks[shell]["continueOnError"] is False


# ---- Defect 9: zone choices agree ---------------------------------------------------------------------------


def test_cosmos_zone_redundancy_is_a_parameter_of_its_location() -> None:
    cosmos = bicep.module("cosmos")
    account = next(iter(bicep.resources(cosmos, "Microsoft.DocumentDB/databaseAccounts").values()))
    locations = bicep.body(account)["properties"]["locations"]
    assert [entry["isZoneRedundant"] for entry in locations] == ["zoneRedundant"]
    assert bicep.module_params(MAIN["modules"]["cosmos"])["zoneRedundant"] == "cosmosZoneRedundant"


def test_prod_is_zone_redundant_everywhere_it_says_so() -> None:
    assert _value(PROD, "storageSku") in {"Standard_ZRS", "Standard_GZRS"}
    assert _value(PROD, "zoneRedundant") is True
    assert _value(PROD, "cosmosZoneRedundant") is True


@pytest.mark.parametrize("path", bicep.PARAM_FILES, ids=lambda p: p.name)
def test_zone_choices_agree_in_each_parameter_file(path: Path) -> None:
    given = {name: entry["value"] for name, entry in bicep.param_file(path).items()}
    storage_zonal = given.get("storageSku", MAIN["parameters"]["storageSku"]["default"]) in {
        "Standard_ZRS",
        "Standard_GZRS",
    }
    assert given.get("zoneRedundant", False) is storage_zonal
    assert given.get("cosmosZoneRedundant", False) is storage_zonal


def test_prod_keeps_one_durable_instance_ready_and_wires_it_to_the_app() -> None:
    # Microsoft's guidance for the Azure Storage backend on Flex: an always-ready `durable` group in production,
    # so queued orchestrations are polled without waiting for a scale-from-zero.
    assert _value(PROD, "alwaysReadyDurableInstances") == 1
    wired = bicep.module_params(MAIN["modules"]["functionApp"])
    assert wired["alwaysReadyDurableInstances"] == "alwaysReadyDurableInstances"


# ---- Options: Flex regions, the subscription template, what azd uses ----------------------------------------


def test_location_is_one_of_the_flex_regions() -> None:
    allowed = _decorator(MAIN["parameters"]["location"], "allowed")
    assert {"westeurope", "northeurope", "eastus", "eastus2", "swedencentral"} <= set(allowed)
    assert "westindia" not in allowed
    assert all(re.fullmatch(r"[a-z0-9]+", region) for region in allowed)


def test_subscription_template_creates_the_group_and_deploys_main_into_it() -> None:
    doc = bicep.parse(SUBSCRIPTION_TEMPLATE)
    assert doc["globals"]["scope"]["value"] == "subscription"
    group = next(iter(bicep.resources(doc, "Microsoft.Resources/resourceGroups")))
    (main_call,) = doc["modules"].values()
    assert main_call["detail"]["path"] == "main.bicep"
    assert main_call["config"]["scope"] == group


def test_subscription_template_passes_every_parameter_through() -> None:
    doc = bicep.parse(SUBSCRIPTION_TEMPLATE)
    (main_call,) = doc["modules"].values()
    passed = bicep.module_params(main_call)
    for name, spec in MAIN["parameters"].items():
        assert passed.get(name) == name, f"{name} is not passed through"
        outer = doc["parameters"][name]
        assert outer["type"] == spec["type"], name
        # Same default, so leaving a parameter out means the same at both scopes. location has none outside: the
        # group it would default to does not exist yet (azd passes AZURE_LOCATION).
        if name != "location":
            assert outer["default"] == spec["default"], f"{name}: default differs"
        for kind in ("secure", "allowed", "min_value", "max_value", "min_length", "max_length"):
            inner_has = any(d["type"] == kind for d in spec["decorators"])
            assert any(d["type"] == kind for d in outer["decorators"]) is inner_has, f"{name}: @{kind} differs"
            assert _decorator(outer, kind) == _decorator(spec, kind), f"{name}: @{kind} differs"


def test_subscription_template_returns_mains_outputs_and_the_group() -> None:
    doc = bicep.parse(SUBSCRIPTION_TEMPLATE)
    assert set(MAIN["outputs"]) | {"AZURE_RESOURCE_GROUP"} <= set(doc["outputs"])


def test_azd_uses_the_subscription_template_with_the_same_mapping() -> None:
    """azd's default is subscription scope (resource group scope is a beta feature: learn.microsoft.com/azure/
    developer/azure-developer-cli/resource-group-scoped-deployments); its parameter file is the module's name."""
    infra = yaml.safe_load(AZURE_YAML.read_text())["infra"]
    assert (infra["path"], infra["module"]) == ("infra", "main.subscription")
    outer = bicep.param_file(SUBSCRIPTION_PARAMS)
    assert {k: v for k, v in outer.items() if k != "resourceGroupName"} == bicep.param_file(bicep.AZD_PARAMS)
    assert outer["resourceGroupName"]["value"] == "${AZURE_RESOURCE_GROUP=}"
    declared = bicep.parse(SUBSCRIPTION_TEMPLATE)["parameters"]
    assert set(outer) <= set(declared)
