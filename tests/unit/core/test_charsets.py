"""The charsets an outside server may name: the allow-list, the UTF-8 fallback, decoding in pieces."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.core import charsets


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("utf-8", "utf-8"),
        ("UTF8", "utf-8"),
        ('"utf-8"', "utf-8"),
        ("latin-1", "iso8859-1"),
        ("ISO-8859-15", "iso8859-15"),
        ("windows-1251", "cp1251"),
        ("koi8-r", "koi8-r"),
        ("Shift_JIS", "shift_jis"),
        ("euc-kr", "euc_kr"),
        ("gb18030", "gb18030"),
        ("utf-16le", "utf-16-le"),
        ("us-ascii", "ascii"),
    ],
)
def test_web_charsets_are_allowed(name: str, canonical: str) -> None:
    assert charsets.allowed(name) == canonical


@pytest.mark.parametrize(
    "name",
    [
        "punycode",
        "utf-7",
        "idna",
        "zlib",
        "zlib_codec",
        "base64",
        "rot13",
        "unicode_escape",
        "hex",
        "x-unknown",
        "",
        None,
    ],
)
def test_other_names_fall_back_to_utf8(name: str | None) -> None:
    assert charsets.allowed(name) is None
    assert charsets.choose(name) == "utf-8"


def test_every_allowed_codec_is_a_text_codec() -> None:
    for name in charsets.ALLOWED:
        info = codecs.lookup(name)
        assert info.name == name
        assert getattr(info, "_is_text_encoding", True), name


def test_a_server_chosen_codec_never_runs() -> None:
    body = b"x-" + b"9" * 1000  # punycode would turn this into one code point, slowly
    assert charsets.decode(body, "punycode") == body.decode()
    assert charsets.decode(b"+AGE-", "utf-7") == "+AGE-"
    assert charsets.decode(b"\xff\xfe", "zlib") == "\ufffd\ufffd"


@given(
    st.text(max_size=200),
    st.sampled_from(sorted(charsets.ALLOWED)),
    st.integers(1, 7),
)
@settings(max_examples=300, deadline=None)
def test_decoding_in_pieces_equals_decoding_at_once(text: str, charset: str, piece: int) -> None:
    data = text.encode(charset, errors="replace")
    whole = codecs.decode(data, charset, "replace")
    old, charsets.PIECE_BYTES = charsets.PIECE_BYTES, piece  # tiny pieces cut every character
    try:
        assert charsets.decode(data, charset) == whole
    finally:
        charsets.PIECE_BYTES = old


def test_a_character_cut_by_the_size_limit_is_dropped() -> None:
    data = "café €".encode()
    assert charsets.decode(data[:-1], "utf-8", final=False) == "café "
    assert charsets.decode(data[:-1], "utf-8") == "café \ufffd"
