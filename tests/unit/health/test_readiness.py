"""The readiness cache: one probe per interval whoever polls, concurrent polls share it, failures expire sooner."""

from __future__ import annotations

import asyncio

from shared.health.models import StoreCheck
from shared.health.readiness import ReadinessCache


class Probe:
    """Counts probes; answers the store states it is told to."""

    def __init__(self) -> None:
        self.calls = 0
        self.ok = True

    async def __call__(self) -> list[StoreCheck]:
        self.calls += 1
        await asyncio.sleep(0)  # a real probe yields to the loop; concurrent callers arrive meanwhile
        return [StoreCheck(name="cosmos", ok=self.ok), StoreCheck(name="blob", ok=True)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_many_polls_make_one_probe_per_interval() -> None:
    probe, clock = Probe(), Clock()
    cache = ReadinessCache(probe, monotonic=clock, ready_ttl=10.0, failed_ttl=2.0)
    for _ in range(25):
        assert all(c.ok for c in await cache.stores())
    await asyncio.gather(*(cache.stores() for _ in range(25)))
    assert probe.calls == 1
    clock.now += 9.9
    await cache.stores()
    assert probe.calls == 1
    clock.now += 0.2
    await cache.stores()
    assert probe.calls == 2


async def test_concurrent_first_polls_share_one_probe() -> None:
    probe = Probe()
    cache = ReadinessCache(probe, monotonic=Clock())
    results = await asyncio.gather(*(cache.stores() for _ in range(50)))
    assert probe.calls == 1
    assert len(results) == 50


async def test_a_failure_is_reused_only_briefly() -> None:
    probe, clock = Probe(), Clock()
    probe.ok = False
    cache = ReadinessCache(probe, monotonic=clock, ready_ttl=10.0, failed_ttl=2.0)
    assert not all(c.ok for c in await cache.stores())
    await cache.stores()
    assert probe.calls == 1
    probe.ok = True
    clock.now += 2.1  # well before the ready interval: the recovered store is seen
    assert all(c.ok for c in await cache.stores())
    assert probe.calls == 2
