"""Text from uploaded files as one inert Markdown table cell or line, for both report kinds.

Names come from uploaded files: inline HTML (<script>, <img>), links and images (a remote image is
fetched by whoever views the report), code spans, table pipes and control characters must not
survive into the Markdown; every one is escaped, so the text reads the same once rendered.
"""

from __future__ import annotations

from typing import Any

_MARKUP = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
        **{chr(c): "\ufffd" for c in (*range(0x20), 0x7F)},
    }
)


def cell(value: Any, limit: int) -> str:
    """`value` on one line (whitespace runs become one space), cut to `limit` characters, then escaped."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text.translate(_MARKUP)
