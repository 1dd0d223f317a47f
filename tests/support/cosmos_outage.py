"""A Cosmos-API server of its own behind a TCP switch: the real server, and an outage a test can switch on.

The server (devhost/cosmos-server.js) advertises the switch's port as its endpoint
(tests/support/cosmos_advertise.js), as Cosmos DB advertises its regional endpoints, so the SDK sends every
request through the switch: `down()` is a stopped server, `stall()` a hung one, `up()` the same server
again with its data, so a test can read back what an outage wrote.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from devhost.processes import free_port
from devhost.stack import ROOT
from tests.support.tcp_switch import TcpSwitch

PRELOAD = Path(__file__).resolve().parent / "cosmos_advertise.js"


@contextmanager
def cosmos_behind_switch(log_path: Path) -> Iterator[TcpSwitch]:
    """Yield the switch; its port is the Cosmos endpoint (`https://127.0.0.1:<switch.port>`)."""
    inner = free_port()
    switch = TcpSwitch(inner)
    env = {**os.environ, "COSMOS_ADVERTISED_PORT": str(switch.port)}
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            ["node", "--require", str(PRELOAD), str(ROOT / "devhost" / "cosmos-server.js"), "--port", str(inner)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", inner)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Cosmos-API server did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.1)
        yield switch
    finally:
        switch.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
