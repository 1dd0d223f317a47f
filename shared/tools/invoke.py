"""The one call path for tools: validate, run, map errors, log. MCP and per-tool HTTP both come here."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from shared.core import telemetry
from shared.core.errors import AppError, ValidationFailed, envelope, internal_error, validation_failed_from_pydantic
from shared.core.logging import is_safe_correlation_id
from shared.identity.models import Principal
from shared.storage.outage import store_outage
from shared.tools.deps import Deps
from shared.tools.progress import ProgressFn, SteadyProgress
from shared.tools.registry import Tool

__all__ = ["LogFn", "Orchestrations", "ProgressFn", "ToolContext", "ToolOutcome", "invoke", "pop_correlation_id"]

log = logging.getLogger("firebreak.tools")

# (level, message): level is an MCP/RFC 5424 level ("debug", "info", "notice", "warning", "error", ...).
LogFn = Callable[[str, str], Awaitable[None]]


class Orchestrations(Protocol):
    """Runs Durable orchestrations for their owner: shared/runs/service.py `RunService` over the app's Durable client.

    `start` records the run (owner, plan, secrets sealed) before the instance starts and answers
    `RunStarted(run_id, status_url="/api/runs/<id>")`; nothing of Durable's (management URLs, keys)
    ever comes back through it.
    """

    async def start(
        self,
        name: str,
        principal: Principal,
        plan: dict[str, Any],
        secrets: dict[str, Any] | None = None,
        *,
        correlation_id: str | None = None,
    ) -> Any: ...

    async def status(self, principal: Principal, run_id: str, *, scope: Any = "user") -> Any:
        """The run's status for its starter (scope "user") or anyone in its workspace (scope "workspace")."""
        ...

    async def cancel(
        self, principal: Principal, run_id: str, reason: str | None = None, *, scope: Any = "user"
    ) -> Any: ...


@dataclass
class ToolContext:
    """What a tool handler receives besides its arguments."""

    principal: Principal
    deps: Deps
    correlation_id: str
    transport: str = "http"
    progress: ProgressFn | None = None
    # Runs Durable orchestrations for tools whose work outlives a request (None outside the Functions app).
    orchestrations: Orchestrations | None = None
    # Sends a log message to the caller (an MCP log notification, when its level is wanted); None: dropped.
    logger: LogFn | None = None

    async def log(self, level: str, message: str) -> None:
        """Tell the caller what long work is doing (MCP `notifications/message`; nothing over plain HTTP).

        Levels are MCP's: "debug", "info", "notice", "warning", "error". Never put secrets in `message`."""
        if self.logger is not None:
            await self.logger(level, message)

    _steady: SteadyProgress | None = field(default=None, init=False, repr=False)

    def _steady_progress(self) -> SteadyProgress:
        if self._steady is None:
            self._steady = SteadyProgress(self.progress)
        return self._steady

    async def report_progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the caller how far long work has got (an MCP progress notification when it asked for one).

        Values reach the caller strictly increasing (shared/tools/progress.py)."""
        await self._steady_progress().report(done, total, message)

    def waiting(self, message: str) -> AbstractAsyncContextManager[None]:
        """`async with ctx.waiting("waiting for NeuBird"):` reports progress at least once a second inside."""
        return self._steady_progress().waiting(message)


@dataclass
class ToolOutcome:
    """A finished call: the output (JSON-ready) or the error, never both."""

    tool: Tool
    output: dict[str, Any] | None
    error: AppError | None
    text: str
    correlation_id: str

    @property
    def ok(self) -> bool:
        return self.error is None

    def error_envelope(self) -> dict[str, Any]:
        assert self.error is not None
        return envelope(self.error, self.correlation_id)


async def invoke(tool: Tool, arguments: Any, ctx: ToolContext) -> ToolOutcome:
    """Run `tool` with raw `arguments` for `ctx.principal`; never raises for a tool's own failure.

    In a span with the tool's name, the transport and the correlation id; never the arguments (they can carry
    a caller's secrets), and a failure's code, never its message."""
    attributes = {
        "firebreak.tool.name": tool.name,
        "firebreak.tool.transport": ctx.transport,
        telemetry.CORRELATION_ID: ctx.correlation_id,
    }
    with telemetry.span(f"tool {tool.name}", attributes) as span:
        outcome = await _invoke(tool, arguments, ctx)
        if outcome.error is not None:
            telemetry.failed(span, outcome.error.code)
        return outcome


async def _invoke(tool: Tool, arguments: Any, ctx: ToolContext) -> ToolOutcome:
    started = time.perf_counter()
    error: AppError | None = None
    output: BaseModel | None = None
    try:
        args = _validate(tool, arguments)
        output = await tool.handler(ctx, args)
        if not isinstance(output, tool.output_model):
            output = tool.output_model.model_validate(output)
    except AppError as exc:
        error = exc
    except Exception as exc:
        error = store_outage(exc)
        if error is None:
            log.exception("tool %s raised", tool.name, extra={"tool": tool.name, "correlation_id": ctx.correlation_id})
            error = internal_error()
    duration_ms = round((time.perf_counter() - started) * 1000, 2)
    log.info(
        "tool call %s %s",
        tool.name,
        "ok" if error is None else error.code,
        extra={
            "tool": tool.name,
            "transport": ctx.transport,
            "duration_ms": duration_ms,
            "outcome": "ok" if error is None else "error",
            "error_code": None if error is None else error.code,
            "workspace_id": ctx.principal.workspace_id,
            "correlation_id": ctx.correlation_id,
        },
    )
    if error is not None:
        return ToolOutcome(tool, None, error, f"{error.code}: {error.message}", ctx.correlation_id)
    assert output is not None
    return ToolOutcome(tool, output.model_dump(mode="json"), None, tool.text(output), ctx.correlation_id)


def _validate(tool: Tool, arguments: Any) -> BaseModel:
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValidationFailed.on_field(
            "(root)",
            "expected an object",
            f"Arguments of {tool.name} must be a JSON object, got {type(arguments).__name__}",
        )
    try:
        return tool.input_model.model_validate(arguments)
    except ValidationError as exc:
        raise validation_failed_from_pydantic(exc) from None


def pop_correlation_id(arguments: Any, tool: Tool) -> str | None:
    """Some specs pass `correlation_id` as an argument; honour it unless the tool declares it itself.

    Checked before the tool runs: the id goes into a response header and log lines, and a CR/LF or
    non-ASCII one would fail the response after the work was done.
    """
    if isinstance(arguments, dict) and "correlation_id" not in tool.input_model.model_fields:
        value = arguments.pop("correlation_id", None)
        if value is None:
            return None
        if not is_safe_correlation_id(value):
            raise ValidationFailed.on_field(
                "correlation_id",
                "use 1-128 ASCII letters, digits, '.', '_', ':' or '-'",
                "Invalid arguments: correlation_id",
                suggestions=["Pass a short ASCII id (a UUID works) as correlation_id, or leave it out."],
            )
        return value
    return None
