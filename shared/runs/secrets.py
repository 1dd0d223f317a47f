"""Run secrets at rest: AES-256-GCM under FIREBREAK_SECRETS_KEY, bound to their run and workspace.

A run's secrets (collect.run header values, URL paths whose query strings are not recorded) never
travel through Durable: the record names a secrets document, and only the activity that needs the
values decrypts them. The associated data ties a ciphertext to one run of one workspace, so a
document copied onto another run or workspace does not decrypt.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from shared.core.errors import NotConfigured
from shared.core.settings import Settings
from shared.runs.settings import RunSettings

SETTING = "FIREBREAK_SECRETS_KEY"


class SecretBox:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    @staticmethod
    def _aad(workspace_id: str, run_id: str) -> bytes:
        return json.dumps(["firebreak-run-secrets/1", workspace_id, run_id]).encode()

    def seal(self, values: dict[str, Any], workspace_id: str, run_id: str) -> dict[str, str]:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(
            nonce, json.dumps(values, separators=(",", ":")).encode(), self._aad(workspace_id, run_id)
        )
        return {
            "alg": "A256GCM",
            "nonce": base64.b64encode(nonce).decode(),
            "ciphertext": base64.b64encode(sealed).decode(),
        }

    def open(self, sealed: dict[str, str], workspace_id: str, run_id: str) -> dict[str, Any]:
        """The values; raises ValueError when the document was altered, moved or sealed under another key."""
        try:
            plain = self._aead.decrypt(
                base64.b64decode(sealed["nonce"]),
                base64.b64decode(sealed["ciphertext"]),
                self._aad(workspace_id, run_id),
            )
        except (InvalidTag, KeyError, binascii.Error) as exc:
            raise ValueError("run secrets do not decrypt for this run") from exc
        values: dict[str, Any] = json.loads(plain)  # what seal() encrypted: authenticated, so a dict
        return values


def secret_box(settings: Settings) -> SecretBox:
    """The box for this deployment; NOT_CONFIGURED naming the setting when the key is missing or malformed."""
    raw = settings.section(RunSettings).secrets_key
    try:
        key = base64.b64decode(raw or "", validate=True)
    except binascii.Error:
        key = b""
    if len(key) != 32:
        raise NotConfigured(
            f"This run needs to keep secrets (header values or query strings) and {SETTING}"
            f" is {'not set' if not raw else 'not 32 bytes of base64'}.",
            details={"setting": SETTING},
            recovery_suggestions=[
                (
                    f"Set {SETTING} to 32 random bytes in base64"
                    ' (python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"),'
                    " or call again without secret headers and query strings."
                )
            ],
        )
    return SecretBox(key)
