"""Round trips to Cosmos and Blob, and the version report."""

from __future__ import annotations

import asyncio
import platform
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any
from importlib import metadata

from shared.core.deps import Deps
from shared.core.errors import AppError
from shared.health.models import DependencyStatus, HealthReport, StoreCheck

_PACKAGES = ("azure-functions", "azure-functions-durable", "mcp", "azure-cosmos", "azure-storage-blob", "pydantic", "openai")
_PROBE_TIMEOUT_S = 5.0
# One probe document/blob per process, overwritten each time, so health checks never grow storage.
_PROBE_ID = f"probe-{uuid.uuid4().hex[:12]}"


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


async def timed_probe(probe: Callable[[], Awaitable[Any]], timeout: float | None = None) -> tuple[Any, float, Exception | None]:
    """Run a probe: (its value, milliseconds taken, the exception it failed with or None).

    A dependency being down is a result of a health check or a diagnosis, never a crash of it.
    """
    started = time.perf_counter()
    try:
        value = await (asyncio.wait_for(probe(), timeout) if timeout else probe())
        return value, round((time.perf_counter() - started) * 1000, 2), None
    except Exception as exc:
        return None, round((time.perf_counter() - started) * 1000, 2), exc


async def _timed(name: str, probe: Callable[[], Awaitable[Any]]) -> StoreCheck:
    _, latency_ms, exc = await timed_probe(probe, _PROBE_TIMEOUT_S)
    if exc is None:
        return StoreCheck(name=name, ok=True, latency_ms=latency_ms)
    if isinstance(exc, asyncio.TimeoutError):
        error = f"no answer within {_PROBE_TIMEOUT_S:.0f}s"
    else:
        error = exc.message if isinstance(exc, AppError) else type(exc).__name__
    return StoreCheck(name=name, ok=False, error=error)


async def cosmos_round_trip(deps: Deps) -> None:
    container = await deps.cosmos.container("probes")
    nonce = uuid.uuid4().hex
    await container.upsert({"id": _PROBE_ID, "nonce": nonce, "at": deps.clock().isoformat()})
    doc = await container.read(_PROBE_ID, _PROBE_ID)
    if not doc or doc.get("nonce") != nonce:
        raise RuntimeError("cosmos probe read back a different document")


async def blob_round_trip(deps: Deps) -> None:
    nonce = uuid.uuid4().hex
    name = f"_probes/{_PROBE_ID}.txt"
    await deps.blobs.put(name, nonce, content_type="text/plain")
    if await deps.blobs.get(name) != nonce.encode():
        raise RuntimeError("blob probe read back different bytes")


async def perf_index_read(deps: Deps) -> None:
    """The perf run index (Cosmos `perf_runs`) answers a partition-scoped point read."""
    await (await deps.cosmos.container("perf_runs")).read(_PROBE_ID, _PROBE_ID)


async def perf_blob_list(deps: Deps) -> None:
    """Artifacts, snapshots and reports live under `perf/` in the app's container: it can be listed."""
    async for _ in deps.blobs.list("perf/"):
        break


async def check_stores(deps: Deps) -> list[StoreCheck]:
    """Both stores and the perf capability's parts of them, probed concurrently."""
    return list(await asyncio.gather(
        _timed("cosmos", lambda: cosmos_round_trip(deps)),
        _timed("blob", lambda: blob_round_trip(deps)),
        _timed("perf_runs", lambda: perf_index_read(deps)),
        _timed("perf_artifacts", lambda: perf_blob_list(deps)),
    ))


async def health_report(deps: Deps, *, include_versions: bool = True) -> HealthReport:
    s = deps.settings
    stores = await check_stores(deps)
    ok = all(c.ok for c in stores)
    return HealthReport(
        status="ok" if ok else "degraded",
        version=s.build_version,
        build_commit=s.build_commit,
        environment=s.environment,
        dev_mode=s.dev_mode,
        uptime_s=round(time.monotonic() - deps.started_monotonic, 1),
        stores=stores,
        llm=DependencyStatus(configured=s.llm_configured, mode="llm" if s.llm_configured else "rule_based"),
        neubird=DependencyStatus(configured=s.neubird_configured, mode="proxy" if s.neubird_configured else "unavailable"),
        versions=package_versions() if include_versions else {},
        next_action=(
            "All stores answered; proceed."
            if ok
            else "A store is down: check the failing store's error, its endpoint settings and the emulators (make run starts them)."
        ),
    )
