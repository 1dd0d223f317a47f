"""The task-only chat assistant: answers one message from the chat's history with the caller's task tools.

`respond(ctx, history, message, llm=...)` decides in this order:
1. a pending delete preview answered "yes"/"no": confirmed or cancelled with rules (no model needed);
2. the guardrail (`guardrail.classify`): an injection attempt or a clearly off-topic message gets the
   spec's polite refusal without asking any model (mode "refusal");
3. with an LLM (the process's one client, `deps.llm()`): the tool-calling loop of `agent.py` (mode "llm");
4. without one: the rule-based intents of `intents.py` / `rules.py` (mode "rules"), which say once that
   richer answers need an LLM.
The assistant never stores messages (the chat service does) and reaches tasks only through the
platform's tool registry, as the caller.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.chat.assistant import agent, rules
from shared.chat.assistant.calls import ALLOWED_TOOLS, ToolCallRecord
from shared.chat.assistant.guardrail import DECLINE_REST, REFUSAL, classify
from shared.chat.assistant.intents import parse_confirmation
from shared.chat.assistant.models import AssistantLimits, AssistantReply, HistoryMessage, PendingConfirmation
from shared.core.llm import LlmClient
from shared.tools.invoke import ToolContext

__all__ = [
    "ALLOWED_TOOLS",
    "REFUSAL",
    "AssistantLimits",
    "AssistantReply",
    "HistoryMessage",
    "PendingConfirmation",
    "ToolCallRecord",
    "respond",
]


async def respond(
    ctx: ToolContext,
    history: Sequence[HistoryMessage],
    message: str,
    *,
    llm: LlmClient | None,
    limits: AssistantLimits | None = None,
) -> AssistantReply:
    """The assistant's answer to `message` (see the module docstring for the order of decisions)."""
    limits = limits or AssistantLimits()
    confirmed = await rules.confirm_or_cancel(ctx, message, history)
    if confirmed is not None:
        return confirmed
    if llm is None and parse_confirmation(message) is not None:
        # A yes or no with nothing waiting for it (already used, lapsed, or never asked): say so, run nothing.
        return AssistantReply(text=rules.NOTHING_PENDING, mode="rules")
    verdict = classify(message)
    if verdict.refuse:
        return AssistantReply(text=REFUSAL, mode="refusal")
    if llm is not None:
        return await agent.answer(ctx, history, message, llm, limits, now=ctx.deps.clock(), mixed=verdict.mixed)
    # Without a model, an unclear message still gets the rules ("find milk" has no task word but is a search).
    reply = await rules.answer(ctx, message, history, note_llm=True, verdict=verdict)
    if verdict.mixed:
        reply.text = f"{reply.text}\n\n{DECLINE_REST}"
    return reply
