"""Function-level authorization as the Functions host applies it: function, host and master keys."""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field


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
