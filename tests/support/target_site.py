"""A site to probe for collect.run tests: a real HTTP(S) server on 127.0.0.1 that records what it receives."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Site:
    url: str
    requests: list[dict] = field(default_factory=list)
    # /gate answers once this is set (or after 60 s): a test decides when a probe's wait ends.
    gate: threading.Event = field(default_factory=threading.Event)


def self_signed(directory: Path, *, with_ip: bool = True) -> tuple[Path, Path]:
    """A certificate for localhost (and 127.0.0.1 unless `with_ip` is False); hosts under test trust it through
    SSL_CERT_FILE. Without the IP, a TLS check against the address rather than the name fails."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost")] + ([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))] if with_ip else [])
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@contextmanager
def target_site(tls_dir: Path | None = None) -> Iterator[tuple[Site, Path | None]]:
    """Routes: /health (fast), /slow?ms=N (sleeps N ms before answering), /gate (answers once `site.gate` is set),
    /boom (500); records path and headers."""
    site = Site(url="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            site.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
            status, body = 200, b"ok\n" * 100
            if self.path.startswith("/slow"):
                ms = int(self.path.split("ms=", 1)[1].split("&", 1)[0]) if "ms=" in self.path else 300
                time.sleep(ms / 1000)
            elif self.path.startswith("/gate"):
                site.gate.wait(60)
            elif self.path.startswith("/boom"):
                status = 500
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the probe gave up (its timeout test): the client is gone, as intended

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    cert = None
    if tls_dir is not None:
        cert, key = self_signed(tls_dir)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    site.url = f"{'https' if tls_dir else 'http'}://127.0.0.1:{server.server_port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield site, cert
    finally:
        server.shutdown()
