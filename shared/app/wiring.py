"""Build the process's settings and dependencies from the catalogue. Does no I/O: clients connect on first use."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shared.app.capabilities import catalogue
from shared.core.settings import Settings
from shared.health.readiness import ReadinessCache as ReadinessCache  # re-exported: functions/ names no capability
from shared.health.service import check_stores
from shared.health.settings import HealthSettings
from shared.identity.api_keys import ApiKeyStore
from shared.identity.entra import EntraValidator
from shared.identity.resolver import PrincipalResolver
from shared.storage.blob import BlobStore
from shared.storage.cosmos import CosmosDatabase
from shared.tools.capability import Catalogue
from shared.tools.deps import Deps


def load_settings(env: Mapping[str, str] | None = None, cat: Catalogue | None = None) -> Settings:
    """The app's settings with every capability's section, from `env` (default: the process environment)."""
    return Settings.from_env(env, sections=(cat or catalogue()).settings_sections)


def readiness_cache(deps: Callable[[], Deps], settings: Settings) -> ReadinessCache:
    """The worker's cached readiness checks behind the anonymous health route (health's store round trips)."""
    return ReadinessCache(
        lambda: check_stores(deps()),
        ready_ttl=settings.section(HealthSettings).cache_seconds,
        unresolved_settings=len(settings.unresolved_references),
    )


def build_deps(
    settings: Settings,
    *,
    cat: Catalogue | None = None,
    cosmos_database: str | None = None,
    blob_container: str | None = None,
) -> Deps:
    """Wire the stores (with the catalogue's containers), identity and the declared checks."""
    cat = cat or catalogue()
    cosmos = CosmosDatabase(settings, cat.containers.values(), database=cosmos_database)
    api_keys = ApiKeyStore(cosmos)
    return Deps(
        settings=settings,
        cosmos=cosmos,
        blobs=BlobStore(settings, container=blob_container),
        api_keys=api_keys,
        principals=PrincipalResolver(settings, api_keys, EntraValidator(settings)),
        checks=cat.checks,
        tools=cat.registry,
    )
