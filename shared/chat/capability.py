"""Chat: sessions and their messages, stored directly (no AI in the storage path), for the task assistant."""

from __future__ import annotations

from pathlib import Path

from shared.chat.routes import routes
from shared.chat.settings import ChatSettings
from shared.chat.store import CHAT_CONTAINER
from shared.chat.tools import toolset
from shared.tools.capability import Capability

CAPABILITY = Capability(
    name="chat",
    summary="Chat sessions and their history: store and read messages, start and list sessions (your own only).",
    toolset=toolset,
    routes=routes,
    settings=ChatSettings,
    containers=(CHAT_CONTAINER,),
    readme=Path(__file__).with_name("README.md"),
)
