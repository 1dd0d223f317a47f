"""Character references as html.unescape decodes them, without the ValueError on absurd decimal ones."""

from __future__ import annotations

import html

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.core.html_unescape import unescape


def test_references_decode_as_html_unescape_decodes_them() -> None:
    assert unescape("&amp;&lt;&#65;&#x42;&notit;&copy &#0000000000065; &#x110000; &#0;") == html.unescape(
        "&amp;&lt;&#65;&#x42;&notit;&copy &#0000000000065; &#x110000; &#0;"
    )


def test_a_decimal_reference_too_long_for_int_is_a_replacement_character() -> None:
    assert unescape("a&#" + "9" * 5000 + ";b&amp;") == "a\ufffdb&"
    assert unescape("&#" + "0" * 2000 + "65;") == "A"  # leading zeros name the same code point


@given(st.text(alphabet="&#x;0129aAmp lt", max_size=60))
@settings(max_examples=300, deadline=None)
def test_short_texts_agree_with_html_unescape(text: str) -> None:
    assert unescape(text) == html.unescape(text)
