"""Assemble the offline host for an app directory: HTTP functions, and Durable when the app has orchestrations."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from devhost.http_server import HttpHost
from devhost.index import index_functions, load_app, read_host_json, resolve_setting_refs, route_prefix
from devhost.invoker import Invoker
from devhost.keys import HostKeys

_DURABLE_TRIGGERS = {"orchestrationTrigger", "activityTrigger"}


def task_hub(host_json: dict[str, Any], env: Mapping[str, str]) -> str:
    """The hub name from host.json (the extension's default when absent), `%SETTING%` references resolved;
    an unset setting raises UnresolvedSetting naming it, as the Functions host fails to start."""
    durable = resolve_setting_refs(
        host_json.get("extensions", {}).get("durableTask", {}), env, "extensions.durableTask"
    )
    return durable.get("hubName") or "TestHubName"


class DurableExtension:
    """The engine plus its HTTP API, started and stopped with the host's event loop."""

    def __init__(self, functions: list[Any], host_json: dict[str, Any], base_url: str, keys: HostKeys) -> None:
        from devhost.durable.engine import DurableEngine, parse_fail_activities
        from devhost.durable.http_api import DurableHttpApi
        from devhost.durable.instances import InstanceStore

        env = dict(os.environ)
        storage = env.get("AzureWebJobsStorage")
        if not storage:
            raise SystemExit("Durable functions need AzureWebJobsStorage (the local stack sets it to Azurite)")
        durable = host_json.get("extensions", {}).get("durableTask", {})
        hub = task_hub(host_json, env)
        max_activities = int(
            env.get("DEVHOST_DURABLE_MAX_ACTIVITIES", durable.get("maxConcurrentActivityFunctions", 10))
        )
        self.engine = DurableEngine(
            functions,
            InstanceStore(storage, hub),
            hub=hub,
            max_activities=max_activities,
            # Fault injection for tests: the first N attempts of an activity fail (see parse_fail_activities).
            fail_activities=parse_fail_activities(env.get("DEVHOST_FAIL_ACTIVITY")),
        )
        self.api = DurableHttpApi(self.engine, base_url, keys)

    def add_routes(self, app: Any) -> None:
        self.api.add_routes(app)

    async def start(self) -> None:
        await self.engine.start()

    async def stop(self) -> None:
        await self.engine.stop()


def build_host(app_dir: Path, base_url: str) -> HttpHost:
    app = load_app(app_dir)
    functions = index_functions(app)
    # Every %SETTING% in host.json is resolved up front: a missing one stops the start, as on Azure.
    host_json = resolve_setting_refs(read_host_json(app_dir), os.environ)
    keys = HostKeys.from_env()
    extensions: list[Any] = []
    providers = {}
    if any(f.trigger["type"] in _DURABLE_TRIGGERS for f in functions):
        durable = DurableExtension(functions, host_json, base_url, keys)
        extensions.append(durable)
        providers["durableClient"] = durable.api.binding_provider
    return HttpHost(functions, Invoker(providers, app_dir=str(app_dir)), keys, route_prefix(host_json), extensions)
