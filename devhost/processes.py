"""Start emulators and offline hosts on free ports and stop them afterwards (used by tests and benchmarks)."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from devhost.stack import ROOT, Stack

# Servers the tests start get ports BELOW the kernel's ephemeral range: a port inside it can be taken as
# the source port of any outgoing connection on the machine between a stop and a restart on that port
# (seen: Azurite failing to restart on its own port in the stop/start test).
_LOWEST_PORT = 11000
# The spec's LLM settings (shared/core/llm_providers.py): like FIREBREAK_*/OPENAI_*, a developer's own values
# must not reach a test host and turn its rule path into calls to a real model.
LLM_PROVIDER_ENV = ("DEFAULT_LLM_PROVIDER", "GEMINI_API_KEY", "GROK_API_KEY")


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_block(size: int = 4) -> int:
    """A base port with `size` consecutive free ports (emulators take consecutive ones), outside the ephemeral range."""
    top = _ephemeral_start() - size
    for _ in range(500):
        base = random.randrange(_LOWEST_PORT, top) if top > _LOWEST_PORT else random.randrange(1024, 65535 - size)
        if all(_is_free(p) for p in range(base, base + size)):
            return base
    raise RuntimeError("no block of free ports")


def free_port() -> int:
    return free_port_block(1)


def start_stack(data_dir: Path) -> Stack:
    stack = Stack.at(data_dir, free_port_block(4), persist_cosmos=False)
    stack.start()
    return stack


class HostProcess:
    """`python -m devhost` in a subprocess: the same host `make run` starts."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        app_dir: Path = ROOT,
        port: int | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        """`extra_args` are appended to `python -m devhost ...` (e.g. `--keys-file`, as `make run` passes it)."""
        self.port = port or free_port()
        self.env = env
        self.app_dir = app_dir
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115  # the child writes to it until stop() closes it
        full_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(
                ("FIREBREAK_", "DEVHOST_", "COSMOS_", "AZURE_OPENAI", "OPENAI_", "NEUBIRD_", *LLM_PROVIDER_ENV)
            )
        }
        full_env.update(env)
        full_env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "devhost",
                "--port",
                str(self.port),
                "--app-dir",
                str(app_dir),
                "--no-local-settings",
                *(extra_args or []),
            ],
            cwd=ROOT,
            env=full_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def wait_listening(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"host exited with {self.proc.returncode}:\n{self.log()}")
            try:
                httpx.get(f"{self.base_url}/", timeout=5.0)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"host did not listen within {timeout}s:\n{self.log()}")

    def wait_ready(self, timeout: float = 60.0) -> None:
        self.wait_listening(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if httpx.get(f"{self.base_url}/api/health", timeout=10.0).status_code == 200:
                return
            time.sleep(0.2)
        raise RuntimeError(f"host not ready within {timeout}s:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def signal_stop(self) -> None:
        """Ask the host to stop without waiting (stopping many hosts: signal all, then `stop` each)."""
        if self.proc.poll() is None:
            self.proc.terminate()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.signal_stop()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
