"""An EC2 instance metadata service (IMDSv2) on 127.0.0.1 that hands out role credentials and records every request.

It speaks what botocore's `InstanceMetadataFetcher` and `IMDSRegionProvider` ask for: `PUT /latest/api/token`
(a session token), `GET /latest/meta-data/iam/security-credentials/` (the role name), `GET .../<role>` (the
credentials as JSON) and `GET /latest/meta-data/placement/region`. Point botocore at it with
`AWS_EC2_METADATA_SERVICE_ENDPOINT=<url>`; a test that must never reach IMDS asserts `requests == []`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROLE = "firebreak-worker"
# Credentials moto accepts (it does not check signatures): a fetch that used them would succeed, as it would on EC2.
ROLE_KEY_ID = "ASIAIMDSDOUBLE000001"
ROLE_SECRET = "imds-double-secret-access-key-0000000000"
ROLE_SESSION = "imds-double-session-token"


@dataclass
class ImdsDouble:
    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)


def _handler(double: ImdsDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(self, status: int, body: str, content_type: str = "text/plain") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self) -> None:  # the http.server hook name
            double.requests.append(("PUT", self.path))
            if self.path == "/latest/api/token":
                self._send(200, "imds-session-token")
            else:
                self._send(404, "")

        def do_GET(self) -> None:  # the http.server hook name
            double.requests.append(("GET", self.path))
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == base:
                self._send(200, ROLE)
            elif self.path == base + ROLE:
                creds = {
                    "Code": "Success",
                    "Type": "AWS-HMAC",
                    "AccessKeyId": ROLE_KEY_ID,
                    "SecretAccessKey": ROLE_SECRET,
                    "Token": ROLE_SESSION,
                    "Expiration": "2099-01-01T00:00:00Z",
                    "LastUpdated": "2024-01-01T00:00:00Z",
                }
                self._send(200, json.dumps(creds), "application/json")
            elif self.path == "/latest/meta-data/placement/region":
                self._send(200, "us-east-1")
            else:
                self._send(404, "")

    return Handler


@contextmanager
def imds_double() -> Iterator[ImdsDouble]:
    """Serve on a free port of 127.0.0.1 until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    double = ImdsDouble(url=f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(double)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
