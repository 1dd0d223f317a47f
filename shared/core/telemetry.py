"""The app's own spans, and Application Insights when it is configured.

Spans: each HTTP request at the edge (functions/http.py), each tool call (shared/tools/invoke.py), each Durable
activity (functions/orchestration.py), each outbound call through the guarded transport (MCP servers, NeuBird)
and each LLM completion. All carry only what is safe by construction: method, host, a URL's path (never its
query, user info or fragment), tool and activity names, status codes, error types, the correlation id. No header
value, no argument value, no exception message (they can quote a caller's secret) goes into a span.

Without `configure` (no connection string, tests, the local stack) the OpenTelemetry API hands out non-recording
spans: the helpers cost a function call. `configure` imports the Azure Monitor distro (about a second) only when
Application Insights is configured, on the first request, never while the worker indexes.

How a trace follows a request (learn.microsoft.com/azure/azure-functions/opentelemetry-howto; the worker's
azure_functions_runtime/otel.py): with PYTHON_ENABLE_OPENTELEMETRY=true the worker attaches the host's trace
context (the invocation's traceparent) before calling a function, so these spans are children of the host's
request span; the Durable client sends the current traceparent with `start_new` (azure-functions-durable's
DurableOrchestrationClient), and the Durable extension's distributed tracing carries it to the activities.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor

    from shared.core.telemetry_settings import TelemetrySettings

log = logging.getLogger("firebreak.telemetry")

TRACER = "firebreak"
CORRELATION_ID = "firebreak.correlation_id"

# Library instrumentations of the distro that record full URLs or headers of calls the app makes for callers
# (query strings can carry keys): off. The app's own spans cover those calls (guarded transport, LLM client).
# azure_sdk stays on: Cosmos DB, Blob and the identity endpoint, whose URLs carry no credential.
_OFF = ("django", "fastapi", "flask", "psycopg2", "requests", "urllib", "urllib3", "httpx")

_configured = False


def configure(settings: TelemetrySettings, span_processors: Sequence[SpanProcessor] = ()) -> bool:
    """Send spans to Application Insights when `settings` say so (once per process); True when configured.

    `span_processors` run before the exporter (tests add an in-memory exporter here).
    """
    global _configured
    if _configured or not settings.configured:
        return _configured
    try:
        _configure_azure_monitor(settings, span_processors)
    except Exception as exc:  # telemetry must never take the app down: the app serves without spans
        log.warning("telemetry: Application Insights not configured (%s)", type(exc).__name__)
        return False
    _configured = True
    log.info("telemetry: spans go to Application Insights")
    return True


def _configure_azure_monitor(settings: TelemetrySettings, span_processors: Sequence[SpanProcessor]) -> None:
    from azure.monitor.opentelemetry import configure_azure_monitor  # about a second: only when configured

    assert settings.connection_string is not None
    options: dict[str, Any] = {}
    aad, client_id = settings.ingestion_identity()
    if aad:
        from azure.identity import ManagedIdentityCredential

        options["credential"] = ManagedIdentityCredential(client_id=client_id)
    if settings.sampling_ratio is not None:
        options["sampling_ratio"] = settings.sampling_ratio
    configure_azure_monitor(
        connection_string=settings.connection_string.get_secret_value(),
        # The host reports request metrics itself. (This distro takes disable_* only from OTEL_*_EXPORTER=none:
        # _utils/configurations.py overwrites the keyword; kept for a distro that honours it.)
        disable_metrics=True,
        enable_live_metrics=False,
        enable_performance_counters=False,
        instrumentation_options={name: {"enabled": False} for name in _OFF},
        span_processors=list(span_processors),
        **options,
    )
    if not settings.worker_streams_telemetry:
        _stop_exporting_log_records()


def _stop_exporting_log_records() -> None:
    """Leave the app's log records to the host: the worker forwards each record to it and the host sends them on,
    so the distro's handler would send each twice. With the worker streaming its own telemetry
    (TelemetrySettings.worker_streams_telemetry) the host drops them and the handler stays: it is the only way out.
    Either way every record was redacted when it was made (shared/core/redaction.py's LogRecord factory).

    The distro installs its handler on the root logger whatever `disable_logging` says (azure-monitor-opentelemetry
    1.8: `_get_configurations` replaces that keyword with the OTEL_LOGS_EXPORTER default), so it is removed here.
    """
    from opentelemetry.instrumentation.logging.handler import LoggingHandler

    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, LoggingHandler)]:
        root.removeHandler(handler)


def safe_url(url: str) -> str:
    """scheme://host[:port]/path of `url`: no user info, query or fragment (where keys and tokens travel)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else parts.path


Attribute = str | int | float | bool | None


@contextmanager
def span(name: str, attributes: Mapping[str, Attribute], *, kind: SpanKind = SpanKind.INTERNAL) -> Iterator[Span]:
    """A span around a block: `attributes` (None ones left out), status ERROR and `error.type` when it raises.

    The exception itself is not recorded (its message can quote a secret): only its type's name.
    """
    tracer = trace.get_tracer(TRACER)
    values = {k: v for k, v in attributes.items() if v is not None}
    with tracer.start_as_current_span(
        name, kind=kind, attributes=values, record_exception=False, set_status_on_exception=False
    ) as current:
        try:
            yield current
        except Exception as exc:
            failed(current, type(exc).__name__)
            raise


def request_span(method: str, url: str, correlation_id: str) -> Any:
    """The span of one HTTP request at the app's edge: a child of the host's request span when the worker attached
    its trace context (PYTHON_ENABLE_OPENTELEMETRY), else the trace's root (a server span)."""
    path = urlsplit(url).path
    parent = trace.get_current_span().get_span_context().is_valid
    return span(
        f"{method} {path}",
        {"http.request.method": method, "url.path": path, CORRELATION_ID: correlation_id},
        kind=SpanKind.INTERNAL if parent else SpanKind.SERVER,
    )


def failed(current: Span, error_type: str) -> None:
    """Mark `current` failed with an error type (a class name or an error code), never a message."""
    current.set_attribute("error.type", error_type)
    current.set_status(Status(StatusCode.ERROR))
