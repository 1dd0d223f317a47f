"""An OpenAI-compatible embeddings server on 127.0.0.1 (`POST /v1/embeddings`), recording every request.

Each text becomes a bag of its words hashed into DIMENSIONS buckets, after `synonyms` maps words to a shared
meaning, so a test decides which wordings "mean" the same. `fail_with` makes every request answer that
HTTP status instead."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 64


@dataclass
class FakeEmbeddings:
    synonyms: dict[str, str] = field(default_factory=dict)
    fail_with: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * DIMENSIONS
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            word = self.synonyms.get(word, word)
            out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
        return out


@contextmanager
def serve(fake: FakeEmbeddings) -> Iterator[FakeEmbeddings]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
            fake.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("authorization")})
            if self.path != "/v1/embeddings" or fake.fail_with:
                self._send(fake.fail_with or 404, {"error": {"message": "failing on purpose", "type": "server_error"}})
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [{"object": "embedding", "index": i, "embedding": fake.vector(t)} for i, t in enumerate(texts)]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            self._send(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
