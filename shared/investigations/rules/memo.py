"""Readers remembered for one evaluation of the rules, then forgotten.

The walk, the evidence rules and the report read the same outputs many times in one call of `next_calls` or
`report` (every iteration re-reads the calls before it). `remembered` caches a pure reader by its arguments
(output text, kind, ...); `evaluation` marks the rules' entry points, and when the outermost one returns every
cache is cleared, so a worker that runs many investigations keeps none of their outputs alive.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_CACHES: list[Any] = []
# Evaluations run in worker threads (asyncio.to_thread), several at once: the caches are cleared when none runs.
# lru_cache is thread-safe; a clear while another evaluation runs only costs it a re-read.
_lock = threading.Lock()
_running = 0


def remembered(fn: Callable[P, R]) -> Callable[P, R]:
    """Cache a pure reader for the current evaluation (arguments must be hashable: texts, kinds, NamedTuples)."""
    cached = lru_cache(maxsize=128)(fn)
    _CACHES.append(cached)
    return cached  # type: ignore[return-value]


class _Store(dict[Any, Any]):
    """A dict emptied with the caches (for values that are not pure functions of hashable arguments)."""

    def cache_clear(self) -> None:
        self.clear()


_STORE = _Store()
_CACHES.append(_STORE)


def per_evaluation(key: Any, make: Callable[[], R]) -> R:
    """The value made for `key` in the current evaluation (made once); outside one, made afresh every time, so
    nothing is kept when no evaluation runs to clear it."""
    if _running == 0:
        return make()
    if key not in _STORE:
        _STORE[key] = make()
    return _STORE[key]  # type: ignore[no-any-return]


def evaluation(fn: Callable[P, R]) -> Callable[P, R]:
    """An entry point of the rules: caches live while it (or an enclosing one) runs."""

    @wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        global _running
        with _lock:
            _running += 1
        try:
            return fn(*args, **kwargs)
        finally:
            with _lock:
                _running -= 1
                if _running == 0:
                    for cache in _CACHES:
                        cache.cache_clear()

    return run
