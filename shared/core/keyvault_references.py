"""App settings that are still unresolved Key Vault references: read as unset, named (never shown) for health.

App Service and Functions resolve `@Microsoft.KeyVault(SecretUri=...)` / `@Microsoft.KeyVault(VaultName=...;
SecretName=...)` app settings before the worker starts; when a reference cannot be resolved (the app identity's
role assignment has not propagated on the first start, the secret or vault name is wrong, the vault is behind a
network the app cannot reach) the platform passes the reference text itself as the value
(learn.microsoft.com/azure/app-service/app-service-key-vault-references, "Troubleshoot Key Vault references").
Parsed as a value, that text fails every validator (a base64 key, a URL, JSON) and with it every request; read as
unset, the app serves what does not need the setting and health.check says which reference to fix.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

log = logging.getLogger("firebreak.settings")

# Case-insensitive, spaces allowed around the parts: `@Microsoft.KeyVault(` as the value's start.
_REFERENCE = re.compile(r"\s*@\s*microsoft\s*\.\s*keyvault\s*\(", re.IGNORECASE)


def is_unresolved_reference(value: object) -> bool:
    """True when `value` is a Key Vault reference's text (the platform could not resolve it)."""
    return isinstance(value, str) and _REFERENCE.match(value) is not None


def unresolved_message(name: str) -> str:
    """What health and the log say about one unresolved setting: its name and what to check, never its text."""
    return (
        f"{name}: Key Vault reference not resolved — check the app identity's Key Vault Secrets User role "
        "(a new assignment can take minutes to apply; restart the app after) and the secret name"
    )


def without_unresolved(env: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """`env` without the unresolved references, and their names (sorted); one warning per name."""
    names = tuple(sorted(name for name, value in env.items() if is_unresolved_reference(value)))
    for name in names:
        log.warning(unresolved_message(name))
    return {k: v for k, v in env.items() if k not in names}, names
