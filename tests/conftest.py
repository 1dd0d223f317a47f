"""Session fixtures: one emulator stack per test run, one database and blob container per run, offline hosts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from devhost.processes import HostProcess, start_stack
from devhost.stack import Stack
from shared.app.wiring import build_deps, load_settings
from shared.core.settings import Settings
from shared.tools.deps import Deps

RUN_ID = uuid.uuid4().hex[:8]


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run against a stale manifest.json: indexing would leave a listed tool without its function."""
    from shared.app.capabilities import catalogue
    from shared.app.manifest import stale_reason

    reason = stale_reason(catalogue())
    if reason is not None:
        raise pytest.UsageError(f"{reason}: run `make manifest` (python -m shared.app.manifest) and review the diff")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Azurite and the Cosmos-API server, started for this session on free ports and stopped after it."""
    s = start_stack(tmp_path_factory.mktemp("stack"))
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="session")
def app_env(stack: Stack) -> dict[str, str]:
    """The settings of a local run, isolated to this session's database and blob container."""
    env = stack.app_settings()
    env["FIREBREAK_COSMOS_DATABASE"] = f"test-{RUN_ID}"
    env["FIREBREAK_BLOB_CONTAINER"] = f"test-{RUN_ID}"
    return env


@pytest.fixture(scope="session")
def settings(app_env: dict[str, str]) -> Settings:
    return load_settings(app_env)


@pytest.fixture(scope="session")
async def deps(settings: Settings) -> AsyncIterator[Deps]:
    d = build_deps(settings)
    yield d
    await d.aclose()


@pytest.fixture(scope="session")
def start_host(
    app_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., HostProcess]]:
    """Start an offline host with the local settings plus overrides; every host is stopped at the end."""
    hosts: list[HostProcess] = []

    def start(
        overrides: dict[str, str] | None = None,
        *,
        ready: bool = True,
        app_dir: Path | None = None,
        port: int | None = None,
    ) -> HostProcess:
        # Each host gets its own task hub unless told otherwise: hosts sharing one Azurite must not
        # resume each other's orchestrations on start-up.
        env = {**app_env, "FIREBREAK_TASK_HUB": f"hub{uuid.uuid4().hex[:10]}", **(overrides or {})}
        env = {k: v for k, v in env.items() if v is not None}
        kwargs: dict[str, Any] = {"app_dir": app_dir} if app_dir else {}
        host = HostProcess(env, Path(tmp_path_factory.mktemp("host")) / "host.log", port=port, **kwargs)
        hosts.append(host)
        if ready:
            host.wait_ready()
        else:
            host.wait_listening()
        return host

    yield start
    # Signal every host first: they shut down side by side (about 0.5 s each when stopped one by one).
    for h in hosts:
        h.signal_stop()
    for h in hosts:
        h.stop()


@pytest.fixture(scope="session")
def host(start_host: Callable[..., HostProcess]) -> HostProcess:
    """The local-run host: dev mode on, no function keys (as `make run`)."""
    return start_host()
