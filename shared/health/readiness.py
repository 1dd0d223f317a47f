"""Readiness for the anonymous `GET /api/health`: one store round trip per worker per few seconds, whoever polls."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from shared.health.models import ReadinessReport, StoreCheck

# Ready answers are reused this long: probes and load balancers poll often, and each fresh check
# writes a Cosmos document and a blob. A failure is reused only briefly, so a store that comes
# back is seen within a couple of seconds, yet a flood of polls against a down store still costs
# one probe per interval rather than one per call.
READY_TTL_S = 10.0  # default of FIREBREAK_HEALTH_CACHE_SECONDS
FAILED_TTL_S = 2.0


class ReadinessCache:
    """The last store checks, refreshed at most once per interval; concurrent callers share one refresh."""

    def __init__(
        self,
        probe: Callable[[], Awaitable[list[StoreCheck]]],
        *,
        monotonic: Callable[[], float] = time.monotonic,
        ready_ttl: float = READY_TTL_S,
        failed_ttl: float = FAILED_TTL_S,
        unresolved_settings: int = 0,
    ) -> None:
        self._probe = probe
        self._unresolved_settings = unresolved_settings
        self._monotonic = monotonic
        self._ready_ttl, self._failed_ttl = ready_ttl, min(failed_ttl, ready_ttl)
        self._checks: list[StoreCheck] | None = None
        self._expires = 0.0
        self._inflight: asyncio.Future[list[StoreCheck]] | None = None

    async def report(self) -> ReadinessReport:
        """`ready` once every store check answers, else `starting`, with each check (cached as `stores`)."""
        stores = await self.stores()
        return ReadinessReport(
            status="ready" if all(s.ok for s in stores) else "starting",
            stores=stores,
            unresolved_settings=self._unresolved_settings,
        )

    async def stores(self) -> list[StoreCheck]:
        if self._checks is not None and self._monotonic() < self._expires:
            return self._checks
        loop = asyncio.get_running_loop()
        if self._inflight is None or self._inflight.done() or self._inflight.get_loop() is not loop:
            self._inflight = loop.create_task(self._refresh())
        # Shielded: one caller giving up (a client disconnect) must not cancel the others' refresh.
        return await asyncio.shield(self._inflight)

    async def _refresh(self) -> list[StoreCheck]:
        checks = await self._probe()
        ttl = self._ready_ttl if all(c.ok for c in checks) else self._failed_ttl
        self._checks, self._expires = checks, self._monotonic() + ttl
        return checks
