"""A tolerant reader for the JSON and block YAML that kubectl and kubernetes-mcp-server print.

PyYAML is not a run-time dependency of the app (only tests pull it in), and a tool's output is outside text: this
reader reads the block subset those tools print (mappings, sequences with or without indentation, plain, quoted and
block scalars, `{}`/`[]`) in one pass over the lines, keeps what it could read when the text is cut or broken, and
never recurses deeper than MAX_DEPTH.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 512 * 1024
MAX_DEPTH = 48
_MAX_LINE = 64 * 1024

_INT = re.compile(r"[-+]?\d{1,18}")
_FLOAT = re.compile(r"[-+]?\d{1,18}\.\d{1,18}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "\\": "\\", "/": "/", " ": " ", "e": "\x1b"}


def load(text: str) -> Any:
    """The document the text holds (dicts, lists, str/int/float/bool/None), or None when it holds none.

    JSON first (what `-o json` prints), then block YAML; comment lines before the document are skipped. Never raises.
    """
    text = text[:MAX_CHARS]
    body = _after_comments(text)
    if body[:1] in ("{", "["):
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            pass
    try:
        return _Parser(text).document()
    except (RecursionError, ValueError, IndexError):
        return None


def _after_comments(text: str) -> str:
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end].strip()
        if line and not line.startswith("#") and line != "---":
            return text[pos:].lstrip()
        pos = end + 1
    return ""


@dataclass
class _Line:
    indent: int
    text: str  # without indentation or trailing blanks

    @property
    def content(self) -> str:
        """The text, or "" for a comment line (a block scalar keeps comments as text)."""
        return "" if self.text.startswith("#") else self.text


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith(("- ", "-\t"))


def split_key(content: str) -> tuple[str, str] | None:
    """(key, rest) of a `key: rest` line, or None when the line is not a mapping entry."""
    if not content or content[0] in "-[{#|>!&*%@`,]}":
        return None
    if content[0] in "\"'":
        close = _close_quote(content, 1, content[0])
        if close < 0:
            return None
        after = content[close + 1 :].lstrip()
        if not after.startswith(":") or (len(after) > 1 and after[1] not in " \t"):
            return None
        return _unquote(content[: close + 1]), after[1:].strip()
    j = content.find(":")
    while j >= 0 and j + 1 < len(content) and content[j + 1] not in " \t":
        j = content.find(":", j + 1)
    if j <= 0:
        return None
    key = content[:j].rstrip()
    if " #" in key:
        return None
    return key, content[j + 1 :].strip()


def _close_quote(text: str, start: int, quote: str) -> int:
    """Index of the closing quote from `start`, or -1 (backslash escapes in double quotes, '' in single ones)."""
    i = start
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and i + 1 < len(text) and text[i + 1] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def _unquote(token: str) -> str:
    if token[0] == "'":
        return token[1:-1].replace("''", "'")
    return _unescape(token[1:-1])


def _unescape(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch != "\\" or i + 1 >= len(raw):
            out.append(ch)
            i += 1
            continue
        nxt = raw[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(nxt, 0)
        if width:
            digits = raw[i + 2 : i + 2 + width]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                out.append(digits)
            i += 2 + width
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _typed(plain: str) -> Any:
    if plain in ("", "~", "null", "Null", "NULL"):
        return None
    if plain in ("true", "True", "TRUE"):
        return True
    if plain in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(plain):
        return int(plain)
    if _FLOAT.fullmatch(plain):
        return float(plain)
    return plain


class _Parser:
    """One pass over the lines; each method starts at self.i and leaves it after what it read."""

    def __init__(self, text: str) -> None:
        self.lines: list[_Line] = []
        for raw in text.splitlines():
            raw = raw[:_MAX_LINE].rstrip()
            text = raw.lstrip(" \t")
            self.lines.append(_Line(len(raw) - len(text), text))
        self.i = 0

    def document(self) -> Any:
        self._skip_blank()
        while self.i < len(self.lines) and self.lines[self.i].content in ("---", "..."):
            self.i += 1
            self._skip_blank()
        if self.i >= len(self.lines):
            return None
        return self._node(self.lines[self.i].indent, -1, 0)

    def _skip_blank(self) -> None:
        while self.i < len(self.lines) and not self.lines[self.i].content:
            self.i += 1

    def _node(self, indent: int, parent: int, depth: int) -> Any:
        line = self.lines[self.i]
        if depth > MAX_DEPTH:
            self.i += 1
            while self.i < len(self.lines) and (not self.lines[self.i].content or self.lines[self.i].indent > parent):
                self.i += 1
            return None
        if _is_item(line.content):
            return self._seq(indent, depth)
        if split_key(line.content) is not None:
            return self._map(indent, depth)
        self.i += 1
        return self._scalar(line.content, parent)

    def _seq(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        while True:
            self._skip_blank()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            if line.indent != indent or not _is_item(line.content):
                return out
            rest = line.content[1:].lstrip(" \t")
            if not rest:
                self.i += 1
                out.append(self._nested(indent, depth))
                continue
            # The item's content starts on the dash's line: read it as a node at the column where it starts.
            column = indent + len(line.content) - len(rest)
            self.lines[self.i] = _Line(column, rest)
            out.append(self._node(column, indent, depth + 1))

    def _map(self, indent: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            self._skip_blank()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            if line.indent < indent or (_is_item(line.content) and line.indent == indent):
                return out
            kv = split_key(line.content) if line.indent == indent else None
            self.i += 1
            if kv is None:
                if line.indent == indent:
                    return out
                continue  # a stray deeper line: skipped, the mapping goes on
            out[kv[0]] = self._value(kv[1], indent, depth)

    def _nested(self, indent: int, depth: int) -> Any:
        """The block under a `key:` (or a bare `-`) whose value starts on the next line."""
        self._skip_blank()
        if self.i >= len(self.lines):
            return None
        nxt = self.lines[self.i]
        if nxt.indent > indent:
            return self._node(nxt.indent, indent, depth + 1)
        if nxt.indent == indent and _is_item(nxt.content):
            return self._seq(indent, depth + 1)  # kubectl prints a mapping's sequence at the mapping's indentation
        return None

    def _value(self, rest: str, indent: int, depth: int) -> Any:
        for marker in ("!!", "&"):  # a tag or an anchor before the value: dropped
            if rest.startswith(marker):
                rest = rest.split(" ", 1)[1].lstrip() if " " in rest else ""
        if not rest or rest.startswith("#"):
            return self._nested(indent, depth)
        return self._scalar(rest, indent)

    def _scalar(self, first: str, parent: int) -> Any:
        if first[0] in "|>":
            return self._block_scalar(first, parent)
        if first[0] in "\"'":
            return self._quoted(first, parent)
        if first[0] in "[{":
            return self._flow(first)
        text = first.split(" #", 1)[0].rstrip()
        parts = [text, *(line.content for line in self._continuation(parent))]
        return _typed(_fold(parts)) if len(parts) > 1 else _typed(text)

    def _continuation(self, parent: int, quoted: bool = False) -> list[_Line]:
        """Lines indented deeper than the parent that continue a scalar (blank lines inside it kept as blank).

        Inside quotes a line that starts with `#` is text, not a comment.
        """
        out: list[_Line] = []
        blanks: list[_Line] = []
        j = self.i
        while j < len(self.lines):
            line = self.lines[j]
            j += 1
            if not (line.text if quoted else line.content):
                blanks.append(line)
                continue
            if line.indent <= parent:
                break
            out += [*blanks, line]
            blanks = []
            self.i = j
        return out

    def _quoted(self, first: str, parent: int) -> str:
        quote = first[0]
        close = _close_quote(first, 1, quote)
        if close >= 0:
            return _unquote(first[: close + 1])
        parts = [first[1:]]
        for line in self._continuation(parent, quoted=True):
            if not line.text:
                parts.append("")
                continue
            close = _close_quote(line.text, 0, quote)
            if close >= 0:
                parts.append(line.text[:close])
                break
            parts.append(line.text)
        joined = _fold(parts, escaped_breaks=quote == '"')
        return joined.replace("''", "'") if quote == "'" else _unescape(joined)

    def _block_scalar(self, header: str, parent: int) -> str:
        folded = header[0] == ">"
        chomp = "-" if "-" in header[1:3] else "+" if "+" in header[1:3] else ""
        body: list[str] = []
        base = -1
        j = self.i
        while j < len(self.lines):
            line = self.lines[j]
            if line.text and line.indent <= parent:
                break
            if line.text and base < 0:
                base = line.indent
            body.append(" " * max(line.indent - max(base, 0), 0) + line.text if line.text else "")
            j += 1
        self.i = j
        while body and not body[-1] and chomp != "+":
            body.pop()
        text = _fold(body) if folded else "\n".join(body)
        return text if chomp == "-" else text + "\n"

    def _flow(self, first: str) -> Any:
        text = first.split(" #", 1)[0].strip()
        if text in ("{}", "[]"):
            return {} if text == "{}" else []
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
        if text.startswith("[") and text.endswith("]"):
            return [_typed(_strip_quotes(p.strip())) for p in text[1:-1].split(",") if p.strip()]
        return text


def _strip_quotes(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return _unquote(token)
    return token


def _fold(parts: list[str], escaped_breaks: bool = False) -> str:
    """Lines of a flow scalar joined as YAML folds them: a break is a space, each empty line a newline."""
    out = parts[0]
    blanks = 0
    for part in parts[1:]:
        if not part:
            blanks += 1
            continue
        if blanks:
            out += "\n" * blanks
        elif escaped_breaks and out.endswith("\\") and (len(out) - len(out.rstrip("\\"))) % 2 == 1:
            out = out[:-1]
        else:
            out += " "
        out += part
        blanks = 0
    return out
