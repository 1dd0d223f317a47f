"""A local OAuth 2.0 / OIDC test double of Entra ID (v2.0 endpoints): a real HTTP server on 127.0.0.1.

URL shapes are Entra's, so clients run the discovery they run against login.microsoftonline.com:

- `GET /<tid>/v2.0/.well-known/openid-configuration` (the RFC 8414 path-inserted probes 404, as on Entra;
  no `registration_endpoint`: Entra has no dynamic client registration)
- `GET /<tid>/oauth2/v2.0/authorize`: a pre-registered public client, a loopback redirect URI (any port), PKCE S256
  required, `state` echoed; `resource` (when sent) must be one of the API app's identifier URIs and every API scope
  `<identifier URI>/<scope>` of that app, else `error=invalid_target` (AADSTS9010010). Consent is automatic; the
  signed-in user and tenant come from `sign_in_as`.
- `POST /<tid>/oauth2/v2.0/token`: single-use codes with PKCE verified; refresh tokens rotate (a used one is dead).
- `GET /<tid>/discovery/v2.0/keys`: the published keys; `rotate()` adds a key and signs with it, `retire(kid)`
  unpublishes one.

Tokens are RS256 v2.0 access tokens shaped like Entra's (`aud` = the API app's client id, `scp`, `azp`, `tid`, `oid`,
`ver`). The `*_token` helpers mint the tokens attacks would use. Run alone: `python -m tests.support.fake_entra`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

OIDC_SCOPES = frozenset({"openid", "profile", "email", "offline_access"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
# Entra's well-known first-party client id of VS Code; pre-registered here as a public client too.
VSCODE_CLIENT_ID = "aebc6443-996d-45c2-90f0-388ff96faa56"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class SignIn:
    """Who the next authorizations sign in as (the test hook behind the automatic consent)."""

    oid: str = "user-oid-1"
    tid: str | None = None  # None: the double's own tenant


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    scopes: list[str]
    oid: str
    tid: str
    created: float = field(default_factory=time.monotonic)


class FakeEntra:
    """An Entra-shaped authorization server for one tenant and one API app registration."""

    def __init__(
        self,
        tenant: str = "tenant-1",
        *,
        app_client_id: str | None = None,
        identifier_uris: list[str] | None = None,
        scope: str = "user_impersonation",
        public_client_ids: list[str] | None = None,
    ) -> None:
        self.tenant = tenant
        self.audience = app_client_id or str(uuid.uuid4())
        self.identifier_uris = list(identifier_uris or [f"api://{self.audience}"])
        self.scope = scope
        self.public_client_id = str(uuid.uuid4())  # "Firebreak CLI": loopback public client
        self.public_client_ids = {self.public_client_id, VSCODE_CLIENT_ID, *(public_client_ids or [])}
        self.sign_in = SignIn()
        self.requests: list[str] = []  # request lines (paths, query included) in order
        self._lock = threading.Lock()
        self._keys: dict[str, rsa.RSAPrivateKey] = {}
        self._published: list[str] = []
        self.kid = ""
        self.rotate()
        self._codes: dict[str, _Grant] = {}
        self._refresh: dict[str, _Grant] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.origin = f"http://127.0.0.1:{self._server.server_port}"
        self.issuer = f"{self.origin}/{tenant}/v2.0"
        self.jwks_url = f"{self.origin}/{tenant}/discovery/v2.0/keys"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    # -- keys ------------------------------------------------------------------------------------------------

    def rotate(self) -> str:
        """Publish a new key and sign with it from now on; the old one stays published until `retire`d."""
        kid = uuid.uuid4().hex
        with self._lock:
            self._keys[kid] = _new_key()
            self._published.append(kid)
            self.kid = kid
        return kid

    def retire(self, kid: str) -> None:
        """Stop publishing `kid` (its private key is kept so tests can still sign with it)."""
        with self._lock:
            self._published = [k for k in self._published if k != kid]

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            published = [(kid, self._keys[kid]) for kid in self._published]
        keys = []
        for kid, key in published:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def public_pem(self, kid: str | None = None) -> bytes:
        return (
            self._keys[kid or self.kid]
            .public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )

    # -- tokens ----------------------------------------------------------------------------------------------

    def claims(self, **overrides: Any) -> dict[str, Any]:
        """A delegated v2.0 access token's claims for the API; an override of None drops the claim."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "tid": self.tenant,
            "oid": self.sign_in.oid,
            "sub": "pairwise-" + self.sign_in.oid,
            "azp": self.public_client_id,
            "scp": self.scope,
            "ver": "2.0",
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, *, key: Any = None, kid: str | None = None, **overrides: Any) -> str:
        """An RS256 token signed by the current key (or `kid`'s, or a foreign `key` under the current kid)."""
        kid = kid or self.kid
        return jwt.encode(self.claims(**overrides), key or self._keys[kid], algorithm="RS256", headers={"kid": kid})

    def app_only_token(self, roles: list[str] | None = None) -> str:
        """A client-credentials token: `roles`, no `scp` (what a daemon gets)."""
        return self.token(scp=None, roles=roles or ["Tools.Execute.All"], azp=str(uuid.uuid4()))

    def alg_none_token(self) -> str:
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": self.kid}).encode())
        return f"{header}.{_b64(json.dumps(self.claims()).encode())}."

    def hs256_with_public_key_token(self) -> str:
        """Key confusion: HMAC-SHA256 keyed with the published RSA public key (PEM), under its kid."""
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": self.kid}).encode())
        payload = _b64(json.dumps(self.claims()).encode())
        signature = hmac.new(self.public_pem(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}"

    def unknown_key_token(self) -> str:
        """Signed by a key the issuer never published, under a kid it never published."""
        return jwt.encode(self.claims(), _new_key(), algorithm="RS256", headers={"kid": uuid.uuid4().hex})

    def forged_kid_token(self) -> str:
        """Signed by a foreign key but naming the published key's kid."""
        return self.token(key=_new_key())

    def no_kid_token(self) -> str:
        return jwt.encode(self.claims(), self._keys[self.kid], algorithm="RS256")

    # -- settings --------------------------------------------------------------------------------------------

    def settings(self) -> dict[str, str]:
        """The app settings that make Firebreak trust this double (JWKS derived from the issuer, as on Entra)."""
        return {"FIREBREAK_ENTRA_AUDIENCE": self.audience, "FIREBREAK_ENTRA_ISSUER": self.issuer}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- the endpoints ---------------------------------------------------------------------------------------

    def _metadata(self) -> dict[str, Any]:
        base = f"{self.origin}/{self.tenant}"
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
            "token_endpoint": f"{base}/oauth2/v2.0/token",
            "jwks_uri": self.jwks_url,
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        }

    def _redirect_ok(self, client_id: str, redirect_uri: str) -> bool:
        parts = urlsplit(redirect_uri)
        # Entra lets a public client's loopback redirect take any port (RFC 8252 §7.3).
        return (
            client_id in self.public_client_ids
            and parts.scheme == "http"
            and parts.hostname is not None
            and (parts.hostname in LOOPBACK_HOSTS or f"[{parts.hostname}]" in LOOPBACK_HOSTS)
        )

    def _api_scope_ok(self, scope: str, resource: str | None) -> bool:
        prefix, _, name = scope.rpartition("/")
        if name != self.scope or prefix not in self.identifier_uris:
            return False
        return resource is None or resource in self.identifier_uris

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """(status, headers, body) of an authorize request: a 302 to the client with code or error, or a 400."""
        client_id, redirect_uri = query.get("client_id", ""), query.get("redirect_uri", "")
        if not self._redirect_ok(client_id, redirect_uri):
            return 400, {}, {"error": "invalid_request", "error_description": "AADSTS50011: redirect URI mismatch"}

        def back(params: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
            if "state" in query:
                params["state"] = query["state"]
            return 302, {"Location": f"{redirect_uri}?{urlencode(params)}"}, {}

        if query.get("response_type") != "code":
            return back({"error": "unsupported_response_type"})
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return back({"error": "invalid_request", "error_description": "AADSTS9002325: PKCE S256 is required"})
        scopes = query.get("scope", "").split()
        api_scopes = [s for s in scopes if s not in OIDC_SCOPES]
        resource = query.get("resource")
        if not api_scopes or not all(self._api_scope_ok(s, resource) for s in api_scopes):
            return back(
                {
                    "error": "invalid_target",
                    "error_description": "AADSTS9010010: The resource parameter provided in the request doesn't "
                    "match with the requested scopes.",
                }
            )
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes[code] = _Grant(
                client_id,
                redirect_uri,
                query["code_challenge"],
                scopes,
                self.sign_in.oid,
                self.sign_in.tid or self.tenant,
            )
        return back({"code": code})

    def _issue(self, grant: _Grant) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(32)
        with self._lock:
            self._refresh[refresh] = grant
        names = sorted({s.rpartition("/")[2] for s in grant.scopes if s not in OIDC_SCOPES})
        access = self.token(oid=grant.oid, tid=grant.tid, azp=grant.client_id, scp=" ".join(names))
        answer: dict[str, Any] = {
            "token_type": "Bearer",
            "access_token": access,
            "expires_in": 3599,
            "scope": " ".join(s for s in grant.scopes if s != "offline_access"),
        }
        if "offline_access" in grant.scopes:
            answer["refresh_token"] = refresh
        return answer

    def exchange(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        def fail(error: str, description: str) -> tuple[int, dict[str, Any]]:
            return 400, {"error": error, "error_description": description}

        kind = form.get("grant_type")
        if kind == "authorization_code":
            with self._lock:
                grant = self._codes.pop(form.get("code", ""), None)
            if grant is None:
                return fail("invalid_grant", "AADSTS54005: the code was already redeemed or is unknown")
            if form.get("client_id") != grant.client_id or form.get("redirect_uri") != grant.redirect_uri:
                return fail("invalid_grant", "AADSTS50148: client or redirect URI differs from the authorize request")
            verifier = form.get("code_verifier", "")
            if _b64(hashlib.sha256(verifier.encode()).digest()) != grant.challenge:
                return fail("invalid_grant", "AADSTS50148: the code_verifier does not match the code_challenge")
            return 200, self._issue(grant)
        if kind == "refresh_token":
            with self._lock:
                grant = self._refresh.pop(form.get("refresh_token", ""), None)
            if grant is None or form.get("client_id") != grant.client_id:
                return fail("invalid_grant", "AADSTS70008: the refresh token is invalid or was already used")
            return 200, self._issue(grant)
        return fail("unsupported_grant_type", "AADSTS70003: unsupported grant type")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                double.requests.append(f"GET {self.path}")
                parts = urlsplit(self.path)
                tenant = f"/{double.tenant}"
                if parts.path == f"{tenant}/v2.0/.well-known/openid-configuration":
                    self._answer(200, double._metadata())
                elif parts.path == f"{tenant}/discovery/v2.0/keys":
                    self._answer(200, double.jwks())
                elif parts.path == f"{tenant}/oauth2/v2.0/authorize":
                    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    status, headers, body = double.authorize(query)
                    self._answer(status, body, headers)
                else:
                    self._answer(404, {"error": "not_found"})

            def do_POST(self) -> None:
                double.requests.append(f"POST {self.path}")
                length = int(self.headers.get("content-length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlsplit(self.path).path == f"/{double.tenant}/oauth2/v2.0/token":
                    status, body = double.exchange(form)
                    self._answer(status, body, {"cache-control": "no-store"})
                else:
                    self._answer(404, {"error": "not_found"})

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def main() -> None:
    """Serve a double until interrupted and print what to set on the app and the client."""
    double = FakeEntra(identifier_uris=["http://127.0.0.1:7071/api/mcp"])
    print(json.dumps({**double.settings(), "public_client_id": double.public_client_id, "issuer": double.issuer}))
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        double.close()


if __name__ == "__main__":
    main()
