"""health.check and readiness: the declared readiness checks, the version report."""

from __future__ import annotations

import platform
import time
from functools import lru_cache
from importlib import metadata

from shared.core.keyvault_references import unresolved_message
from shared.health.checks import readiness_checks
from shared.health.models import DependencyStatus, HealthReport, IntegrationStatus, StoreCheck
from shared.tools.checks import CheckResult, run_checks
from shared.tools.deps import Deps

_PACKAGES = (
    "azure-functions",
    "azure-functions-durable",
    "mcp",
    "azure-cosmos",
    "azure-storage-blob",
    "pydantic",
    "openai",
)


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _store_check(result: CheckResult) -> StoreCheck:
    return StoreCheck(
        name=result.name,
        ok=result.ok,
        latency_ms=result.latency_ms if result.ok else None,
        error=None if result.ok else result.detail,
    )


async def check_stores(deps: Deps) -> list[StoreCheck]:
    """Every readiness check (both stores and each capability's parts of them), concurrently."""
    return [_store_check(r) for r in await run_checks(readiness_checks(deps), deps)]


async def integrations(deps: Deps) -> list[IntegrationStatus]:
    """The setup checks (settings only): each outside service, configured or what to set."""
    setups = [c for c in deps.checks if c.setup and c.applies(deps.settings)]
    return [
        IntegrationStatus(name=r.name, detail=r.detail if r.ok else f"setup check failed: {r.detail}")
        for r in await run_checks(setups, deps)
    ]


async def health_report(deps: Deps, *, include_versions: bool = True) -> HealthReport:
    s = deps.settings
    stores = await check_stores(deps)
    stores_ok = all(c.ok for c in stores)
    unresolved = [unresolved_message(name) for name in s.unresolved_references]
    return HealthReport(
        status="ok" if stores_ok and not unresolved else "degraded",
        version=s.build_version,
        build_commit=s.build_commit,
        environment=s.environment,
        dev_mode=s.dev_mode,
        uptime_s=round(time.monotonic() - deps.started_monotonic, 1),
        stores=stores,
        llm=DependencyStatus(configured=s.llm_configured, mode="llm" if s.llm_configured else "rule_based"),
        integrations=await integrations(deps),
        versions=package_versions() if include_versions else {},
        settings=unresolved,
        next_action=_next_action(stores_ok, unresolved),
    )


def _next_action(stores_ok: bool, unresolved: list[str]) -> str:
    if not stores_ok:
        return (
            "A store is down: check the failing store's error, its endpoint settings and the emulators"
            " (make run starts them)."
        )
    if unresolved:
        return (
            "Stores answered, but app settings listed in `settings` are unresolved Key Vault references and read as"
            " unset: fix the role or the secret name, then restart the app (the platform resolves references at"
            " start)."
        )
    return "All stores answered; proceed."
