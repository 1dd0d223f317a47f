"""One prompt turn's event stream read from NeuBird's HTTP response, and how it stopped.

stream.py parses and folds events (pure code); this module reads them off the open response: bytes through
`SseParser` (a cap on a line) until the end of the turn, and turns every way a stream breaks into an `outcome`
and an UPSTREAM_ERROR instead of an exception. Opening the stream (login, retries, the request and its idle
read timeout) is the client's part (client.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Literal

import httpx2

from shared.core.errors import AppError, UpstreamError
from shared.core.guarded_http import ResponseTooLarge
from shared.neubird.errors import QUOTED_CHARS, neubird_error
from shared.neubird.stream import MAX_LINE_BYTES, SseEvent, SseLineTooLong, SseParser, is_end_of_turn

# The client's logger: a broken stream is one of the client's outcomes, logged where its other failures are.
log = logging.getLogger("firebreak.neubird.client")

StreamOutcome = Literal["end_turn", "eof", "idle_timeout", "broken"]


class PromptStream:
    """The events of one prompt turn; iterate once with `async for`. Never raises for a stream that breaks.

    After the iteration `outcome` says how it stopped: "end_turn" (the final event was seen; reading stops
    there), "eof" (the server closed the stream before the end of the turn), "idle_timeout" (no byte for
    `idle_s`: keepalives count), "broken" (connection error, an over-long line, the response cap). Every
    outcome but "end_turn" sets `error` (an UPSTREAM_ERROR the caller may raise or fall back from, e.g. to
    inspect); the events read until then were all yielded.
    """

    def __init__(
        self,
        response: httpx2.Response,
        scrub: Callable[[str], str],
        *,
        idle_s: float,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        """`scrub` removes the client's secrets from an exception text before it is quoted in `error`; `idle_s` is
        the read timeout the response was opened with (the client's), named in the error when it fires."""
        self._response, self._scrub = response, scrub
        self._idle_s, self._max_line_bytes = idle_s, max_line_bytes
        self.outcome: StreamOutcome | None = None
        self.error: AppError | None = None
        self.events_read = 0
        self._started = False

    @property
    def complete(self) -> bool:
        return self.outcome == "end_turn"

    def __aiter__(self) -> AsyncIterator[SseEvent]:
        if self._started:
            raise RuntimeError("a PromptStream can be iterated once")
        self._started = True
        return self._events()

    async def _events(self) -> AsyncIterator[SseEvent]:
        parser = SseParser(self._max_line_bytes)
        try:
            async for chunk in self._response.aiter_raw():
                for event in parser.feed(chunk):
                    self.events_read += 1
                    yield event
                    if is_end_of_turn(event.data):
                        self.outcome = "end_turn"
                        return
            for event in parser.close():
                self.events_read += 1
                yield event
                if is_end_of_turn(event.data):
                    self.outcome = "end_turn"
                    return
            self._fail("eof", "the NeuBird stream ended before the end of the turn")
        except httpx2.TimeoutException:
            self._fail(
                "idle_timeout",
                f"the NeuBird stream was silent for {self._idle_s:g} s (no event, no keepalive) "
                "before the end of the turn",
            )
        except SseLineTooLong as exc:
            self._fail("broken", f"the NeuBird stream broke before the end of the turn: {exc}")
        except ResponseTooLarge as exc:
            self._fail("broken", f"the NeuBird stream broke before the end of the turn: {exc}")
        except (httpx2.TransportError, httpx2.StreamError) as exc:
            detail = self._scrub(f"{type(exc).__name__}: {exc}")[:QUOTED_CHARS]
            self._fail("broken", f"the NeuBird stream broke before the end of the turn ({detail})")

    def _fail(self, outcome: StreamOutcome, message: str) -> None:
        self.outcome = outcome
        self.error = neubird_error(
            UpstreamError,
            "api",
            message,
            details={"stream_outcome": outcome, "events_read": self.events_read},
            recovery=["The results read so far are partial; read the session with inspect, or ask again."],
        )
        log.warning("NeuBird prompt stream: %s (%d events read)", message, self.events_read)
