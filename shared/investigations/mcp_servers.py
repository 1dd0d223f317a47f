"""The MCP servers an investigation asks: their configuration, one tool catalogue over all of them, and tool calls.

Every connection is opened for one operation and closed after it (a Durable activity may run on any worker), with
the mcp v2 `Client`: Streamable HTTP for `url` servers, a child process over stdio for `command` servers (local
use only: off unless `allow_stdio`). HTTP connections go through the outbound guard on every request and connect
to the address the guard checked, so a DNS answer cannot change between the check and the connection. Header and
environment values are secrets: they are kept as `SecretStr`, scrubbed from every error this module writes, and
never returned; `McpServerConfig.public()` is the view to record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeVar, cast
from urllib.parse import urlsplit

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from shared.core.errors import AppError
from shared.core.guarded_http import GuardedTransport, ResponseTooLarge
from shared.core.hosting import ON_AZURE
from shared.core.outbound import OutboundGuard, Target
from shared.core.redaction import REDACTED, redact_text
from shared.core.settings import SettingsError

log = logging.getLogger("firebreak.investigations.mcp")
_T = TypeVar("_T")

_ENV = "FIREBREAK_INVESTIGATIONS_MCP_"
SERVERS_SETTING = _ENV + "SERVERS"
ALLOW_STDIO_SETTING = _ENV + "ALLOW_STDIO"

# Headers the Streamable HTTP transport sets itself; a configured value would break the protocol.
_TRANSPORT_HEADERS = frozenset(
    {"host", "content-type", "content-length", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"}
)
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Shorter secrets are not scrubbed by value (replacing "1" everywhere would garble every message); the
# pattern-based redaction still applies to them.
_MIN_SCRUBBED_SECRET = 4
_MAX_TOOL_PAGES = 20
_MAX_TOOLS_PER_SERVER = 500
# What one listed tool may bring into the catalogue (stored once, read by every plan and call).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-/:]{1,128}")
_MAX_DESCRIPTION = 2_000
_MAX_TOOLS_TOTAL = 300
_MAX_SCHEMA_CHARS = 16_384
_ERROR_CHARS = 300


class McpServerConfig(BaseModel):
    """One MCP server: `url` (Streamable HTTP, optional `headers`) or `command` + `args` + `env` (stdio)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$",
        description="Short unique name; prefixes its tool names when two servers offer the same tool.",
    )
    url: str | None = Field(None, description="Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp.")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Sent with every HTTP request (e.g. Authorization); values are secrets."
    )
    command: str | None = Field(None, description="Executable of a stdio server (local use only), e.g. npx.")
    args: list[str] = Field(default_factory=list, description="Arguments of `command`.")
    env: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Environment of the child process, over a minimal inherited one (HOME, PATH, ...); secrets.",
    )

    @field_validator("headers")
    @classmethod
    def _header_names(cls, headers: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name, value in headers.items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"header name {name!r} is not a valid HTTP header name")
            if name.lower() in _TRANSPORT_HEADERS:
                raise ValueError(f"header {name!r} is set by the MCP transport and cannot be configured")
            if any(c in value.get_secret_value() for c in "\r\n\0"):
                raise ValueError(f"header {name!r}: the value contains a line break or NUL")
        return headers

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name, value in env.items():
            if not _ENV_NAME.match(name):
                raise ValueError(f"environment variable name {name!r} is not valid")
            if "\0" in value.get_secret_value():
                raise ValueError(f"environment variable {name!r}: the value contains NUL")
        return env

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.url is None) == (self.command is None):
            raise ValueError("give exactly one of 'url' (Streamable HTTP) or 'command' (stdio)")
        if self.url is not None and (self.args or self.env):
            raise ValueError("'args' and 'env' belong to a stdio server ('command'), not to a 'url' server")
        if self.command is not None and self.headers:
            raise ValueError("'headers' belong to a 'url' server, not to a stdio server ('command')")
        if self.command is not None and not self.command.strip():
            raise ValueError("'command' is empty")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("'url' must be an http(s) URL with a host, e.g. https://mcp.example.com/mcp")
        return self

    @property
    def transport(self) -> Literal["http", "stdio"]:
        return "http" if self.url is not None else "stdio"

    def secret_values(self) -> list[str]:
        """Header and environment values, longest first (scrubbed from every error text)."""
        values = [v.get_secret_value() for v in (*self.headers.values(), *self.env.values())]
        return sorted({v for v in values if len(v) >= _MIN_SCRUBBED_SECRET}, key=len, reverse=True)

    def public(self) -> dict[str, Any]:
        """What may be recorded or shown: names and the endpoint, never a header or environment value."""
        view: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.url is not None:
            view["url"] = self.scrub(self.url)
            view["header_names"] = sorted(self.headers)
        else:
            view["command"] = self.command
            view["args"] = [self.scrub(a) for a in self.args]
            view["env_names"] = sorted(self.env)
        return view

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        # repr() reaches logs and tracebacks: show what public() shows.
        return list(self.public().items())

    def scrub(self, text: str) -> str:
        """`text` with this server's secret values and anything secret-looking replaced by [REDACTED]."""
        for value in self.secret_values():
            text = text.replace(value, REDACTED)
        return redact_text(text)


def parse_servers(
    value: str | Sequence[Any] | None, *, allow_stdio: bool, setting: str = SERVERS_SETTING
) -> list[McpServerConfig]:
    """The server list of a setting: a JSON list of objects (or the list itself); empty or unset is no server.

    Raises SettingsError naming the setting, the entry and the field; a value that was given is never echoed
    (it may hold a header or token).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    raw: Any = value
    if isinstance(value, str):
        try:
            raw = json.loads(value)
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"{setting}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); expected a list "
                'like [{"name": "k8s", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "..."}}]'
            ) from None
    if not isinstance(raw, list):
        raise SettingsError(f"{setting}: expected a JSON list of server objects, got {type(raw).__name__}")
    servers: list[McpServerConfig] = []
    for index, entry in enumerate(raw):
        label = f"{setting}[{index}]"
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            label += f" ({entry['name'][:40]!r})"
        try:
            server = McpServerConfig.model_validate(entry)
        except ValidationError as exc:
            # loc and msg only: pydantic's `input` would echo header values.
            problems = "; ".join(
                (".".join(str(p) for p in e["loc"]) + ": " if e["loc"] else "") + e["msg"] for e in exc.errors()
            )
            raise SettingsError(f"{label}: {problems}") from None
        if server.transport == "stdio" and not allow_stdio:
            raise SettingsError(
                f"{label}: stdio servers ('command') run a process on this machine and are for local use only; "
                f"set {ALLOW_STDIO_SETTING}=true locally, or give the server's Streamable HTTP 'url'"
            )
        if any(s.name == server.name for s in servers):
            raise SettingsError(f"{label}: the name {server.name!r} is used twice; server names must be unique")
        servers.append(server)
    return servers


class McpClientSettings(BaseModel):
    """The MCP client's knobs, read from FIREBREAK_INVESTIGATIONS_MCP_<FIELD> (SERVERS is the JSON list)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers: list[McpServerConfig] = Field(default_factory=list, description="The servers to list and call.")
    allow_stdio: bool = Field(False, description="Allow `command` servers (a local process); refused on Azure.")
    list_timeout_seconds: float = Field(15.0, gt=0, le=300, description="Per server, connect and list.")
    call_timeout_seconds: float = Field(30.0, gt=0, le=600, description="Per tool call, connect included.")
    max_output_bytes: int = Field(32 * 1024, ge=256, description="Tool output kept per call (UTF-8 bytes).")
    max_response_bytes: int = Field(
        4 * 1024 * 1024, ge=64 * 1024, description="Largest HTTP response body read from a server."
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, running_on_azure: bool) -> McpClientSettings:
        """Read the settings; SettingsError names the variable (stdio on Azure is refused, as dev mode is)."""
        allow = env.get(ALLOW_STDIO_SETTING, "").strip().lower()
        if allow not in ("", "true", "false", "1", "0", "yes", "no"):
            raise SettingsError(f"{ALLOW_STDIO_SETTING}: expected true or false")
        allow_stdio = allow in ("true", "1", "yes")
        if allow_stdio and running_on_azure:
            raise SettingsError(
                f"{ALLOW_STDIO_SETTING}=true is refused {ON_AZURE}: it would run "
                "processes inside the Functions host. Give the MCP servers' Streamable HTTP urls instead."
            )
        values: dict[str, Any] = {
            "servers": parse_servers(env.get(SERVERS_SETTING), allow_stdio=allow_stdio),
            "allow_stdio": allow_stdio,
        }
        for name in ("list_timeout_seconds", "call_timeout_seconds", "max_output_bytes", "max_response_bytes"):
            if (raw := env.get(_ENV + name.upper())) not in (None, ""):
                values[name] = raw
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(f"{_ENV}{str(e['loc'][0]).upper()}: {e['msg']}" for e in exc.errors())
            raise SettingsError(f"Invalid setting(s): {problems}") from None


class CatalogueTool(BaseModel):
    """One tool as the planner sees it, and where it lives."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="The name to plan and call with (server-prefixed when two servers offer it).")
    server: str = Field(description="The configured server that offers it.")
    remote_name: str = Field(description="The tool's own name on that server.")
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    read_only: bool | None = Field(None, description="The server's readOnlyHint, when it gave one.")
    destructive: bool | None = Field(None, description="The server's destructiveHint, when it gave one.")


class ServerStatus(BaseModel):
    """How listing one server went; `error` is safe to record and show (no secrets, no resolved addresses)."""

    model_config = ConfigDict(frozen=True)

    name: str
    transport: Literal["http", "stdio"]
    ok: bool
    tool_count: int = 0
    error: str | None = None
    duration_ms: float = 0.0


class ToolCatalogue(BaseModel):
    """Every tool of every server that answered, plus how each server went. Plain data: no secrets."""

    model_config = ConfigDict(frozen=True)

    tools: list[CatalogueTool] = Field(default_factory=list)
    servers: list[ServerStatus] = Field(default_factory=list)

    def get(self, name: str) -> CatalogueTool | None:
        """The tool planned as `name`, or None."""
        return next((t for t in self.tools if t.name == name), None)

    @property
    def failed(self) -> list[ServerStatus]:
        return [s for s in self.servers if not s.ok]


ErrorKind = Literal["tool", "unknown_tool", "timeout", "unreachable", "refused", "protocol"]


class ToolResult(BaseModel):
    """The outcome of one tool call: the text the tool returned (or why there is none)."""

    model_config = ConfigDict(frozen=True)

    tool: str = Field(description="The catalogue name that was called.")
    server: str | None = None
    text: str = Field("", description="Text content joined with newlines, cut to max_output_bytes (UTF-8).")
    is_error: bool = False
    error_kind: ErrorKind | None = Field(
        None,
        description="None on success; 'tool' when the tool answered isError; otherwise why no answer came.",
    )
    truncated: bool = False
    output_bytes: int = Field(0, description="UTF-8 size of the whole text before truncation.")
    duration_ms: float = 0.0

    @property
    def retryable(self) -> bool:
        """The server was not reached or did not answer in time: trying again later may help."""
        return self.error_kind in ("timeout", "unreachable")


# --- connections ---------------------------------------------------------------------------------------------


@dataclass
class _Trace:
    """What an operation leaves behind for its error message: the last HTTP error status, a stdio server's stderr."""

    http_status: int | None = None
    http_reason: str = ""
    stderr: TextIO | None = None
    # Checked address -> host name: connection errors name the address, which would reveal internal DNS answers.
    addresses: dict[str, str] = field(default_factory=dict)


class _Failed(Exception):
    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def _transport(guard: OutboundGuard, url_field: str, max_response_bytes: int, trace: _Trace) -> GuardedTransport:
    """The guarded transport, feeding `trace`: checked addresses, and the latest answer's error status.

    The SDK turns most error statuses into a generic JSON-RPC error; the status is what an operator needs. Only
    the latest answer counts: a legacy server refuses the version probe before the handshake works.
    """

    def on_target(target: Target) -> None:
        trace.addresses[target.address] = target.host

    def on_response(response: httpx2.Response) -> None:
        failed = response.status_code >= 400
        trace.http_status = response.status_code if failed else None
        trace.http_reason = response.reason_phrase if failed else ""

    return GuardedTransport(
        guard, url_field, max_response_bytes=max_response_bytes, on_target=on_target, on_response=on_response
    )


@contextmanager
def _stderr_file(server: McpServerConfig) -> Iterator[TextIO | None]:
    """Where a stdio server's stderr goes: kept for the error message, never logged whole (None for HTTP)."""
    if server.transport != "stdio":
        yield None
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as handle:
        yield cast(TextIO, handle)


def _stderr_tail(handle: TextIO | None, chars: int = 400) -> str:
    if handle is None:
        return ""
    try:
        handle.flush()
        handle.seek(0)
        text = handle.read()
    except (OSError, ValueError):
        return ""
    return " ".join(text[-chars:].split())


@asynccontextmanager
async def _connect(
    server: McpServerConfig, guard: OutboundGuard, timeout_s: float, max_response_bytes: int, trace: _Trace
) -> AsyncIterator[Client]:
    """One `Client` to one server for one operation; the caller bounds it with a timeout."""
    async with AsyncExitStack() as stack:
        if server.url is not None:
            url_field = f"{server.name}.url"
            # Checked once up front for a clear refusal; the transport checks every request again.
            await guard.resolve(server.url, url_field)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={k: v.get_secret_value() for k, v in server.headers.items()},
                    timeout=httpx2.Timeout(timeout_s),
                    transport=_transport(guard, url_field, max_response_bytes, trace),
                    trust_env=False,  # no proxy from the environment: the checked address is the one connected to
                )
            )
            transport: Any = streamable_http_client(server.url, http_client=http)
        else:
            assert server.command is not None
            assert trace.stderr is not None
            params = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env={k: v.get_secret_value() for k, v in server.env.items()},
            )
            transport = stdio_client(params, errlog=trace.stderr)
        yield await stack.enter_async_context(Client(transport, read_timeout_seconds=timeout_s, cache=None))


async def _run(
    server: McpServerConfig,
    guard: OutboundGuard,
    timeout_s: float,
    max_response_bytes: int,
    operation: Callable[[Client], Awaitable[_T]],
) -> _T:
    """Connect, run `operation`, disconnect, all within `timeout_s`; any failure is a `_Failed` with a safe text."""
    trace = _Trace()
    with _stderr_file(server) as trace.stderr:
        try:
            async with asyncio.timeout(timeout_s), _connect(server, guard, timeout_s, max_response_bytes, trace) as c:
                return await operation(c)
        except Exception as exc:
            kind, message = _classify(exc, timeout_s, trace)
            raise _Failed(kind, server.scrub(message)[:_ERROR_CHARS]) from None


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _classify(exc: BaseException, timeout_s: float, trace: _Trace) -> tuple[ErrorKind, str]:
    """(kind, message) for a failed operation; the message may still hold secrets (`scrub` it)."""
    exc = _leaf(exc)
    if isinstance(exc, TimeoutError | httpx2.TimeoutException):
        return "timeout", f"no answer within {timeout_s:g} s"
    if isinstance(exc, AppError):  # the outbound guard's refusal: already worded for the caller
        return "refused", exc.message
    kind: ErrorKind = "protocol"
    if isinstance(exc, MCPError):
        message = f"MCP error {exc.code}: {exc.message}"
        if exc.code == types.CONNECTION_CLOSED:
            kind = "unreachable"
        elif exc.code == types.INVALID_PARAMS:
            kind = "tool"  # the server refused the arguments or does not know the tool: the planner can fix that
    elif isinstance(exc, ResponseTooLarge):
        message = str(exc)
    elif isinstance(exc, httpx2.TransportError | OSError | EOFError):
        kind, message = "unreachable", f"could not reach the server ({type(exc).__name__}: {exc})"
    else:
        message = f"{type(exc).__name__}: {exc}"
    if trace.http_status is not None:
        status = trace.http_status
        kind = "refused" if status in (401, 403) else "unreachable" if status == 429 or status >= 500 else kind
        message = f"the server answered HTTP {status} {trace.http_reason} ({message})"
    if (tail := _stderr_tail(trace.stderr)) and kind != "timeout":
        message += f"; the server's stderr ends: {tail}"
    for address, host in trace.addresses.items():
        message = message.replace(address, host)
    return kind, message


def _elapsed_ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


# --- listing -------------------------------------------------------------------------------------------------


async def _list_server(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(tools) >= _MAX_TOOLS_PER_SERVER:
            break
    return tools[:_MAX_TOOLS_PER_SERVER]


async def _list_one(
    server: McpServerConfig, guard: OutboundGuard, allow_stdio: bool, timeout_s: float, max_response_bytes: int
) -> tuple[ServerStatus, list[types.Tool]]:
    start = time.perf_counter()
    if server.transport == "stdio" and not allow_stdio:
        error = f"stdio servers are off here ({ALLOW_STDIO_SETTING}); give the server's Streamable HTTP url"
        return ServerStatus(name=server.name, transport="stdio", ok=False, error=error), []
    try:
        tools = await _run(server, guard, timeout_s, max_response_bytes, _list_server)
    except _Failed as failed:
        log.warning("MCP server %s could not be listed: %s", server.name, failed.message)
        status = ServerStatus(
            name=server.name,
            transport=server.transport,
            ok=False,
            error=failed.message,
            duration_ms=_elapsed_ms(start),
        )
        return status, []
    status = ServerStatus(
        name=server.name, transport=server.transport, ok=True, tool_count=len(tools), duration_ms=_elapsed_ms(start)
    )
    return status, tools


def build_catalogue(listed: Sequence[tuple[ServerStatus, Sequence[types.Tool]]]) -> ToolCatalogue:
    """Name every listed tool: its own name when one server offers it, `<server>__<name>` when several do.

    Deterministic: servers in configured order, tools in the order each server listed them; a tool name a server
    lists twice keeps its first entry, with the least read-only of its entries' hints (`_hints`).
    """
    offered: dict[str, int] = {}
    for _, tools in listed:
        for name in {t.name for t in tools}:
            offered[name] = offered.get(name, 0) + 1
    taken: set[str] = set()
    catalogue: list[CatalogueTool] = []
    for status, tools in listed:
        seen: set[str] = set()
        entries: dict[str, list[types.Tool]] = {}
        for tool in tools:
            entries.setdefault(tool.name, []).append(tool)
        for tool in tools:
            if tool.name in seen:
                continue
            seen.add(tool.name)
            if len(catalogue) >= _MAX_TOOLS_TOTAL:
                break  # the planner cannot use more; the catalogue stays a few MB at most
            if not _TOOL_NAME.fullmatch(tool.name):
                continue  # a name no planner could use safely (too long, control characters): not offered
            name = tool.name if offered[tool.name] == 1 else f"{status.name}__{tool.name}"
            base, n = name, 2
            while name in taken:  # a prefixed name that another server happens to use as is
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            read_only, destructive = _hints(entries[tool.name])
            hints = tool.annotations
            catalogue.append(
                CatalogueTool(
                    name=name,
                    server=status.name,
                    remote_name=tool.name,
                    title=((tool.title or (hints.title if hints else None)) or "")[:200] or None,
                    description=(tool.description or "")[:_MAX_DESCRIPTION],
                    input_schema=_bounded_schema(tool.input_schema),
                    read_only=read_only,
                    destructive=destructive,
                )
            )
    return ToolCatalogue(tools=catalogue, servers=[status for status, _ in listed])


def _hints(entries: Sequence[types.Tool]) -> tuple[bool | None, bool | None]:
    """(readOnlyHint, destructiveHint) of a tool a server may list more than once: read-only only if every entry
    says so, destructive if any does. A call goes to whichever entry the server picks, so a name listed once
    read-only and once not has not been said to only look (tool_policy withholds it)."""
    read_only = [e.annotations.read_only_hint if e.annotations else None for e in entries]
    destructive = [e.annotations.destructive_hint if e.annotations else None for e in entries]
    kept_read_only = read_only[0] if all(r == read_only[0] for r in read_only) else False
    kept_destructive = True if True in destructive else destructive[0]
    return kept_read_only, kept_destructive


def _bounded_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's inputSchema, or a bare object schema when it is larger than any planner prompt could show."""
    if not schema:
        return {"type": "object"}
    if len(json.dumps(schema, default=str)) > _MAX_SCHEMA_CHARS:
        return {"type": "object", "description": f"(schema over {_MAX_SCHEMA_CHARS} characters, not kept)"}
    return dict(schema)


async def list_tools(
    servers: Sequence[McpServerConfig],
    *,
    guard: OutboundGuard,
    allow_stdio: bool = False,
    timeout_s: float = 15.0,
    max_response_bytes: int = 4 * 1024 * 1024,
) -> ToolCatalogue:
    """List the tools of every server in parallel, each within `timeout_s`; never raises for a server.

    A server that fails (refused by the outbound guard, unreachable, slow, not speaking MCP, stdio while stdio
    is off) is recorded in `servers` with a safe error and the others' tools are used.
    """
    listed = await asyncio.gather(*(_list_one(s, guard, allow_stdio, timeout_s, max_response_bytes) for s in servers))
    return build_catalogue(listed)


# --- calling -------------------------------------------------------------------------------------------------


def _content_text(result: types.CallToolResult) -> str:
    """Text blocks (and text resources) joined with newlines; other blocks are named, not inlined."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            parts.append(block.resource.text)
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
        else:
            parts.append(f"[{block.type} content, {getattr(block, 'mime_type', None) or 'no type'}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True))
    return "\n".join(parts)


def truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool, int]:
    """(text cut to at most `max_bytes` UTF-8 bytes on a character boundary, whether it was cut, full size)."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False, len(raw)
    return raw[:max_bytes].decode("utf-8", errors="ignore"), True, len(raw)


async def _no_result_validation(name: str, result: types.CallToolResult) -> None:
    return None


async def _call_unvalidated(client: Client, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """`client.call_tool` without the SDK's check of structured content against the tool's outputSchema.

    That check lists the tools again and runs the server's own schema (any `pattern` it wrote, through
    jsonschema, on the event loop) over the server's own output: a hostile server could stall the worker
    with a catastrophic regex, and a lying server would pass its own check anyway. We read the text only.
    """
    client.session.validate_tool_result = _no_result_validation  # type: ignore[method-assign]
    return await client.call_tool(name, args)


async def call_tool(
    servers: Sequence[McpServerConfig],
    catalogue: ToolCatalogue,
    name: str,
    args: dict[str, Any],
    *,
    guard: OutboundGuard,
    allow_stdio: bool = False,
    timeout_s: float = 30.0,
    max_output_bytes: int = 32 * 1024,
    max_response_bytes: int = 4 * 1024 * 1024,
) -> ToolResult:
    """Call the catalogue's tool `name` with `args` on its server, within `timeout_s`; never raises for the server.

    `servers` supplies the connection (headers and environment stay out of the catalogue, which may be stored).
    The result's text is cut to `max_output_bytes`; a tool that answers isError is `error_kind='tool'` and its
    text is the server's message; a name not in the catalogue, a server no longer configured, a refused URL, a
    timeout or a broken connection are errors with a safe text and nothing is raised.
    """
    start = time.perf_counter()
    entry = catalogue.get(name)
    server = next((s for s in servers if entry is not None and s.name == entry.server), None)
    if entry is None or server is None:
        why = "is not in the tool catalogue" if entry is None else f"belongs to server {entry.server!r}, not configured"
        return ToolResult(tool=name, text=f"tool {name!r} {why}", is_error=True, error_kind="unknown_tool")
    if server.transport == "stdio" and not allow_stdio:
        text = f"stdio servers are off here ({ALLOW_STDIO_SETTING})"
        return ToolResult(tool=name, server=server.name, text=text, is_error=True, error_kind="refused")
    try:
        result = await _run(
            server, guard, timeout_s, max_response_bytes, lambda c: _call_unvalidated(c, entry.remote_name, args)
        )
    except _Failed as failed:
        log.warning("MCP tool %s on %s failed: %s", entry.remote_name, server.name, failed.message)
        return ToolResult(
            tool=name,
            server=server.name,
            text=failed.message,
            is_error=True,
            error_kind=failed.kind,
            duration_ms=_elapsed_ms(start),
        )
    text, truncated, size = truncate_utf8(_content_text(result), max_output_bytes)
    return ToolResult(
        tool=name,
        server=server.name,
        text=text,
        is_error=bool(result.is_error),
        error_kind="tool" if result.is_error else None,
        truncated=truncated,
        output_bytes=size,
        duration_ms=_elapsed_ms(start),
    )
