"""Readable text of an HTML page in one pass: time linear in the page, text at most about twice its size.

`html.parser` rescans an unclosed tag from every later `<`: on Python 3.11, 128 KiB of `<a x` took a
minute. This scanner follows the HTML tokenizer's states as far as text needs them: a tag ends at the
first `>` outside a quoted attribute value, a comment at `-->` (or `--!>`), a declaration or processing
instruction at `>`, CDATA at `]]>`, script and style content at their end tag; a tag, comment or
quoted value left open runs to the end of the input and shows nothing, as in a browser. Every search
starts where the previous one ended, so each character is read a bounded number of times. Character
references are decoded by `shared.core.html_unescape` (html.unescape's, without its ValueError).

On well-formed pages the output is what the `html.parser` version gave: headings as `#`, list items as
`- `, block elements on their own lines, script, style, head, nav, footer and similar content dropped.
"""

from __future__ import annotations

import re

from shared.core.html_unescape import unescape

BLOCKS = frozenset(
    {"p", "div", "br", "li", "tr", "pre", "section", "article", "ul", "ol", "table", "blockquote", "hr", "dd", "dt"}
)
HEADINGS = {f"h{n}": "#" * n + " " for n in range(1, 7)}
# Elements whose content is not part of the runbook's text (menus, page furniture, code).
SKIPPED = frozenset({"script", "style", "head", "noscript", "svg", "template", "nav", "footer"})
# Elements whose content is raw text up to their end tag (no tags inside), as html.parser treats them.
RAW_TEXT = frozenset({"script", "style"})

# What a start tag adds to the text (an end tag of these adds a line break).
_OPENS = {**dict.fromkeys(BLOCKS, "\n"), "li": "\n- ", **{h: "\n" + prefix for h, prefix in HEADINGS.items()}}
# The next markup: `<` and a letter, `/`, `!` or `?` (any other `<` is text). The common case, a plain tag
# (`<p>`, `</li >`, `<br/>`), is read from the same match: one search per tag of a dense page.
_NEXT = re.compile(r"<(?:(/?)([A-Za-z][A-Za-z0-9]*)[\t\n\f\r ]*(/?)>|[A-Za-z/!?])")
_TAG_NAME = re.compile(r"[A-Za-z][^\t\n\f\r />]*")
_TAG_STOP = re.compile(r"[>=]")
_SPACE = re.compile(r"[\t\n\f\r ]*")
_UNQUOTED = re.compile(r"[^\t\n\f\r >]*")
_COMMENT_END = re.compile(r"--!?>")
_RAW_END = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in RAW_TEXT}
_BLANKS = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def html_to_text(page: str) -> str:
    """Readable text of an HTML page: headings as `#`, list items as `- `, scripts and styles dropped."""
    scanner = _Scanner(page)
    scanner.run()
    lines = [_BLANKS.sub(" ", line).strip() for line in "".join(scanner.parts).split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip() + "\n"


class _Scanner:
    """One pass over a page; `parts` is the text with a newline for each block element's start and end."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.parts: list[str] = []
        self.open_skipped: dict[str, int] = {}  # skipped elements open now, by name
        self.skipping = 0  # their total

    def run(self) -> None:
        page, n, i = self.page, len(self.page), 0
        parts, search = self.parts, _NEXT.search
        while i < n:
            found = search(page, i)
            lt = found.start() if found else n
            if lt > i and not self.skipping:
                parts.append(unescape(page[i:lt]))
            if found is None:
                return
            closing, name, self_closing = found.group(1, 2, 3)
            if name is None:
                i = self.markup(lt)
                continue
            i, name = found.end(), name.lower()
            if name in _OPENS:
                parts.append("\n" if closing else _OPENS[name] + ("\n" if self_closing else ""))
            elif name in SKIPPED:
                i = self.tag(name, closing=bool(closing), self_closing=bool(self_closing), end=i)
            # any other element adds no text of its own

    def markup(self, lt: int) -> int:
        """Read the markup starting with the `<` at `lt`; the index after it (len(page) when left open)."""
        page, n = self.page, len(self.page)
        following = page[lt + 1]
        if following == "!":
            if page.startswith("!--", lt + 1):
                if page.startswith(">", lt + 4) or page.startswith("->", lt + 4):
                    return page.find(">", lt + 4) + 1  # `<!-->`, `<!--->`: an empty comment
                closed = _COMMENT_END.search(page, lt + 4)
                return closed.end() if closed else n
            if page.startswith("![CDATA[", lt + 1):
                return _after(page.find("]]>", lt + 9), n, 3)
            return _after(page.find(">", lt + 2), n)  # <!DOCTYPE ...> and other declarations
        if following == "?":
            return _after(page.find(">", lt + 2), n)
        closing = following == "/"
        name = _TAG_NAME.match(page, lt + 2 if closing else lt + 1)
        if name is None:  # `</` and no letter
            if page.startswith(">", lt + 2):
                return lt + 3  # `</>`: nothing
            return _after(page.find(">", lt + 2), n)  # a bogus comment
        ended = _tag_end(page, name.end())
        if ended is None:
            return n  # an unclosed tag swallows the rest of the page, as in a browser
        end, self_closing = ended
        return self.tag(name.group().lower(), closing=closing, self_closing=self_closing, end=end)

    def tag(self, name: str, *, closing: bool, self_closing: bool, end: int) -> int:
        """Apply a start or end tag that ends at `end`; the index to go on from."""
        if closing:
            self.closed(name)
            return end
        self.opened(name)
        if self_closing:
            self.closed(name)
        elif name in RAW_TEXT:
            # The content is dropped (script and style are skipped elements); an unclosed one runs to the end.
            close = _RAW_END[name].search(self.page, end)
            return len(self.page) if close is None else self.markup(close.start())
        return end

    def opened(self, name: str) -> None:
        if name in SKIPPED:
            self.open_skipped[name] = self.open_skipped.get(name, 0) + 1
            self.skipping += 1
        elif name in _OPENS:
            self.parts.append(_OPENS[name])

    def closed(self, name: str) -> None:
        if name in SKIPPED:
            if self.open_skipped.get(name, 0) > 0:
                self.open_skipped[name] -= 1
                self.skipping -= 1
        elif name in _OPENS:
            self.parts.append("\n")


def _after(found: int, n: int, width: int = 1) -> int:
    """The index after a terminator found at `found` (`width` characters), or `n` when there is none."""
    return n if found < 0 else found + width


def _tag_end(page: str, i: int) -> tuple[int, bool] | None:
    """From just after a tag's name: (the index after its `>`, whether it ended with `/>`), or None when the
    input ends first. Quotes count only around an attribute value (after `=`), as in the HTML tokenizer, so
    between values one search finds the next `>` or `=`."""
    n = len(page)
    while True:
        stop = _TAG_STOP.search(page, i)
        if stop is None:
            return None
        at = stop.start()
        if page[at] == ">":
            return at + 1, at > i and page[at - 1] == "/"
        j = _skip(_SPACE, page, at + 1)
        if j >= n:
            return None
        if page[j] in "\"'":
            close = page.find(page[j], j + 1)
            if close < 0:
                return None
            i = close + 1
        else:
            i = _skip(_UNQUOTED, page, j)  # an unquoted value ends at a space or `>`; `name=>` has none


def _skip(pattern: re.Pattern[str], page: str, i: int) -> int:
    found = pattern.match(page, i)
    assert found is not None  # the patterns passed here all match the empty string
    return found.end()
