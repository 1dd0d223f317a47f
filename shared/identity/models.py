"""The principal every request resolves to; all data is partitioned by its workspace or user."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, Field


class Principal(BaseModel):
    """A caller: the workspace its data lives in and the user acting in it."""

    model_config = {"frozen": True}

    workspace_id: str = Field(min_length=1, max_length=128)
    user_id: str = Field(min_length=1, max_length=128)
    source: Literal["entra", "appservice", "api_key", "dev"]
    key_id: str | None = None

    @property
    def owner_key(self) -> str:
        """The user-in-a-workspace as one opaque key (a partition key for per-user data): the first 32 hex
        digits of sha256(workspace_id + "\n" + user_id). Lower-case hex, so it is safe anywhere in a query."""
        return hashlib.sha256(f"{self.workspace_id}\n{self.user_id}".encode()).hexdigest()[:32]


class ApiKeyDoc(BaseModel):
    """A stored workspace API key: only the SHA-256 of the secret is kept."""

    id: str
    workspace_id: str
    user_id: str
    name: str = ""
    secret_sha256: str
    created_at: str
    revoked: bool = False


class MintedKey(BaseModel):
    """What minting returns: the key itself, shown exactly once."""

    key: str
    key_id: str
    workspace_id: str
    user_id: str
