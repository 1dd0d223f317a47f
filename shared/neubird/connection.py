"""One tool call's view of NeuBird: the caller's state, the instance it talks to, a client and the org.

`open_connection` refuses NOT_CONFIGURED before anything else when the deployment has no NeuBird account,
re-checks the caller's instance against the allow-list on every call (settings may have changed since the
switch), and hands out a client whose tokens live in the process-wide runtime (`deps.state["neubird"]`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2

from shared.core.errors import Forbidden, NotConfigured, NotFound, UpstreamError, ValidationFailed
from shared.core.outbound import OutboundGuard
from shared.identity.models import Principal
from shared.neubird.client import ClientLimits, NeubirdClient, http_client
from shared.neubird.errors import neubird_error
from shared.neubird.instances import host_allowed
from shared.neubird.ownership import SessionOwners
from shared.neubird.settings import NOT_CONFIGURED_SETTINGS, NeubirdSettings
from shared.neubird.store import CallerState, NeubirdStore
from shared.neubird.tokens import Credentials, TokenCache
from shared.tools.deps import Deps

PLACEHOLDER_ORG = "ORGANIZATION_NAME_ROOT"
# Functions ends an HTTP response at 230 s: a whole tool call (every NeuBird call and retry in it) ends before.
CALL_DEADLINE_MARGIN_SECONDS = 25.0
MAX_CALL_SECONDS = 225.0
SWITCHED_FIELD = "neubird_switch_instance.base_url"


@dataclass
class Runtime:
    """What the capability keeps per worker process: tokens (never stored elsewhere), upstream call counts, and
    the HTTP connection pool every NeuBird call shares (one per event loop: its connections belong to one)."""

    tokens: TokenCache = field(default_factory=TokenCache)
    upstream_calls: dict[str, int] = field(default_factory=dict)
    # (instance, filter key) pairs an instance refused: not sent there again by this worker (alerts.py).
    refused_filters: set[tuple[str, str]] = field(default_factory=set)
    # One pool per event loop (its connections belong to one) and per field name a refusal names.
    _pools: dict[str, tuple[asyncio.AbstractEventLoop, httpx2.AsyncClient]] = field(default_factory=dict, repr=False)

    def count(self, route: str) -> None:
        self.upstream_calls[route] = self.upstream_calls.get(route, 0) + 1

    def client(self, deps: Deps, base_url: str, *, url_field: str = "NEUBIRD_BASE_URL") -> NeubirdClient:
        """A client for `base_url` on the deployment's account, over the shared pool (closing it keeps the pool)."""
        settings = deps.settings.section(NeubirdSettings)
        assert settings.email  # configured: the callers refused NOT_CONFIGURED first
        assert settings.password
        guard = OutboundGuard(deps.settings, "neubird")
        loop = asyncio.get_running_loop()
        pool = self._pools.get(url_field)
        if pool is None or pool[0] is not loop or pool[1].is_closed:
            pool = self._pools[url_field] = (loop, http_client(guard, settings.max_response_bytes, url_field))
        return NeubirdClient(
            base_url,
            Credentials(settings.email, settings.password),
            guard=guard,
            tokens=self.tokens,
            limits=ClientLimits.from_settings(settings),
            on_call=self.count,
            http=pool[1],
        )

    async def aclose(self) -> None:
        """Close the pools (Deps.aclose calls this); a pool of another, finished event loop is only dropped."""
        pools, self._pools = self._pools, {}
        for loop, client in pools.values():
            if loop is asyncio.get_running_loop():
                await client.aclose()


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
            (
                "Locally: `python -m devhost.fake_neubird --port 8089` serves a seeded fake NeuBird"
                " (see docs/capabilities.md, neubird)."
            ),
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
    owners: SessionOwners
    deadline: float = 0.0  # time.monotonic() by which the tool call must have answered
    _org: str | None = None

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()

    async def check_session(self, session_uuid: str) -> None:
        """NOT_FOUND for a session another workspace created here (as for an id that does not exist)."""
        owner = await self.owners.owner(session_uuid)
        if owner is not None and owner != self.principal.workspace_id:
            raise unknown_session(session_uuid)

    async def claim_session(self, session_uuid: str, now: Any) -> None:
        await self.owners.claim(session_uuid, self.principal.workspace_id, now)

    async def visible(self, session_uuids: list[str]) -> set[str]:
        """Those of `session_uuids` this workspace may see: its own and the organisation's (no owner)."""
        owners = await self.owners.owners(session_uuids)
        return {s for s in session_uuids if owners.get(s, self.principal.workspace_id) == self.principal.workspace_id}

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
async def open_connection(deps: Deps, principal: Principal, *, recover: bool = False) -> AsyncIterator[Connection]:
    """The caller's connection. An instance the allow-list no longer admits is refused, unless `recover` (the
    tools that fix it: switch_instance, configure_defaults), which fall back to NEUBIRD_BASE_URL."""
    settings = deps.settings.section(NeubirdSettings)
    if not settings.configured:
        raise not_configured(settings)
    assert settings.base_url  # configured
    assert settings.email
    assert settings.password
    if not settings.admits(principal.workspace_id):
        raise neubird_error(
            Forbidden,
            "authentication",
            "NeuBird is not enabled for your workspace on this deployment.",
            recovery=["Ask the operator to add your workspace id to FIREBREAK_NEUBIRD_WORKSPACES."],
        )
    seconds = min(MAX_CALL_SECONDS, settings.sync_wait_seconds + CALL_DEADLINE_MARGIN_SECONDS)
    deadline = time.monotonic() + seconds
    store = NeubirdStore(deps.cosmos)
    state = await store.state(principal)
    base_url = state.base_url or settings.base_url
    if not instance_allowed(settings, base_url) and recover:
        # Back on the deployment's instance, for good: the next call must not find the refused one again.
        state.base_url, state.projects, base_url = None, None, settings.base_url
        await store.save_state(state, deps.clock(), ("base_url", "projects"))
    elif not instance_allowed(settings, base_url):
        raise neubird_error(
            ValidationFailed,
            "validation",
            f"The instance you switched to ({base_url}) is no longer allowed on this deployment.",
            details={"current_url": base_url, "allowed_hosts": list(settings.host_patterns())},
            recovery=[f"Call neubird_switch_instance with base_url {settings.base_url!r} or an allowed host."],
        )
    try:
        # A refusal names what the caller can change: their switched instance, else the deployment's setting.
        field_name = SWITCHED_FIELD if state.base_url else "NEUBIRD_BASE_URL"
        async with asyncio.timeout(seconds), runtime(deps).client(deps, base_url, url_field=field_name) as client:
            yield Connection(
                principal, settings, store, state, base_url, client, SessionOwners(deps.cosmos, base_url), deadline
            )
    except TimeoutError:
        raise neubird_error(
            UpstreamError,
            "api",
            f"NeuBird did not answer within {seconds:.0f} s (one request may not take longer).",
            recovery=[
                "NeuBird is slow or throttling: try again in a minute.",
                "A session that was already started keeps running: neubird_list_sessions shows it.",
            ],
        ) from None


def unknown_session(session_uuid: str) -> NotFound:
    return neubird_error(
        NotFound,
        "investigation",
        f"No NeuBird session {describe(session_uuid)!r} here.",
        details={"session_uuid": describe(session_uuid, 128)},
        recovery=[
            "List the sessions you can use with neubird_list_sessions.",
            "If you know the session's project, pass it as project_uuid.",
        ],
    )


def describe(obj: Any, limit: int = 200) -> str:
    """A caller-supplied value quoted in a message, cut and without control characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(obj))
    return text if len(text) <= limit else text[: limit - 1] + "…"
