"""The part of a log that is read: its head (where the program starts) and its tail, within fixed bounds."""

from __future__ import annotations

from dataclasses import dataclass

from shared.investigations.rules.log_vocabulary import LINE_CHARS

# A log longer than the bounds is read as its first HEAD_LINES lines (from its first HEAD_CHARS characters: the
# start and its first errors) and its last MAX_LINES - HEAD_LINES lines (from its last MAX_CHARS - HEAD_CHARS
# characters: where it ended), so the work stays bounded whatever a tool returns. Lines are cut at LINE_CHARS
# before any pattern runs over them.
MAX_LINES = 2000
MAX_CHARS = 512 * 1024
HEAD_LINES = 200
HEAD_CHARS = 64 * 1024


@dataclass(frozen=True)
class Window:
    """The lines read, how many characters they came from, and where the unread middle is."""

    lines: list[str]
    chars: int
    head_lines: int  # lines before the unread middle; 0 when the whole log was read
    truncated: bool


def _cut(parts: list[str]) -> list[str]:
    return [p.rstrip()[:LINE_CHARS] for p in parts]


def read_window(text: str) -> Window:
    """The whole text when it fits the bounds, else its head and its tail (whole lines only)."""
    if len(text) <= MAX_CHARS and text.count("\n") < MAX_LINES:
        return Window(_cut(text.split("\n")), len(text), 0, False)
    tail_lines = MAX_LINES - HEAD_LINES
    start = len(text) - (MAX_CHARS - HEAD_CHARS)
    if start > 0:  # the window starts inside a line: begin at the next one
        newline = text.find("\n", start)
        start = newline + 1 if newline >= 0 else len(text)
    start = max(start, 0)
    tail = text[start:].rsplit("\n", tail_lines)
    if len(tail) > tail_lines:  # rsplit left everything before the last lines in the first part
        start += len(tail[0]) + 1
        tail = tail[1:]
    head_end = min(start, HEAD_CHARS)
    head = text[:head_end].split("\n", HEAD_LINES)
    # The last part is the rest of the chunk: beyond HEAD_LINES, or a line the chunk cut, unless the head meets
    # the tail exactly.
    head = head[:-1] if len(head) > HEAD_LINES or head_end < start else head
    if head and head_end == start and head[-1] == "":
        head = head[:-1]  # the newline before the tail
    return Window(_cut(head + tail), head_end + len(text) - start, len(head), True)
