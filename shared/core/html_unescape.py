"""HTML character references decoded as `html.unescape` decodes them, on text of any length an outsider sends.

`html.unescape` passes a decimal reference's digits to `int()`, which refuses more than 4,300 of them
(ValueError): one `&#999…;` in a page or an answer made the whole text fail. Here a decimal reference of
1,000 digits or more becomes U+FFFD, as any reference past U+10FFFF does; everything else is unchanged.
"""

from __future__ import annotations

import html
import re

_HUGE_DECIMAL = re.compile(r"&#[0-9]{1000}")
_CHARREF = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")  # html.unescape's own
_MAX_CODE_POINT_DIGITS = 8  # more significant digits than this name no code point in either base


def unescape(text: str) -> str:
    """`text` with its character references decoded (linear in `text`, never raises)."""
    if "&" not in text:
        return text
    if _HUGE_DECIMAL.search(text) is None:
        return html.unescape(text)
    return _CHARREF.sub(_one, text)


def _one(match: re.Match[str]) -> str:
    ref = match.group()
    if ref[1] == "#" and len(ref[2:].rstrip(";").lstrip("xX").lstrip("0")) > _MAX_CODE_POINT_DIGITS:
        return "\ufffd"
    return html.unescape(ref)
