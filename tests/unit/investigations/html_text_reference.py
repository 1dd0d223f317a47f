"""The html.parser converter that shared/investigations/html_text.py replaced: the oracle for well-formed pages.

Quadratic on unclosed tags (html.parser rescans from every later `<`): give it well-formed pages only.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset(
    {"p", "div", "br", "li", "tr", "pre", "section", "article", "ul", "ol", "table", "blockquote", "hr", "dd", "dt"}
)
_SKIPPED = frozenset({"script", "style", "head", "noscript", "svg", "template", "nav", "footer"})


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skip += 1
        elif tag in _BLOCKS or re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n")
            if tag == "li":
                self.parts.append("- ")
            elif tag[0] == "h" and tag[1:].isdigit():
                self.parts.append("#" * int(tag[1:]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCKS or re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(parser.parts).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
