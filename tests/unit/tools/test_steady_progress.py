"""SteadyProgress: what reaches the client strictly increases, and a wait reports at least once a second."""

from __future__ import annotations

import asyncio

from shared.tools.progress import SteadyProgress


class Seen:
    def __init__(self, enough: int = 0) -> None:
        self.reports: list[tuple[float, float | None, str | None]] = []
        self.enough = asyncio.Event()
        self._wanted = enough

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.reports.append((done, total, message))
        if len(self.reports) >= self._wanted:
            self.enough.set()


async def test_repeated_or_falling_values_still_increase_and_stay_below_the_next_step() -> None:
    seen = Seen()
    steady = SteadyProgress(seen)
    for done in (1, 1, 1, 0, 2):
        await steady.report(done, 5, f"step {done}")
    values = [v for v, _, _ in seen.reports]
    assert values == sorted(set(values))
    assert all(1 <= v < 2 for v in values[:-1])
    assert values[-1] == 2


async def test_a_value_at_the_total_is_not_passed_by_a_repeat() -> None:
    seen = Seen()
    steady = SteadyProgress(seen)
    await steady.report(3, 3, "done")
    await steady.report(3, 3, "done again")
    assert [v for v, _, _ in seen.reports] == [3]


async def test_a_silent_wait_gets_heartbeats_with_the_latest_message() -> None:
    seen = Seen(enough=4)
    steady = SteadyProgress(seen, every=0.05)
    await steady.report(0, None, "waiting for the upstream")
    async with steady.waiting("waiting"):
        await asyncio.wait_for(seen.enough.wait(), 60)  # a hang guard, not a timing assertion
    values = [v for v, _, _ in seen.reports]
    assert values == sorted(set(values))
    assert all(m is not None and m.startswith("waiting for the upstream (") for _, _, m in seen.reports[1:])


async def test_without_a_progress_function_no_heartbeat_task_runs() -> None:
    steady = SteadyProgress(None, every=0.01)
    await steady.report(1, 2, "x")
    before = len(asyncio.all_tasks())
    async with steady.waiting("w"):
        assert len(asyncio.all_tasks()) == before
