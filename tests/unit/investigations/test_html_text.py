"""The one-pass HTML-to-text converter: html.parser's output on well-formed pages (the oracle, html_text_reference),
a browser's reading of markup left open, and output bounded by the input on anything."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.investigations.html_text import html_to_text
from tests.unit.investigations import html_text_reference

# ---- well-formed pages: the same text as html.parser gave -------------------------------------------------------

_WORDS = st.text(alphabet="abc XYZ\t\n\u00e9\u4e2d>=\"'/;.-", max_size=12)
_ENTITY = st.sampled_from(["&amp;", "&lt;", "&gt;", "&nbsp;", "&#65;", "&#x42;", "&copy;", "&notanentity;", "& "])
_TEXT = st.lists(st.one_of(_WORDS, _ENTITY), max_size=4).map("".join)
_ELEMENTS = [
    "p", "div", "li", "ul", "ol", "h1", "h2", "h6", "b", "a", "span", "code", "pre", "nav", "footer", "head",
    "section", "table", "tr", "td", "blockquote", "dd", "dt", "svg", "template", "noscript", "title", "textarea",
]  # fmt: skip
_VALUE = st.text(alphabet="ab >=/'<", max_size=6)
_ATTR = st.one_of(
    st.tuples(st.sampled_from(["href", "class", "data-x"]), _VALUE).map(lambda kv: f' {kv[0]}="{kv[1]}"'),
    st.tuples(st.sampled_from(["id", "title"]), _VALUE.map(lambda v: v.replace("'", ""))).map(
        lambda kv: f" {kv[0]}='{kv[1]}'"
    ),
    st.sampled_from([" hidden", " x=1", " n=abc", "  lang = en "]),
)


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def build(parts: tuple[str, str, list[str], str]) -> str:
        name, attrs, inner, case = parts
        tag = name.upper() if case == "upper" else name
        return f"<{tag}{attrs}>{''.join(inner)}</{tag}{' ' if case == 'space' else ''}>"

    return st.tuples(
        st.sampled_from(_ELEMENTS),
        st.lists(_ATTR, max_size=2).map("".join),
        st.lists(children, max_size=3),
        st.sampled_from(["lower", "upper", "space"]),
    ).map(build)


_RAW = st.text(alphabet="ab {}();=\n&<>", max_size=10).map(lambda t: t.replace("</", "< /"))
_LEAVES = st.one_of(
    _TEXT,
    st.sampled_from(["<br>", "<br/>", "<BR />", "<hr>", "<img src='a.png' alt=\"x>y\">", "<!-- a comment -->"]),
    _RAW.map(lambda t: f"<script>{t}</script>"),
    _RAW.map(lambda t: f"<style type='text/css'>{t}</STYLE>"),
)
_PAGES = st.recursive(_LEAVES, lambda inner: _element(inner), max_leaves=12).map(
    lambda body: f"<!DOCTYPE html><html><body>{body}</body></html>"
)


@given(_PAGES)
@settings(max_examples=400, deadline=None)
def test_well_formed_pages_read_as_html_parser_read_them(page: str) -> None:
    assert html_to_text(page) == html_text_reference.html_to_text(page)


def test_a_runbook_page_keeps_its_headings_lists_and_blocks() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>t</title><style>h1{}</style></head><body><nav>menu</nav>"
        "<h2>Diagnosis</h2><p>Check the <b>pod</b>&nbsp;events.</p><ul><li>kubectl describe</li>"
        "<li>logs --previous</li></ul><!-- hidden --><script>alert('</p>')</script><footer>(c)</footer></body></html>"
    )
    assert html_to_text(page) == "## Diagnosis\n\nCheck the pod\xa0events.\n\n- kubectl describe\n\n- logs --previous\n"
    assert html_to_text(page) == html_text_reference.html_to_text(page)


# ---- markup left open or malformed: what a browser shows --------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "text"),
    [
        ("<h1>Steps</h1>" + "<a x" * 1000, "# Steps\n"),  # an unclosed tag swallows the rest
        ("<h1>Steps</h1><a title='x>" + "y" * 100, "# Steps\n"),  # so does an unclosed quoted value
        ("<h1>Steps</h1><!-- never closed <p>lost</p>", "# Steps\n"),
        ("<h1>Steps</h1><script>var a = '<p>lost</p>';", "# Steps\n"),
        ("<nav class=x/>menu</nav>text", "text\n"),  # `x/` is the value: not self-closing
        ('<p title="a>b">c</p>', "c\n"),  # `>` inside a quoted value does not end the tag
        ("<p>1 < 2 and 3 <= 4</p>", "1 < 2 and 3 <= 4\n"),  # `<` not followed by a letter is text
        ("<p>a</><![CDATA[ x > y ]]><?php echo 1 ?>b</p>", "ab\n"),
        ("<p>a<!-->b<!--->c</p>", "abc\n"),  # empty comments end at once
        ("<p>a</ p>b</p>", "ab\n"),  # `</ ` opens a bogus comment that ends at `>`
        ("<head><title>t</title><body><p>body text", "\n"),  # an unclosed head hides the rest (as before)
        ("<nav><nav>x</nav>y</nav>z", "z\n"),  # nested skipped elements count per name
        ("<svg/>shown<svg />too", "showntoo\n"),  # self-closing skipped elements close at once
        ("<footer>a</nav>b</footer>c", "c\n"),  # an end tag of another skipped element closes nothing
    ],
)
def test_malformed_markup_reads_as_a_browser_reads_it(page: str, text: str) -> None:
    assert html_to_text(page) == text


def test_a_reference_too_long_for_int_is_a_replacement_character() -> None:
    # html.unescape raised ValueError (int() refuses 4,300 digits) and the whole runbook was lost.
    assert html_to_text("<p>&amp;&#" + "1" * 9999 + ";&lt;</p>") == "&\ufffd<\n"


@given(st.text(alphabet="<>/!?-='\"abp &#;x\n[]CDAT", max_size=300))
@settings(max_examples=500, deadline=None)
def test_any_input_gives_text_no_longer_than_twice_it(page: str) -> None:
    text = html_to_text(page)
    assert text.endswith("\n")
    assert len(text) <= 2 * len(page) + 1


@pytest.mark.parametrize("unit", ["<a x", "<a x='", "<!--", "</a x", "<<", "<p>", "<a ", "&a", "<a =", "<!x"])
def test_hostile_repetitions_convert_at_size(unit: str) -> None:
    # Sizes only (times are in benchmarks/hostile_outside_content.py); html.parser took minutes on several.
    page = unit * (256 * 1024 // len(unit))
    assert len(html_to_text(page)) <= 2 * len(page) + 1
