"""Checks: how a capability declares a probe of its parts, and how any check is run with a time limit.

Health (readiness, health.check) and the diagnostics orchestration run the checks every capability
declares; a capability never imports another to probe it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
from pydantic import BaseModel, Field

from shared.core.errors import AppError
from shared.core.settings import Settings

if TYPE_CHECKING:
    from shared.tools.deps import Deps

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Check:
    """One probe: it returns a short detail, or raises when the part is down.

    `readiness` checks gate GET /api/health and appear in health.check's `stores`; every check that
    `applies` to the settings runs in POST /api/diagnostics.
    """

    name: str
    description: str
    probe: Callable[[Deps], Awaitable[str | None]]
    readiness: bool = False
    applies: Callable[[Settings], bool] = field(default=lambda _settings: True)
    # A settings-only probe (no I/O) whose detail health.check lists under `integrations`: whether an
    # outside service is configured and, if not, what to set. Never affects the health status.
    setup: bool = False


class CheckResult(BaseModel):
    """One check's outcome."""

    name: str
    ok: bool
    latency_ms: float | None = None
    detail: str = Field("", description="What was done, or why it failed (no secrets).")


async def timed_probe(probe: Callable[[], Awaitable[Any]]) -> tuple[Any, float, Exception | None]:
    """Run a probe: (its value, milliseconds taken, the exception it failed with or None).

    A dependency being down is a result of a health check or a diagnosis, never a crash of it.
    """
    started = time.perf_counter()
    try:
        value = await probe()
        return value, round((time.perf_counter() - started) * 1000, 2), None
    except Exception as exc:
        return None, round((time.perf_counter() - started) * 1000, 2), exc


async def run_check(check: Check, deps: Deps) -> CheckResult:
    """One check with a time limit; a failure names the error type or our own message (never a secret)."""
    detail, latency_ms, exc = await timed_probe(lambda: asyncio.wait_for(check.probe(deps), PROBE_TIMEOUT_S))
    if exc is None:
        return CheckResult(name=check.name, ok=True, latency_ms=latency_ms, detail=detail or "ok")
    if isinstance(exc, asyncio.TimeoutError):
        why = f"no answer within {PROBE_TIMEOUT_S:.0f}s"
    else:
        why = exc.message if isinstance(exc, AppError) else type(exc).__name__
    return CheckResult(name=check.name, ok=False, latency_ms=latency_ms, detail=why)


async def run_checks(checks: Iterable[Check], deps: Deps) -> list[CheckResult]:
    """Several checks concurrently, results in the order given."""
    return list(await asyncio.gather(*(run_check(c, deps) for c in checks)))


async def http_reachable(url: str) -> str:
    """Any HTTP answer (even 401/404) proves an endpoint is reachable; only transport failures do not."""
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)) as session,
        session.get(url, allow_redirects=False) as response,
    ):
        return f"HTTP {response.status}"
