"""Start and stop the local emulators (Azurite, the Cosmos-API server) and describe the settings that reach them.

`python -m devhost.stack start|stop|status|env [--data-dir DIR] [--port-base N]`. A stack whose processes
are alive is reused, so `make run` and `make test` can be run again and again.

A data directory remembers the ports its stack was started on (`stack.json`): stop, status, env and
write-settings talk to that stack's own ports without being told again, so stopping a stack on other ports saves
its own Cosmos data, never the data of whatever listens on the default ports.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PORTS_FILE = "stack.json"
BIN = ROOT / "node_modules" / ".bin"
# The well-known Azurite account: public, documented, and accepted only by the emulator.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# The Cosmos emulator's well-known key; the local Cosmos-API server accepts any key.
COSMOS_EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def _reap(pid: int) -> None:
    """Collect `pid` if it is an exited child of this process (a stack started in-process, as the tests and the
    scenario command do): a zombie still answers kill(pid, 0), so `stop` would wait 5 s per emulator for an exit
    that had already happened. Not a child (started by another `make run`): nothing to do."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


@dataclass(frozen=True)
class Stack:
    data_dir: Path
    blob_port: int = 10000
    queue_port: int = 10001
    table_port: int = 10002
    cosmos_port: int = 8081
    host: str = "127.0.0.1"
    persist_cosmos: bool = True  # export/import around restarts; test stacks are throw-away

    @classmethod
    def at(cls, data_dir: Path, port_base: int | None = None, *, persist_cosmos: bool = True) -> Stack:
        if port_base is None:
            return cls(data_dir=data_dir, persist_cosmos=persist_cosmos)
        return cls(data_dir, port_base, port_base + 1, port_base + 2, port_base + 3, persist_cosmos=persist_cosmos)

    @classmethod
    def of(cls, data_dir: Path, port_base: int | None = None) -> Stack:
        """The stack of a data directory: on the ports it remembers, unless `port_base` is given. A different
        port base for a stack that is running is refused (its processes hold the remembered ports)."""
        remembered = remembered_port_base(data_dir)
        if port_base is None or port_base == remembered:
            return cls.at(data_dir, remembered)
        running = cls.at(data_dir, remembered)
        if any(running.status().values()):
            raise SystemExit(
                f"the stack in {data_dir} runs on port base {remembered or 'default (10000/8081)'}; stop it first "
                f"(make stop DATA={data_dir}) or leave PORT_BASE out"
            )
        return cls.at(data_dir, port_base)

    def remember_ports(self) -> None:
        """Write the port base to the data directory (null for the default ports)."""
        base = None if self.blob_port == Stack.blob_port else self.blob_port
        (self.data_dir / _PORTS_FILE).write_text(json.dumps({"port_base": base}) + "\n")

    @property
    def cosmos_snapshot(self) -> Path:
        return self.data_dir / "cosmos-snapshot.json"

    @property
    def pid_dir(self) -> Path:
        return self.data_dir / "pids"

    def blob_connection_string(self) -> str:
        h = self.host
        return (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint=http://{h}:{self.blob_port}/{AZURITE_ACCOUNT};"
            f"QueueEndpoint=http://{h}:{self.queue_port}/{AZURITE_ACCOUNT};"
            f"TableEndpoint=http://{h}:{self.table_port}/{AZURITE_ACCOUNT};"
        )

    def app_settings(self) -> dict[str, str]:
        """The app settings that point Firebreak at this stack (what local.settings.json holds)."""
        return {
            "AzureWebJobsStorage": self.blob_connection_string(),
            "FUNCTIONS_WORKER_RUNTIME": "python",
            "FIREBREAK_ENVIRONMENT": "local",
            "FIREBREAK_DEV_MODE": "true",
            "FIREBREAK_CREATE_RESOURCES": "true",
            "COSMOS_ENDPOINT": f"https://{self.host}:{self.cosmos_port}",
            "COSMOS_KEY": COSMOS_EMULATOR_KEY,
            "FIREBREAK_COSMOS_VERIFY_TLS": "false",
            "FIREBREAK_COSMOS_LOCAL_COMPAT": "true",
            "FIREBREAK_TASK_HUB": "firebreaklocal",
            "FIREBREAK_PERF_ALLOW_LOCAL_PATHS": "true",  # the spec's {"path": ...} artifacts work on your own machine
            # Run secrets at rest (AES-GCM): random, kept in the data directory so restarts can still read
            # in-flight runs' secrets.
            "FIREBREAK_SECRETS_KEY": self._secrets_key(),
        }

    def _secrets_key(self) -> str:
        """32 random bytes (base64) generated once per data directory, file mode 0600."""
        path = self.data_dir / "secrets.key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
                out.write(base64.b64encode(os.urandom(32)).decode())
            os.replace(tmp, path)
        return path.read_text().strip()

    def _commands(self) -> dict[str, tuple[list[str], list[int]]]:
        azurite_dir = self.data_dir / "azurite"
        return {
            "azurite": (
                [
                    str(BIN / "azurite"),
                    "--silent",
                    "--skipApiVersionCheck",
                    "--disableTelemetry",
                    "--loose",
                    "--location",
                    str(azurite_dir),
                    "--blobHost",
                    self.host,
                    "--blobPort",
                    str(self.blob_port),
                    "--queueHost",
                    self.host,
                    "--queuePort",
                    str(self.queue_port),
                    "--tableHost",
                    self.host,
                    "--tablePort",
                    str(self.table_port),
                ],
                [self.blob_port, self.queue_port, self.table_port],
            ),
            # Our wrapper around the server (devhost/cosmos-server.js); `node` is the machine's Node 20.
            "cosmos": (
                [
                    "node",
                    str(ROOT / "devhost" / "cosmos-server.js"),
                    "--host",
                    self.host,
                    "--port",
                    str(self.cosmos_port),
                ],
                [self.cosmos_port],
            ),
        }

    def _pid(self, name: str) -> int | None:
        path = self.pid_dir / f"{name}.pid"
        try:
            pid = int(path.read_text())
            _reap(pid)
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    def _port_open(self, port: int) -> bool:
        with socket.socket() as s:
            s.settimeout(0.2)
            return s.connect_ex((self.host, port)) == 0

    def start(self, timeout: float = 60.0) -> None:
        """Start what is not running; wait until every port accepts connections."""
        if not (BIN / "azurite").exists():
            raise SystemExit("node_modules is missing: run `npm ci` first (make does this for you)")
        self.pid_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "azurite").mkdir(parents=True, exist_ok=True)
        self.remember_ports()
        fresh_cosmos = not self._pid("cosmos")
        for name, (cmd, ports) in self._commands().items():
            if self._pid(name):
                continue
            busy = [p for p in ports if self._port_open(p)]
            if busy:
                raise SystemExit(
                    f"cannot start {name}: port(s) {busy} already in use by another process "
                    "(another checkout's emulators? run `make stop` there, or start a second stack on other ports:"
                    " make run PORT=7072 DATA=.local2 PORT_BASE=20000)"
                )
            # The child keeps its own copy of the log's descriptor; ours closes once it is started.
            with open(self.data_dir / f"{name}.log", "ab") as log:
                # A new session: Ctrl-C in the terminal that runs the app must not take the emulators down with it.
                proc = subprocess.Popen(
                    cmd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    cwd=ROOT,
                )
            (self.pid_dir / f"{name}.pid").write_text(str(proc.pid))
        deadline = time.monotonic() + timeout
        for name, (_, ports) in self._commands().items():
            while not all(self._port_open(p) for p in ports):
                if not self._pid(name):
                    tail = (self.data_dir / f"{name}.log").read_text(errors="replace")[-2000:]
                    raise SystemExit(f"{name} exited during start-up:\n{tail}")
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name} did not open ports {ports} within {timeout:.0f}s")
                time.sleep(0.1)
        if fresh_cosmos and self.persist_cosmos:
            from devhost.cosmos_snapshot import restore

            restored = restore(f"https://{self.host}:{self.cosmos_port}", COSMOS_EMULATOR_KEY, self.cosmos_snapshot)
            if restored:
                print(f"restored {restored} Cosmos documents from {self.cosmos_snapshot}")

    def stop(self) -> bool:
        """Stop what runs (saving the Cosmos data first); False when nothing was running."""
        if not any(self.status().values()):
            return False
        if self.persist_cosmos and self._pid("cosmos"):
            from devhost.cosmos_snapshot import export

            try:
                saved = export(f"https://{self.host}:{self.cosmos_port}", COSMOS_EMULATOR_KEY, self.cosmos_snapshot)
                print(f"saved {saved} Cosmos documents to {self.cosmos_snapshot}")
            except Exception as exc:  # stopping must not depend on the snapshot
                print(
                    f"could not save the Cosmos snapshot ({type(exc).__name__}: {exc}); the previous snapshot is kept",
                    file=sys.stderr,
                )
        for name in self._commands():
            pid = self._pid(name)
            if pid:
                os.kill(pid, signal.SIGTERM)
                for _ in range(50):
                    if not self._pid(name):
                        break
                    time.sleep(0.1)
                else:
                    os.kill(pid, signal.SIGKILL)
            (self.pid_dir / f"{name}.pid").unlink(missing_ok=True)
        return True

    def status(self) -> dict[str, bool]:
        return {name: bool(self._pid(name)) for name in self._commands()}


def remembered_port_base(data_dir: Path) -> int | None:
    """The port base a data directory's stack was started on (None: the default ports, or never started)."""
    try:
        base = json.loads((data_dir / _PORTS_FILE).read_text()).get("port_base")
    except (OSError, ValueError, AttributeError):
        return None
    return base if isinstance(base, int) and 1024 <= base <= 65532 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devhost.stack", description=__doc__)
    parser.add_argument("action", choices=["start", "stop", "status", "env", "write-settings"])
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".local")
    parser.add_argument("--port-base", type=int, default=None, help="use N..N+3 instead of 10000-10002 and 8081")
    args = parser.parse_args(argv)
    stack = Stack.of(args.data_dir.resolve(), args.port_base)
    if args.action == "start":
        stack.start()
        print(
            f"emulators up: blob/queue/table on {stack.blob_port}-{stack.table_port}, cosmos on {stack.cosmos_port};"
            f" data in {stack.data_dir}"
        )
    elif args.action == "stop":
        if stack.stop():
            print(f"emulators stopped (data kept in {stack.data_dir})")
        else:
            print(f"nothing was running for {stack.data_dir}")
    elif args.action == "status":
        print(json.dumps(stack.status()))
    elif args.action == "env":
        for key, value in stack.app_settings().items():
            print(f"{key}={value}")
    elif args.action == "write-settings":
        path = ROOT / "local.settings.json"
        if path.exists():
            print(f"{path.name} exists; leaving it as it is")
        else:
            path.write_text(json.dumps({"IsEncrypted": False, "Values": stack.app_settings()}, indent=2) + "\n")
            print(f"wrote {path.name} for the local stack")
    return 0


if __name__ == "__main__":
    sys.exit(main())
