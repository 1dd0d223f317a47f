"""An OpenAI-compatible chat-completions server on 127.0.0.1 answering from a script, and recording every request.

Routes: `POST /v1/chat/completions` (OpenAI and compatible endpoints), `POST /v1beta/openai/chat/completions`
(Gemini's OpenAI-compatible base path) and
`POST /openai/deployments/<deployment>/chat/completions?api-version=...` (Azure OpenAI). Each request takes
the next scripted `Reply` from the queue; when the queue is empty, `responder(request)` answers when set (a
reply made from what was asked), else `default` (None: HTTP 500 with "nothing scripted", so a test that asks
more than it scripted fails loudly).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# The chat-completions paths of OpenAI-compatible base URLs: …/v1 and Gemini's …/v1beta/openai/.
COMPATIBLE_PATHS = frozenset({"/v1/chat/completions", "/v1beta/openai/chat/completions"})


@dataclass
class Reply:
    """One scripted answer: a chat message (content and/or tool_calls) or an HTTP error, maybe late."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    error_body: dict[str, Any] | None = None
    usage: tuple[int, int] | None = (100, 20)
    finish_reason: str = "stop"
    delay_seconds: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def plan(calls: list[dict[str, Any]], *, done: bool = False, analysis: str = "", **kw: Any) -> Reply:
    """A JSON plan answer: `calls` as [{"tool", "arguments", "reason"}]."""
    return Reply(content=json.dumps({"calls": calls, "analysis_so_far": analysis, "done": done}), **kw)


def text(content: str, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def tool_calls(*calls: tuple[str, dict[str, Any]], **kw: Any) -> Reply:
    """An answer in the tools API's shape: no content, `tool_calls` with JSON-string arguments."""
    return Reply(
        content=None,
        tool_calls=[
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)
        ],
        finish_reason="tool_calls",
        **kw,
    )


def http_error(status: int, message: str = "scripted failure", **kw: Any) -> Reply:
    # retry-after-ms keeps the SDK's retry of 429/5xx short in tests.
    headers = {"retry-after-ms": "10", **kw.pop("headers", {})}
    return Reply(status=status, error_body={"error": {"message": message, "type": "server_error"}}, headers=headers)


def slow(seconds: float, reply: Reply | None = None) -> Reply:
    """`reply` (a small valid plan by default) sent only after `seconds`: longer than a test's timeout."""
    base = reply or plan([], done=True)
    base.delay_seconds = seconds
    return base


@dataclass
class Recorded:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]
    # The client's port: requests sent over one kept-alive connection share it (tests of one pooled client).
    peer_port: int = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body.get("messages", [])
        return messages

    @property
    def prompt_chars(self) -> int:
        return sum(len(str(m.get("content") or "")) for m in self.messages)


@dataclass
class FakeLlm:
    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    default: Reply | None = None
    responder: Callable[[Recorded], Reply | None] | None = None
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (…/v1)."""
        return self.url + "/v1"

    def script(self, *replies: Reply) -> FakeLlm:
        with self.lock:
            self.replies.extend(replies)
        return self

    def next_reply(self, request: Recorded | None = None) -> Reply | None:
        with self.lock:
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None and request is not None:
            return self.responder(request)
        return self.default


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
    }
    if reply.usage is not None:
        p, c = reply.usage
        body["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    return body


def _handler(llm: FakeLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and left, as the timeout tests intend

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw or b"{}")
            recorded = Recorded(
                parts.path,
                parse_qs(parts.query),
                {k.lower(): v for k, v in self.headers.items()},
                body,
                self.client_address[1],
            )
            llm.requests.append(recorded)
            segments = parts.path.strip("/").split("/")
            azure = segments[:2] == ["openai", "deployments"] and segments[3:] == ["chat", "completions"]
            if parts.path not in COMPATIBLE_PATHS and not azure:
                self._send(404, {"error": {"message": f"no route {parts.path}"}})
                return
            if azure and "api-version" not in parse_qs(parts.query):
                self._send(400, {"error": {"message": "api-version query parameter is required"}})
                return
            reply = llm.next_reply(recorded)
            if reply is None:
                self._send(500, {"error": {"message": "fake_llm: nothing scripted"}})
                return
            if reply.delay_seconds and llm.stopping.wait(reply.delay_seconds):
                return
            if reply.status != 200:
                self._send(reply.status, reply.error_body or {"error": {"message": "error"}}, reply.headers)
                return
            model = segments[2] if azure else str(body.get("model", ""))
            self._send(200, _completion(reply, model), reply.headers)

    return Handler


@contextmanager
def fake_llm(
    *replies: Reply, default: Reply | None = None, responder: Callable[[Recorded], Reply | None] | None = None
) -> Iterator[FakeLlm]:
    """Serve on a free port for the block; `llm.url` is the origin (Azure endpoint), `llm.base_url` adds /v1."""
    llm = FakeLlm(default=default, responder=responder).script(*replies)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(llm))
    server.daemon_threads = True
    llm.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield llm
    finally:
        llm.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
