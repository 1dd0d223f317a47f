"""A TCP forwarder in front of a real server that a test can take down and bring back: a store outage on demand.

`TcpSwitch(target_port)` listens on its own 127.0.0.1 port and forwards bytes both ways (TLS passes through
untouched, so the Cosmos SDK talks to the real Cosmos-API server behind it). `down()` does what a dead
process does: the port refuses connections and every open connection is closed. `stall()` is a hung server
(or a black-holed network): open connections stay open but carry nothing more, new ones are accepted and
never answered. `up()` drops what was held (it never reaches the server) and forwards again on the same
port, so the data behind it is still there afterwards and a test can check what an outage wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

Mode = Literal["up", "down", "stall"]
T = TypeVar("T")


class TcpSwitch:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.mode: Mode = "up"
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._flowing: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-switch", daemon=True)
        self._thread.start()
        self._call(self._listen())

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    async def _listen(self) -> None:
        if self._flowing is None:
            self._flowing = asyncio.Event()
            self._flowing.set()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)

    async def _close_all(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._writers):
            # A dead process's connections end with a reset, not a polite close.
            with contextlib.suppress(Exception):
                w.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            if self.mode == "stall":
                await reader.read()  # hold the connection, answer nothing, until the client gives up
                return
            up_reader, up_writer = await asyncio.open_connection(*self.target)
            self._writers.add(up_writer)
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.transport.abort()
            self._writers.discard(writer)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                assert self._flowing is not None
                await self._flowing.wait()  # a stalled switch holds the bytes until `up` drops the connection
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.transport.abort()
            self._writers.discard(writer)

    def down(self) -> None:
        """Refuse connections and drop every open one, as a stopped server does."""
        self.mode = "down"
        self._call(self._close_all())

    def stall(self) -> None:
        """Answer nothing more: open connections hang, new ones are accepted and hang."""
        self.mode = "stall"
        self._call(self._set_flowing(False))

    def up(self) -> None:
        self._call(self._close_all())
        self.mode = "up"
        self._call(self._set_flowing(True))
        self._call(self._listen())

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    def close(self) -> None:
        self._call(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
