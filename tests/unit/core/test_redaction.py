"""One list of secret patterns: values in text, names in structures, and every log record, whatever handler reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.core.redaction import REDACTED, is_secret_name, redact, redact_text

ROOT = Path(__file__).resolve().parents[3]
JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
        (f"token {JWT} seen", JWT.split(".")[1]),
        (f'{{"id_token":"{JWT}"}}', JWT.split(".")[1]),
        (f"jwt={JWT}", JWT.split(".")[1]),
        (f"eyJ-eyJ- {JWT}", JWT.split(".")[1]),
        ("GET /hook?token=TK-1&page=2", "TK-1"),
        ("api_key=AK-1&x=1", "AK-1"),
        ("user=a&password=PW-1", "PW-1"),
        ("access_token=AT-1", "AT-1"),
        ("x-functions-key: FK-1", "FK-1"),
        ("Ocp-Apim-Subscription-Key: SUB-1", "SUB-1"),
        ("AccountName=a;AccountKey=ACCOUNT-KEY==;EndpointSuffix=core.windows.net", "ACCOUNT-KEY"),
        ("Endpoint=sb://x/;SharedAccessKeyName=n;SharedAccessKey=SAK-1", "SAK-1"),
        ("SharedAccessSignature sr=x&sig=SIG-1&se=1", "SIG-1"),
        ("BlobEndpoint=https://a;SharedAccessSignature=sv=1&sig=SIG-2", "SIG-2"),
        ("https://a.blob.core.windows.net/c/b?sv=1&sig=SIG-3", "SIG-3"),
        ("http://h/api/mcp?code=FUNCKEY", "FUNCKEY"),
        ("Bearer tok123", "tok123"),
        ("fbk_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAA"),
        ('{"client_secret": "CS-1"}', "CS-1"),
        ("{'password': 'PW-2'}", "PW-2"),
    ],
)
def test_secret_values_in_text_are_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text",
    ["a basic restart fixed it", "Basic configuration", "error_code=NOT_FOUND", "signature_norm=abc", "max_tokens=5"],
)
def test_prose_and_innocent_pairs_are_kept(text: str) -> None:
    assert redact_text(text) == text


def test_secret_names_for_manifests() -> None:
    assert all(
        is_secret_name(n)
        for n in [
            "Authorization",
            "X-Api-Key",
            "Cookie",
            "x-functions-key",
            "Ocp-Apim-Subscription-Key",
            "X-Auth-Token",
        ]
    )
    assert not any(is_secret_name(n) for n in ["accept", "user-agent", "x-request-id", "content-type", "error_code"])
    assert redact({"headers": {"Authorization": "x", "accept": "y"}}) == {
        "headers": {"Authorization": REDACTED, "accept": "y"}
    }


def test_a_handler_added_after_import_sees_no_secret() -> None:
    """What the Python worker does: import function_app, then install its own root handler, then log."""
    script = r"""
import io, json, logging
import function_app  # importing the app is all the worker does before logging
stream = io.StringIO()
handler = logging.StreamHandler(stream)
handler.setFormatter(logging.Formatter("%(message)s|%(hdr)s|%(password)s"))
root = logging.getLogger()
root.addHandler(handler)
root.setLevel(logging.INFO)
captured = []
class Keep(logging.Handler):
    def emit(self, record):
        captured.append({k: str(v) for k, v in vars(record).items()})
root.addHandler(Keep())
log = logging.getLogger("worker.test")
log.info("call with %s and %s", "Bearer BEARER-SECRET", "https://a/x?sig=SAS-SECRET&code=CODE-SECRET",
         extra={"hdr": "Basic dXNlcjpwYXNzLXNlY3JldA==", "password": "PW-SECRET"})
log.info("key fbk_0123456789abcdef_APIKEYSECRETAPIKEYSECRETAPIKEYSECRET1 jwt %s", "JWT_PLACEHOLDER",
         extra={"hdr": {"x-functions-key": "FK-SECRET"}, "password": None})
try:
    raise RuntimeError("fetch failed: https://h/p?token=TOKEN-SECRET")
except RuntimeError:
    log.exception("boom", extra={"hdr": "AccountKey=ACCOUNT-SECRET;", "password": ""})
print(json.dumps({"text": stream.getvalue(), "records": captured}))
""".replace("JWT_PLACEHOLDER", JWT)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    everything = seen["text"] + json.dumps(seen["records"])
    assert len(seen["records"]) == 3
    assert "boom" in seen["text"]
    assert "RuntimeError" in seen["text"]
    for secret in [
        "BEARER-SECRET",
        "SAS-SECRET",
        "CODE-SECRET",
        "dXNlcjpwYXNzLXNlY3JldA",
        "PW-SECRET",
        "APIKEYSECRET",
        JWT.split(".")[1],
        "FK-SECRET",
        "TOKEN-SECRET",
        "ACCOUNT-SECRET",
    ]:
        assert secret not in everything, secret


def test_installing_twice_wraps_once() -> None:
    import logging

    from shared.core.redaction import install_log_redaction

    install_log_redaction()
    first = logging.getLogRecordFactory()
    install_log_redaction()
    assert logging.getLogRecordFactory() is first


@pytest.mark.parametrize(
    "token",
    [
        "ghp_" + "A1b2" * 9,
        "github_pat_" + "A1b2_" * 10,
        "AKIAIOSFODNN7EXAMPLE",
        "sk-proj-" + "Ab1-" * 8,
        "sk-" + "a" * 40,
        "xoxb-1234567890-0987654321-abcdef",
    ],
)
def test_vendor_tokens_standing_alone_are_redacted(token: str) -> None:
    assert redact_text(f"the value {token} leaked") == "the value [REDACTED] leaked"


def test_words_that_merely_look_alike_are_kept() -> None:
    text = "task-force alpha; desk-sharing rota; AKIA is short; ghp_short"
    assert redact_text(text) == text


def test_prose_url_and_pem_secrets_are_redacted() -> None:
    from shared.core.redaction import redact_text

    assert redact_text("password: hunter2 now") == "password: [REDACTED] now"
    assert redact_text("my password is hunter2, ok") == "my password is [REDACTED], ok"
    assert redact_text("postgres://app:p4ssw0rd@db:5432/x") == "postgres://app:[REDACTED]@db:5432/x"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x+/=\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key {pem} end") == "key [REDACTED] end"
    # Ordinary prose and URLs stay.
    for kept in ("a task: buy milk", "https://example.com/a:b", "the password reset page", "user@example.com"):
        assert redact_text(kept) == kept
