"""A test double of Entra ID's signing-key endpoint: a real HTTP server serving a JWKS, plus a token minter."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


class FakeEntra:
    """Serves `/discovery/v2.0/keys` on 127.0.0.1 and signs tokens with the matching private key."""

    def __init__(self, tenant: str = "tenant-1", audience: str = "api://firebreak") -> None:
        self.tenant, self.audience = tenant, audience
        self.issuer = f"https://login.test/{tenant}/v2.0"
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = uuid.uuid4().hex
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        jwks = json.dumps({"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200 if self.path.endswith("/keys") else 404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(jwks if self.path.endswith("/keys") else b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.jwks_url = f"http://127.0.0.1:{self._server.server_port}/discovery/v2.0/keys"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def token(self, *, key: Any = None, **overrides: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": self.audience,
            "tid": self.tenant,
            "oid": "user-oid-1",
            "iat": now,
            "nbf": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, key or self._key, algorithm="RS256", headers={"kid": self.kid})

    def settings(self) -> dict[str, str]:
        return {
            "FIREBREAK_ENTRA_AUDIENCE": self.audience,
            "FIREBREAK_ENTRA_JWKS_URL": self.jwks_url,
            "FIREBREAK_ENTRA_ISSUER": self.issuer,
        }

    def close(self) -> None:
        self._server.shutdown()
