"""Call a user function with its bindings filled in, as the Python worker does (async on the loop, sync in a thread)."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from devhost.index import FunctionInfo

# An input binding provider builds the value of one non-trigger input binding (e.g. a durable client).
BindingProvider = Callable[[dict[str, Any], FunctionInfo], Awaitable[Any]]


class InvocationContext:
    """What a function receives as `context` (the subset of azure.functions.Context apps use)."""

    def __init__(self, function_name: str, directory: str) -> None:
        self.invocation_id = str(uuid.uuid4())
        self.function_name = function_name
        self.function_directory = directory
        self.trace_context = None
        self.retry_context = None
        self.thread_local_storage = None


class Invoker:
    def __init__(self, providers: Mapping[str, BindingProvider] | None = None, app_dir: str = ".") -> None:
        self._providers = dict(providers or {})
        self._app_dir = app_dir

    def check(self, info: FunctionInfo) -> None:
        """Refuse at startup, not at the first call, a function whose input bindings this host cannot fill."""
        for b in info.bindings:
            if b["direction"] == "IN" and b is not info.trigger and b["type"] not in self._providers:
                raise ValueError(
                    f"function {info.name}: binding type {b['type']!r} is not supported by the offline host"
                )

    async def invoke(self, info: FunctionInfo, trigger_value: Any) -> Any:
        fn = info.user_function
        kwargs: dict[str, Any] = {info.trigger["name"]: trigger_value}
        for b in info.bindings:
            if b["direction"] == "IN" and b is not info.trigger:
                kwargs[b["name"]] = await self._providers[b["type"]](b, info)
        if "context" in inspect.signature(fn).parameters:
            kwargs["context"] = InvocationContext(info.name, self._app_dir)
        if inspect.iscoroutinefunction(fn):
            return await fn(**kwargs)
        result = await asyncio.get_running_loop().run_in_executor(None, lambda: fn(**kwargs))
        return await result if inspect.isawaitable(result) else result
