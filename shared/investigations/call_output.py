"""One tool call's whole stored output, a page of characters at a time (get_investigation_tool_output).

get_alert_investigation shows each call's first 1,000 characters; the rest is in the record (small outputs)
or in Blob (outputs over the inline limit). This reads either for a member of the investigation's
workspace: another workspace's investigation is NOT_FOUND exactly as an unknown one (the store's read).
Outputs were redacted before they were stored, so what is returned is what the model and the report saw.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from shared.core.errors import NotFound, ValidationFailed
from shared.investigations.models import ROUTE, CallEntry, Iteration
from shared.investigations.store import InvestigationStore, valid_call_key

DEFAULT_OUTPUT_CHARS = 20_000
MAX_OUTPUT_CHARS = 100_000
# No stored output is longer than the Blob cap (bytes >= characters), so no offset past it can be valid.
MAX_OUTPUT_OFFSET = 4 * 1024 * 1024


class CallOutput(BaseModel):
    """One call's output page: the call as planned, and `text` from `offset` up to `limit` characters."""

    investigation_id: str
    call_id: str = Field(description="The call's id in the record: i<iteration>-c<call>.")
    iteration: int
    tool: str
    args: dict[str, Any]
    reason: str
    is_error: bool = Field(description="The tool answered with an error; `text` is its error message.")
    stored_in: Literal["inline", "blob"] = Field(description="inline: in the record; blob: over the inline limit.")
    output_bytes: int = Field(description="UTF-8 size of the output as the tool returned it.")
    truncated: bool = Field(description="The stored output is shorter than what the tool returned (cut at the cap).")
    available: bool = Field(description="False when the stored output is gone (its blob was deleted): `text` is empty.")
    total_chars: int = Field(description="Characters (Unicode code points) of the stored output.")
    offset: int = Field(description="The first character of `text`, counted from 0.")
    text: str
    next_offset: int | None = Field(description="Pass it as `offset` for the next page; null when this is the last.")
    next_action: str


def _call(iterations: list[Iteration], call_id: str) -> tuple[int, CallEntry] | None:
    return next(((it.n, c) for it in iterations for c in it.calls if c.key == call_id), None)


def _no_call(investigation_id: str, call_id: str) -> NotFound:
    return NotFound(
        "no tool call with this id in this investigation",
        details={"investigation_id": investigation_id, "call_id": call_id if valid_call_key(call_id) else None},
        recovery_suggestions=[
            "get_alert_investigation (GET /api/investigations/{id}) lists each call's call_id, e.g. 'i1-c2'."
        ],
    )


async def _stored_text(store: InvestigationStore, workspace: str, call: CallEntry) -> tuple[str, bool]:
    """The call's whole stored output and whether it is there (an offloaded output's blob may be gone)."""
    if call.output is not None:
        return call.output, True
    if not call.output_ref:
        return "", True  # a call that returned nothing
    try:
        return await store.read_output(workspace, call.output_ref), True
    except NotFound:
        return "", False


async def read_call_output(
    store: InvestigationStore,
    workspace: str,
    investigation_id: str,
    call_id: str,
    *,
    offset: int = 0,
    limit: int = DEFAULT_OUTPUT_CHARS,
) -> CallOutput:
    """Characters `offset`..`offset+limit` of one call's stored output, with the call it came from.

    NotFound for an investigation not in `workspace` (same answer as an unknown id) and for a call id the
    record does not hold; ValidationFailed for an offset past the end of the output.
    """
    record = await store.get(workspace, investigation_id)
    found = _call(record.iterations, call_id)
    if found is None:
        raise _no_call(record.id, call_id)
    n, call = found
    text, available = await _stored_text(store, workspace, call)
    total = len(text)
    if offset > total:
        raise ValidationFailed.on_field(
            "offset",
            f"past the end ({total} characters)",
            f"offset {offset} is past the end of the output ({total} characters)",
            suggestions=[f"Pass an offset from 0 to {total}; start at 0 and follow next_offset."],
        )
    page = text[offset : offset + limit]
    end = offset + len(page)
    next_offset = end if end < total else None
    if next_offset is not None:
        next_action = f"More follows: call again with offset {next_offset} ({total - end} characters left)."
    elif not available:
        next_action = "The stored output is gone; start a new investigation to run the tool again."
    else:
        next_action = f"This is the end of the output. The investigation: GET {ROUTE}{record.id}."
    return CallOutput(
        investigation_id=record.id,
        call_id=call.key,
        iteration=n,
        tool=call.tool,
        args=call.args,
        reason=call.reason,
        is_error=call.is_error,
        stored_in="inline" if call.output_ref is None else "blob",
        output_bytes=call.output_bytes,
        truncated=call.truncated,
        available=available,
        total_chars=total,
        offset=offset,
        text=page,
        next_offset=next_offset,
        next_action=next_action,
    )
