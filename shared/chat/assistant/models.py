"""What the assistant is given and what it answers (the chat service stores the answer as it is)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.chat.assistant.calls import ToolCallRecord

__all__ = [
    "AssistantLimits",
    "AssistantReply",
    "HeldChange",
    "HistoryMessage",
    "PendingConfirmation",
    "ToolCallRecord",
]


class HistoryMessage(BaseModel):
    """One earlier message of the chat, oldest first."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    message: str
    timestamp: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class PendingConfirmation(BaseModel):
    """A delete preview waiting for the user's yes: kept in the assistant message's metadata."""

    token: str = Field(min_length=1, max_length=512)
    selection: dict[str, Any]
    count: int = Field(ge=0)
    expires_at: str = ""


class HeldChange(BaseModel):
    """A change the model asked for on tasks the user did not name: not run, kept in the answer's metadata
    (`held_changes`) and run exactly as described if the user's next message is "yes"."""

    model_config = ConfigDict(extra="ignore")

    tool: Literal["update_task", "update_task_status", "set_task_preferences"]
    arguments: dict[str, Any]
    what: str = Field(max_length=1_000, description="The change in words, from the store's titles.")


class AssistantReply(BaseModel):
    """The assistant's answer to one message: its text, the tool calls made, the tasks they touched."""

    text: str
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)
    mode: Literal["llm", "rules", "refusal"]
    metadata: dict[str, Any] = Field(default_factory=dict)


class AssistantLimits(BaseModel):
    """Bounds of one answer on the LLM path."""

    model_config = ConfigDict(frozen=True)

    max_tool_rounds: int = Field(4, ge=1, le=10, description="Model turns that may call tools.")
    max_calls_per_round: int = Field(5, ge=1, le=20)
    history_tokens: int = Field(6_000, ge=500, description="The chat history given to the model, in tokens.")
    message_chars: int = Field(4_000, ge=200, description="One history message at most (longer ones are cut).")
    tool_output_chars: int = Field(6_000, ge=500, description="One tool result as the model sees it.")
    tool_description_chars: int = Field(1_000, ge=100)
