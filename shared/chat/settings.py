"""Settings of the chat capability (FIREBREAK_CHAT_*)."""

from __future__ import annotations

from pydantic import Field

from shared.core.settings import SettingsSection


class ChatSettings(SettingsSection):
    env_prefix = "chat_"

    assistant_history: int = Field(
        20,
        ge=1,
        le=100,
        description="How many earlier messages of the chat the assistant is given with each new message.",
    )
