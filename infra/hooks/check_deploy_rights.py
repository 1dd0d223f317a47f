"""azd preprovision hook: stop before anything is created when the signed-in account cannot create role assignments.

The template assigns roles (the app's identity on Storage, Key Vault, Monitoring and the scheduler; the operator's
data roles), which needs Microsoft.Authorization/roleAssignments/write: Owner, User Access Administrator or Role
Based Access Control Administrator. Contributor alone fails half-way through the deployment, after the resources
it could create exist. This asks Azure first, with the Azure CLI (`az`, signed in as the deploying account):

- the resource group exists: its effective permissions (Permissions - List For Resource Group, 2022-04-01), the
  union over the caller's roles of actions minus notActions, as ARM evaluates them;
- it does not exist yet (the subscription template creates it): the caller's role assignments on the subscription
  and above, including through groups (`assignedTo`), for one of the three roles by id.

azd deploys with its own login (`azd auth login`), not az's, and gives the hook the object id it deploys as in
AZURE_PRINCIPAL_ID (azd's azureutil.GetCurrentPrincipalId: the `oid` claim of an ARM access token, Graph /me as a
fallback; github.com/Azure/azure-dev cli/azd/pkg/azureutil). The hook learns az's object id the same way and asks
only when both are the same account: otherwise the answer would be about someone else, so it says so and goes on.
Without AZURE_PRINCIPAL_ID (the hook run by hand) it checks az's account and says so.

It cannot see conditions on an assignment (RBAC Administrator is often limited to some roles) or deny assignments:
ARM still has the last word. When it cannot ask (no `az`, not signed in) it says so and lets the deployment go on.
Standard library only: azd runs it with the machine's python3. FIREBREAK_SKIP_RIGHTS_CHECK=true skips it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

ROLE_ASSIGNMENT_WRITE = "Microsoft.Authorization/roleAssignments/write"
# A subscription-scope deployment (azd's, which creates the group) needs these at the subscription too.
DEPLOYMENT_WRITE = "Microsoft.Resources/deployments/write"
GROUP_WRITE = "Microsoft.Resources/subscriptions/resourceGroups/write"
# Built-in role definition ids (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
ASSIGNING_ROLES = {
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": "Owner",
    "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9": "User Access Administrator",
    "f58310d9-a9f6-439a-9e8d-f62e7b41a168": "Role Based Access Control Administrator",
}
API_VERSION = "2022-04-01"


class CannotAsk(Exception):
    """az is missing or refused the question (not signed in, no network): the check cannot decide."""


def matches(pattern: str, action: str) -> bool:
    """An RBAC action pattern (`*` any run of characters, case-insensitive) against one action."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, action, flags=re.IGNORECASE) is not None


def permits(permissions: list[dict[str, Any]], action: str) -> bool:
    """ARM's rule: allowed when some role's actions match and that same role's notActions do not."""
    return any(
        any(matches(p, action) for p in entry.get("actions", []))
        and not any(matches(p, action) for p in entry.get("notActions", []))
        for entry in permissions
    )


def assigning_role_above(assignments: list[dict[str, Any]], subscription_id: str) -> str | None:
    """The first assignment of Owner / User Access Administrator / RBAC Administrator at the subscription or above
    (root or a management group), by role name; None without one."""
    subscription_scope = f"/subscriptions/{subscription_id}".lower()
    for assignment in assignments:
        properties = assignment.get("properties", {})
        scope = str(properties.get("scope", "")).lower().rstrip("/")
        above = scope in ("", subscription_scope) or scope.startswith("/providers/microsoft.management/")
        role = str(properties.get("roleDefinitionId", "")).rsplit("/", 1)[-1].lower()
        if above and role in ASSIGNING_ROLES:
            return ASSIGNING_ROLES[role]
    return None


def oid_claim(token: str) -> str | None:
    """The `oid` claim of a JWT access token (its payload read, not verified: it names who az is, no more)."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return None
    oid = claims.get("oid") if isinstance(claims, dict) else None
    return str(oid) if oid else None


def _az_text(*args: str) -> str | None:
    done = subprocess.run(["az", *args, "--output", "tsv"], capture_output=True, text=True, timeout=120, check=False)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def az_principal_id() -> str:
    """The object id az is signed in as, found as azd finds its own: the ARM token's `oid`, else Graph's /me."""
    token = _az_text(
        "account", "get-access-token", "--resource", "https://management.azure.com/", "--query", "accessToken"
    )
    oid = oid_claim(token) if token else None
    oid = oid or _az_text("ad", "signed-in-user", "show", "--query", "id")
    if not oid:
        raise CannotAsk("az is not signed in")
    return oid


def _az_get(url: str) -> tuple[bool, Any, str]:
    done = subprocess.run(
        ["az", "rest", "--method", "get", "--url", url, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        return False, None, done.stderr
    return True, json.loads(done.stdout or "{}"), ""


def _group_permissions(subscription_id: str, group: str) -> list[dict[str, Any]] | None:
    """The caller's effective permissions on the group; None when the group does not exist."""
    url = (
        f"/subscriptions/{subscription_id}/resourceGroups/{group}"
        f"/providers/Microsoft.Authorization/permissions?api-version={API_VERSION}"
    )
    ok, body, error = _az_get(url)
    if ok:
        return list(body.get("value", []))
    if "ResourceGroupNotFound" in error:
        return None
    raise CannotAsk(error.strip().splitlines()[-1] if error.strip() else "az rest failed")


def _subscription_assignments(subscription_id: str, principal_id: str) -> list[dict[str, Any]]:
    url = (
        f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleAssignments"
        f"?api-version={API_VERSION}&$filter=assignedTo('{principal_id}')"
    )
    ok, body, error = _az_get(url)
    if not ok:
        raise CannotAsk(error.strip().splitlines()[-1] if error.strip() else "az rest failed")
    return list(body.get("value", []))


def _refuse(where: str) -> int:
    print(
        f"firebreak: the signed-in account cannot create role assignments on {where} "
        f"({ROLE_ASSIGNMENT_WRITE}).\n"
        "The deployment assigns roles to the app's identity and the operator; without this right it stops half-way.\n"
        "Ask for one of: Owner, User Access Administrator, or Role Based Access Control Administrator "
        "(on the resource group, or on the subscription when the group does not exist yet), or deploy as an account "
        "that has one.\n"
        "azd deploys at the subscription scope (infra/main.subscription.bicep): that also needs "
        f"{DEPLOYMENT_WRITE} and {GROUP_WRITE} on the subscription (Contributor on the subscription), which an "
        "Owner of the resource group alone lacks.\n"
        "FIREBREAK_SKIP_RIGHTS_CHECK=true skips this check.",
        file=sys.stderr,
    )
    return 1


def check(env: dict[str, str]) -> int:
    if env.get("FIREBREAK_SKIP_RIGHTS_CHECK", "").lower() == "true":
        print("firebreak: rights check skipped (FIREBREAK_SKIP_RIGHTS_CHECK=true)")
        return 0
    subscription_id = env.get("AZURE_SUBSCRIPTION_ID", "")
    group = env.get("AZURE_RESOURCE_GROUP", "")
    principal_id = env.get("AZURE_PRINCIPAL_ID", "")
    try:
        if shutil.which("az") is None:
            raise CannotAsk("the Azure CLI (az) is not installed")
        if not subscription_id:
            raise CannotAsk("AZURE_SUBSCRIPTION_ID is not set")
        az_as = az_principal_id()
        if not principal_id:
            print(f"firebreak: AZURE_PRINCIPAL_ID is not set: checking az's account ({az_as})")
            principal_id = az_as
        elif az_as.lower() != principal_id.lower():
            print(
                f"firebreak: az is signed in as {az_as}, azd deploys as {principal_id}: rights check skipped "
                "(sign az in as the same account to run it)"
            )
            return 0
        permissions = _group_permissions(subscription_id, group) if group else None
        if permissions is not None:
            if permits(permissions, ROLE_ASSIGNMENT_WRITE):
                print(f"firebreak: may create role assignments in resource group {group}")
                return 0
            return _refuse(f"resource group {group}")
        role = assigning_role_above(_subscription_assignments(subscription_id, principal_id), subscription_id)
        if role is not None:
            print(f"firebreak: may create role assignments ({role} on the subscription or above)")
            return 0
        return _refuse(f"subscription {subscription_id}")
    except CannotAsk as reason:
        print(
            f"firebreak: could not check the rights to create role assignments ({reason}); "
            "the deployment needs Owner, User Access Administrator or Role Based Access Control Administrator.",
            file=sys.stderr,
        )
        return 0


if __name__ == "__main__":
    sys.exit(check(dict(os.environ)))
