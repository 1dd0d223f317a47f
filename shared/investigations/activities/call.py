"""The call activity: make one planned tool call and record it (the output inline, or in Blob past the limit)."""

from __future__ import annotations

import asyncio

from shared.core.redaction import redact_text
from shared.investigations.activities.payloads import CallDone, CallRequest
from shared.investigations.activities.runtime import runtime
from shared.investigations.activities.state import stored_catalogue
from shared.investigations.mcp_servers import call_tool
from shared.investigations.models import CallEntry
from shared.tools.capability import ActiveRun
from shared.tools.deps import Deps


async def call(run: ActiveRun, args: CallRequest, deps: Deps) -> CallDone:
    """Activity: make one planned tool call and record it (the output inline, or in Blob past the limit)."""
    rt = runtime(run, deps)
    n, planned = args.n, args
    raw = await rt.deps.blobs.get(rt.blob("tools.json"))
    catalogue = await stored_catalogue(rt, raw)
    mcp = rt.settings.mcp(running_on_azure=rt.deps.settings.running_on_azure)
    result = await call_tool(
        mcp.servers,
        catalogue,
        planned.tool,
        planned.args,
        guard=rt.mcp_guard,
        allow_stdio=mcp.allow_stdio,
        timeout_s=mcp.call_timeout_seconds,
        max_output_bytes=mcp.max_output_bytes,
        max_response_bytes=mcp.max_response_bytes,
    )
    # A tool can answer with what it should not (an env listing, a Secret, a log line with a token): the
    # output is kept, shown to the workspace and sent to the model, so secret-looking values go first.
    text = await asyncio.to_thread(redact_text, result.text)
    stored = await rt.store.put_output(rt.ws, rt.id, planned.key, text)
    entry = CallEntry(
        key=planned.key,
        tool=planned.tool[:256],
        args=planned.args,
        reason=planned.reason,
        output=stored.output,
        output_ref=stored.output_ref,
        output_bytes=result.output_bytes or stored.output_bytes,
        is_error=result.is_error,
        truncated=result.truncated or stored.truncated,
        duration_ms=int(result.duration_ms),
    )
    await rt.store.put_call(rt.ws, rt.id, n, entry)
    return CallDone(
        key=planned.key,
        tool=planned.tool,
        ok=not result.is_error,
        error_kind=result.error_kind,
        bytes=result.output_bytes,
        data=not result.is_error and bool(text.strip()),
    )
