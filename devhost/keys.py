"""Function-level authorization as the Functions host applies it: function, host and master keys."""

from __future__ import annotations

import hmac
import json
import os
import secrets
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

# What `make run` generates once per data directory (.local/keys.json) and the host enforces.
LOCAL_KEY_SETTINGS = ("DEVHOST_FUNCTION_KEY", "DEVHOST_SYSTEM_KEY")


@dataclass(frozen=True)
class HostKeys:
    """Keys the local host enforces. With none configured every route is open, as under `func start`."""

    master: str | None = None
    system: str | None = None
    host_keys: tuple[str, ...] = ()
    function_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def configured(self) -> bool:
        return bool(self.master or self.host_keys or any(self.function_keys.values()))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HostKeys:
        """`DEVHOST_MASTER_KEY`, `DEVHOST_FUNCTION_KEY` (valid for every function, like a host key) and
        `DEVHOST_FUNCTION_KEYS` (JSON: function name -> key or list of keys), `DEVHOST_SYSTEM_KEY` (the
        Durable management API's key; random per start when unset)."""
        env = os.environ if env is None else env
        per_function: dict[str, tuple[str, ...]] = {}
        raw = env.get("DEVHOST_FUNCTION_KEYS")
        if raw:
            for name, keys in json.loads(raw).items():
                per_function[name] = tuple([keys] if isinstance(keys, str) else keys)
        host = env.get("DEVHOST_FUNCTION_KEY")
        return cls(
            master=env.get("DEVHOST_MASTER_KEY") or None,
            system=env.get("DEVHOST_SYSTEM_KEY") or None,
            host_keys=(host,) if host else (),
            function_keys=per_function,
        )

    def allows(self, function_name: str, auth_level: str, presented: str | None) -> bool:
        level = auth_level.upper()
        if level == "ANONYMOUS" or not self.configured:
            return True
        if not presented:
            return False
        if self.master and _same(presented, self.master):
            return True
        if level == "ADMIN":
            return False
        candidates = self.host_keys + tuple(self.function_keys.get(function_name, ()))
        return any(_same(presented, k) for k in candidates)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def ensure_local_keys(path: Path) -> dict[str, str]:
    """The local run's keys, generated on first use and kept (mode 0600) so they survive restarts.

    Stable rather than new per run: an MCP client's mcp.json and scripts keep working across
    `make run`s. Delete the file (or `make clean`) to rotate them.
    """
    try:
        stored = json.loads(path.read_text())
    except FileNotFoundError:
        stored = {}
    missing = [name for name in LOCAL_KEY_SETTINGS if not stored.get(name)]
    if missing:
        stored.update({name: secrets.token_urlsafe(32) for name in missing})
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(stored, out, indent=2)
        os.replace(tmp, path)
    return {name: stored[name] for name in LOCAL_KEY_SETTINGS}


def apply_local_keys(path: Path, env: MutableMapping[str, str]) -> dict[str, str]:
    """Put the keys file's keys into `env` where no non-empty value is set (an explicit setting wins);
    return the keys now in force."""
    for name, value in ensure_local_keys(path).items():
        if not env.get(name):
            env[name] = value
    return {name: env[name] for name in LOCAL_KEY_SETTINGS}
