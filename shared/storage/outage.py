"""Recognise a store outage in whatever a request raised, so every edge answers it as a retryable 503.

Cosmos DB and Blob storage both speak through azure-core, which raises `ServiceRequestError` (no connection:
refused, DNS, TLS, connect timeout) and `ServiceResponseError` (the connection broke or no answer came in
time); the Cosmos SDK adds `CosmosClientTimeoutError`. A store that answers 503, 408 or 429 (throttled past
the SDK's own retries) is not usable now either. None of these is the caller's mistake or a bug, and the
same call can work a few seconds later. The HTTP edge (functions/http.py) and the one tool call path
(shared/tools/invoke.py: HTTP tools and MCP) both ask here, so every route and tool answers an outage alike.
"""

from __future__ import annotations

import math
import sys
from types import TracebackType

from shared.core.errors import ServiceUnavailable

# What a caller should wait before trying again when the store said nothing better.
RETRY_AFTER_SECONDS = 5
_MAX_RETRY_AFTER_SECONDS = 60
_BUSY_STATUSES = frozenset({408, 429, 503})
_STORES = (("azure.cosmos", "Cosmos DB"), ("azure.storage.blob", "Blob storage"))


def store_outage(exc: BaseException) -> ServiceUnavailable | None:
    """The 503 to answer when `exc` (or what it was raised from) is a store that is down or busy, else None."""
    if "azure.core" not in sys.modules:  # no store SDK is loaded in this process, so none raised `exc`
        return None
    # Indexing path (functions/http.py imports this module): the SDK is imported only once a store module has it.
    from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

    for cause in _chain(exc):
        status = getattr(cause, "status_code", None)
        if isinstance(cause, ServiceRequestError):  # refused, unresolvable, no TLS, connect timeout: never sent
            return _unavailable(cause, "cannot be reached", RETRY_AFTER_SECONDS, may_have_applied=False)
        if isinstance(cause, ServiceResponseError) or _is_cosmos_timeout(cause):
            return _unavailable(cause, "did not answer", RETRY_AFTER_SECONDS, may_have_applied=True)
        if isinstance(cause, HttpResponseError) and status in _BUSY_STATUSES:
            # 429 and 503 are refusals; a 408 may come after the store began the work.
            why, applied = f"is busy (HTTP {status})", status == 408
            return _unavailable(cause, why, _retry_after(cause), may_have_applied=applied)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, each once."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _is_cosmos_timeout(exc: BaseException) -> bool:
    if "azure.cosmos" not in sys.modules:
        return False
    # Indexing path, as above: never the first to import the Cosmos SDK.
    from azure.cosmos.exceptions import CosmosClientTimeoutError

    return isinstance(exc, CosmosClientTimeoutError)


def _unavailable(exc: BaseException, why: str, retry_after: int, *, may_have_applied: bool) -> ServiceUnavailable:
    """The answer; `may_have_applied` when the store may have done a write before the answer was lost, which a
    caller must know before it repeats a create."""
    store = _which_store(exc.__traceback__)
    outcome = (
        "a change this call asked for may or may not have been made: read it back before repeating a create"
        if may_have_applied
        else "nothing was changed"
    )
    return ServiceUnavailable(
        f"{store} {why}; {outcome}. Retry in {retry_after} seconds.",
        retry_after_seconds=retry_after,
        details={"store": store, "error_type": type(exc).__name__, "may_have_applied": may_have_applied},
    )


def _which_store(tb: TracebackType | None) -> str:
    """The store whose SDK the exception passed through (azure-core's own errors do not say)."""
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        for prefix, name in _STORES:
            if module.startswith(prefix):
                return name
        tb = tb.tb_next
    return "A store"


def _retry_after(exc: BaseException) -> int:
    """The store's own hint (Cosmos: x-ms-retry-after-ms; Blob: Retry-After seconds), capped; else the default."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "headers", None) or {}
    try:
        if "x-ms-retry-after-ms" in headers:
            seconds = float(headers["x-ms-retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            seconds = float(headers["retry-after"])
        else:
            return RETRY_AFTER_SECONDS
    except (TypeError, ValueError):
        return RETRY_AFTER_SECONDS
    if not math.isfinite(seconds):
        return RETRY_AFTER_SECONDS
    return min(max(math.ceil(seconds), 1), _MAX_RETRY_AFTER_SECONDS)
