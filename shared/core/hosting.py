"""Whether the process runs on Azure's Functions hosting, from the variables the hosting plan sets.

Read once, when settings load (`Settings.running_on_azure`): settings refuse dev mode there, and
investigations refuse stdio MCP servers.

The markers are the Functions host's own (Azure/azure-functions-host, src/WebJobs.Script/Environment/
EnvironmentExtensions.cs `IsAppService`, `IsFlexConsumptionSku` and `IsLinuxConsumptionOnLegion`; the
names are in EnvironmentSettingNames.cs, the SKU in ScriptConstants.cs `FlexConsumptionSku`):
- App Service plans (Consumption, Elastic Premium, Dedicated) set WEBSITE_INSTANCE_ID;
- Flex Consumption does not: the host recognises it by WEBSITE_SKU "FlexConsumption" (compared ignoring
  case) or, in placeholder mode where site settings are absent, by CONTAINER_NAME or WEBSITE_POD_NAME
  together with LEGION_SERVICE_HOST.
The host also takes CONTAINER_NAME alone (without LEGION_SERVICE_HOST) for the legacy Linux Consumption
plan; that is not used here: container runtimes set CONTAINER_NAME for any container (a developer's, a CI
runner's), and dev mode refused there would stop the local stack.
"""

from __future__ import annotations

from collections.abc import Mapping

FLEX_CONSUMPTION_SKU = "FlexConsumption"


def running_on_azure(env: Mapping[str, str]) -> bool:
    """True when a hosting plan's marker is set (see the module docstring)."""
    if env.get("WEBSITE_INSTANCE_ID"):
        return True
    if (env.get("WEBSITE_SKU") or "").lower() == FLEX_CONSUMPTION_SKU.lower():
        return True
    # Flex Consumption before specialisation (placeholder mode), when WEBSITE_SKU is not there yet.
    return bool(env.get("LEGION_SERVICE_HOST") and (env.get("CONTAINER_NAME") or env.get("WEBSITE_POD_NAME")))


# How refusals name the condition.
ON_AZURE = "on Azure (WEBSITE_INSTANCE_ID, or WEBSITE_SKU=FlexConsumption, is set)"
