"""Progress a client can rely on: values that strictly increase (MCP requires it) and, while a tool waits, a
report at least every second, so a long wait never looks like a hang.

A tool reports real steps through `ToolContext.report_progress(done, total, message)`; around a wait it uses
`async with ctx.waiting("waiting for NeuBird"):`. Inside, when no real report went out for `every` seconds, a
heartbeat repeats the latest message with the seconds waited and a value between the current step and the
next (step + 1/2, + 2/3, + 3/4, ...), never reaching it, so the next real step is still an increase. A real
report that does not increase (the same step, a new message) is sent the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]

HEARTBEAT_SECONDS = 1.0


class SteadyProgress:
    """Wraps the transport's progress function (None: every report is dropped)."""

    def __init__(self, send: ProgressFn | None, every: float = HEARTBEAT_SECONDS) -> None:
        self._send = send
        self._every = every
        self._step = 0.0
        self._nudges = 0
        self._last: float | None = None
        self._total: float | None = None
        self._message: str | None = None
        self._sent_at = time.monotonic()

    async def report(self, done: float, total: float | None, message: str | None) -> None:
        """A real report: sent as is when it increases, else as a step within the current one."""
        if self._send is None:
            return
        self._total = total if total is not None else self._total
        self._message = message or self._message
        if self._last is None or done > self._last:
            self._step, self._nudges = done, 0
            await self._emit(done, total, message)
        else:
            await self._nudge(message)

    async def _nudge(self, message: str | None) -> None:
        self._nudges += 1
        value = self._step + 1 - 1 / (self._nudges + 1)
        if self._last is not None and value <= self._last:
            return
        if self._total is not None and value >= self._total:
            return  # already at the end: a heartbeat could not increase without passing the total
        await self._emit(value, self._total, message)

    async def _emit(self, value: float, total: float | None, message: str | None) -> None:
        assert self._send is not None
        self._last, self._sent_at = value, time.monotonic()
        await self._send(value, total, message)

    @contextlib.asynccontextmanager
    async def waiting(self, message: str) -> AsyncIterator[None]:
        """Heartbeats (`message`, with the seconds waited) while the body runs, whenever it reports nothing."""
        if self._send is None:
            yield
            return
        started = time.monotonic()

        async def beat() -> None:
            while True:
                await asyncio.sleep(max(0.05, self._sent_at + self._every - time.monotonic()))
                if time.monotonic() - self._sent_at >= self._every * 0.95:
                    latest = self._message or message
                    await self._nudge(f"{latest} ({time.monotonic() - started:.0f} s)")
                    self._sent_at = time.monotonic()  # a heartbeat that could not go out still waits a period

        task = asyncio.ensure_future(beat())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
