"""One tool call's view of NeuBird: the caller's state, the instance it talks to, a client and the org.

`open_connection` refuses NOT_CONFIGURED before anything else when the deployment has no NeuBird account,
re-checks the caller's instance against the allow-list on every call (settings may have changed since the
switch), and hands out a client whose tokens live in the process-wide runtime (`deps.state["neubird"]`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from shared.core.errors import NotConfigured, ValidationFailed
from shared.core.outbound import OutboundGuard
from shared.identity.models import Principal
from shared.neubird.client import ClientLimits, Credentials, NeubirdClient, TokenCache
from shared.neubird.errors import neubird_error
from shared.neubird.instances import host_allowed
from shared.neubird.settings import NOT_CONFIGURED_SETTINGS, NeubirdSettings
from shared.neubird.store import CallerState, NeubirdStore
from shared.tools.deps import Deps

PLACEHOLDER_ORG = "ORGANIZATION_NAME_ROOT"
SWITCHED_FIELD = "neubird_switch_instance.base_url"


@dataclass
class Runtime:
    """What the capability keeps per worker process: tokens (never stored elsewhere) and upstream call counts."""

    tokens: TokenCache = field(default_factory=TokenCache)
    upstream_calls: dict[str, int] = field(default_factory=dict)

    def count(self, route: str) -> None:
        self.upstream_calls[route] = self.upstream_calls.get(route, 0) + 1


def runtime(deps: Deps) -> Runtime:
    found = deps.state.get("neubird")
    if not isinstance(found, Runtime):
        found = deps.state["neubird"] = Runtime()
    return found


def not_configured(settings: NeubirdSettings) -> NotConfigured:
    missing = [
        name
        for name, value in zip(
            NOT_CONFIGURED_SETTINGS,
            (settings.base_url, settings.email, settings.password and settings.password.get_secret_value()),
            strict=True,
        )
        if not value
    ]
    return NotConfigured(
        "NeuBird is not configured on this deployment: set " + ", ".join(missing) + ".",
        details={"type": "authentication", "missing_settings": missing},
        recovery_suggestions=[
            (
                "Set NEUBIRD_BASE_URL (e.g. https://<tenant>.app.neubird.ai/api), NEUBIRD_EMAIL and "
                "NEUBIRD_PASSWORD in the app settings (a Key Vault reference for the password on Azure), then call "
                "again."
            ),
            "Locally: `python -m devhost.fake_neubird --port 8089` serves a seeded fake NeuBird (see the README).",
        ],
    )


def instance_allowed(settings: NeubirdSettings, url: str) -> bool:
    return host_allowed(url, settings.host_patterns(), always=[settings.base_url] if settings.base_url else [])


@dataclass
class Connection:
    principal: Principal
    settings: NeubirdSettings
    store: NeubirdStore
    state: CallerState
    base_url: str
    client: NeubirdClient
    _org: str | None = None

    async def organization(self) -> str:
        """The caller's default organization, else the deployment's, else the one NeuBird names for the account."""
        chosen = self.state.defaults.organization_uuid or self.settings.default_organization_uuid
        if chosen and chosen != PLACEHOLDER_ORG:
            return chosen
        if self._org is None:
            # The CLI learns the org from GET /v1/user; the placeholder is what the official samples send and
            # what the API accepts when the account's org cannot be learnt.
            self._org = (await self.client.organization_uuid()) or PLACEHOLDER_ORG
        return self._org


@asynccontextmanager
async def open_connection(deps: Deps, principal: Principal) -> AsyncIterator[Connection]:
    settings = deps.settings.section(NeubirdSettings)
    if not settings.configured:
        raise not_configured(settings)
    assert settings.base_url  # configured
    assert settings.email
    assert settings.password
    store = NeubirdStore(deps.cosmos)
    state = await store.state(principal)
    base_url = state.base_url or settings.base_url
    if not instance_allowed(settings, base_url):
        raise neubird_error(
            ValidationFailed,
            "validation",
            f"The instance you switched to ({base_url}) is no longer allowed on this deployment.",
            details={"current_url": base_url, "allowed_hosts": list(settings.host_patterns())},
            recovery=[f"Call neubird_switch_instance with base_url {settings.base_url!r} or an allowed host."],
        )
    rt = runtime(deps)
    client = NeubirdClient(
        base_url,
        Credentials(settings.email, settings.password),
        guard=OutboundGuard(deps.settings),
        tokens=rt.tokens,
        limits=ClientLimits.from_settings(settings),
        on_call=rt.count,
        # A refusal names what the caller can change: their switched instance, else the deployment's setting.
        url_field=SWITCHED_FIELD if state.base_url else "NEUBIRD_BASE_URL",
    )
    async with client:
        yield Connection(principal, settings, store, state, base_url, client)


def describe(obj: Any, limit: int = 200) -> str:
    """A caller-supplied value quoted in a message, cut and without control characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(obj))
    return text if len(text) <= limit else text[: limit - 1] + "…"
